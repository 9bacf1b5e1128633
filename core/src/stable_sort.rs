//! Sorting through one shared instantiation of the standard library's sort.
//!
//! Every `sort_by`/`sort_by_key` call with its own closure stamps out another copy of the
//! standard sort (several KB each in the wasm build). Here only the index permutation is
//! generic; the sort itself runs once, on indices, behind a `dyn` comparator. Stable.

use std::cmp::Ordering;

/// Stable sort of `items` by `cmp`.
pub fn sort_by<T>(items: &mut Vec<T>, cmp: impl Fn(&T, &T) -> Ordering) {
    // Already in order (the common case for ledgers listed by issue): nothing to move.
    if items
        .windows(2)
        .all(|w| matches!(w, [a, b] if cmp(a, b) != Ordering::Greater))
    {
        return;
    }
    let mut order: Vec<usize> = (0..items.len()).collect();
    {
        let view: &[T] = items;
        let by_index = |a: usize, b: usize| match (view.get(a), view.get(b)) {
            (Some(x), Some(y)) => cmp(x, y),
            _ => Ordering::Equal,
        };
        sort_indices(&mut order, &by_index);
    }
    let mut slots: Vec<Option<T>> = items.drain(..).map(Some).collect();
    items.extend(
        order
            .iter()
            .filter_map(|&i| slots.get_mut(i).and_then(Option::take)),
    );
}

/// Stable sort of `items` by a key.
pub fn sort_by_key<T, K: Ord>(items: &mut Vec<T>, key: impl Fn(&T) -> K) {
    sort_by(items, |a, b| key(a).cmp(&key(b)));
}

/// Sorts, then removes consecutive duplicates.
pub fn sort_dedup<T: Ord>(items: &mut Vec<T>) {
    sort_by(items, Ord::cmp);
    items.dedup();
}

fn sort_indices(order: &mut [usize], cmp: &dyn Fn(usize, usize) -> Ordering) {
    order.sort_by(|a, b| cmp(*a, *b));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorts_stably() {
        let mut v = vec![(2, 'a'), (1, 'b'), (2, 'c'), (0, 'd'), (1, 'e')];
        sort_by_key(&mut v, |p| p.0);
        assert_eq!(v, vec![(0, 'd'), (1, 'b'), (1, 'e'), (2, 'a'), (2, 'c')]);
        let mut w = vec!["b", "a", "b", "c", "a"];
        sort_dedup(&mut w);
        assert_eq!(w, vec!["a", "b", "c"]);
        let mut empty: Vec<u8> = Vec::new();
        sort_dedup(&mut empty);
        assert!(empty.is_empty());
    }
}
