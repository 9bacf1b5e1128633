//! `SortedMap`: a map kept as a `Vec` of pairs sorted by key, for the small maps the core
//! keys by name (keys held, capabilities counted). In the wasm package every `BTreeMap<K, V>`
//! with its own `K, V` stamps out its own node insert, split, rebalance, iterate and drop code
//! (24 KB of it went with issue 13, docs/benchmarks.md); a sorted vector reuses the `Vec`
//! code already there.
//! Lookups are binary searches; an insert shifts the tail, which is cheap at these sizes.

/// Pairs sorted by key, each key once. Iterates in key order, as a `BTreeMap` does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SortedMap<K, V>(Vec<(K, V)>);

impl<K, V> Default for SortedMap<K, V> {
    fn default() -> Self {
        SortedMap(Vec::new())
    }
}

impl<K: Ord, V> SortedMap<K, V> {
    pub fn new() -> Self {
        SortedMap::default()
    }

    fn find<Q: Ord + ?Sized>(&self, key: &Q) -> Result<usize, usize>
    where
        K: std::borrow::Borrow<Q>,
    {
        self.0.binary_search_by(|(k, _)| k.borrow().cmp(key))
    }

    pub fn get<Q: Ord + ?Sized>(&self, key: &Q) -> Option<&V>
    where
        K: std::borrow::Borrow<Q>,
    {
        self.get_key_value(key).map(|(_, v)| v)
    }

    pub fn get_key_value<Q: Ord + ?Sized>(&self, key: &Q) -> Option<(&K, &V)>
    where
        K: std::borrow::Borrow<Q>,
    {
        let i = self.find(key).ok()?;
        self.0.get(i).map(|(k, v)| (k, v))
    }

    pub fn contains_key<Q: Ord + ?Sized>(&self, key: &Q) -> bool
    where
        K: std::borrow::Borrow<Q>,
    {
        self.find(key).is_ok()
    }

    /// Sets `key` to `value`, replacing what was there.
    pub fn insert(&mut self, key: K, value: V) {
        match self.find(&key) {
            Ok(i) => {
                if let Some(slot) = self.0.get_mut(i) {
                    slot.1 = value;
                }
            }
            Err(i) => self.0.insert(i, (key, value)),
        }
    }

    /// Changes the value of `key` with `change`, starting from `default()` when absent.
    pub fn update(&mut self, key: K, default: impl FnOnce() -> V, change: impl FnOnce(&mut V)) {
        let i = match self.find(&key) {
            Ok(i) => i,
            Err(i) => {
                self.0.insert(i, (key, default()));
                i
            }
        };
        if let Some((_, v)) = self.0.get_mut(i) {
            change(v);
        }
    }

    /// Every pair, in key order.
    pub fn iter(&self) -> impl Iterator<Item = (&K, &V)> {
        self.0.iter().map(|(k, v)| (k, v))
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl<K: Ord, V> FromIterator<(K, V)> for SortedMap<K, V> {
    /// Later pairs for the same key replace earlier ones, as in a `BTreeMap`.
    fn from_iter<I: IntoIterator<Item = (K, V)>>(pairs: I) -> Self {
        let mut map = SortedMap::new();
        for (k, v) in pairs {
            map.insert(k, v);
        }
        map
    }
}

impl<K: serde::Serialize, V: serde::Serialize> serde::Serialize for SortedMap<K, V> {
    /// An object in key order, as a `BTreeMap` is written.
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(self.0.iter().map(|(k, v)| (k, v)))
    }
}

impl<K, V> IntoIterator for SortedMap<K, V> {
    type Item = (K, V);
    type IntoIter = std::vec::IntoIter<(K, V)>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_keys_sorted_and_unique_like_a_btreemap() {
        let pairs = [("b", 1), ("a", 2), ("c", 3), ("a", 4), ("b", 5)];
        let map: SortedMap<&str, i32> = pairs.into_iter().collect();
        let tree: std::collections::BTreeMap<&str, i32> = pairs.into_iter().collect();
        assert_eq!(
            map.iter().collect::<Vec<_>>(),
            tree.iter().collect::<Vec<_>>()
        );
        assert_eq!(map.get("a"), Some(&4));
        assert!(map.contains_key("c") && !map.contains_key("z"));
        assert_eq!(
            serde_json::to_string(&map).unwrap(),
            serde_json::to_string(&tree).unwrap()
        );
        assert_eq!(map.get("z"), None);
        assert_eq!(map.len(), 3);
    }

    #[test]
    fn update_starts_from_the_default() {
        let mut counts: SortedMap<String, usize> = SortedMap::new();
        for name in ["x", "y", "x", "x"] {
            counts.update(name.to_owned(), || 0, |n| *n += 1);
        }
        assert_eq!(
            counts.into_iter().collect::<Vec<_>>(),
            vec![(String::from("x"), 3), (String::from("y"), 1)]
        );
    }
}
