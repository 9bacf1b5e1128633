//! Output kept within a cap: the first half of the cap and the last half, the middle counted
//! and dropped. Agent CLIs put their final answer last (Codex's JSON lines end with the agent
//! message after arbitrarily long command output), and a diagnosis needs the beginning.

use std::collections::VecDeque;

pub(crate) struct Capture {
    head_cap: usize,
    tail_cap: usize,
    head: Vec<u8>,
    tail: VecDeque<u8>,
    dropped: u64,
}

impl Capture {
    pub fn new(cap: usize) -> Self {
        let head_cap = cap / 2;
        Capture {
            head_cap,
            tail_cap: cap - head_cap,
            head: Vec::new(),
            tail: VecDeque::new(),
            dropped: 0,
        }
    }

    pub fn push(&mut self, data: &[u8]) {
        let room = self
            .head_cap
            .saturating_sub(self.head.len())
            .min(data.len());
        let (head, rest) = data.split_at_checked(room).unwrap_or((data, &[]));
        self.head.extend_from_slice(head);
        if rest.is_empty() {
            return;
        }
        let keep_from = rest.len().saturating_sub(self.tail_cap);
        let (skipped, kept) = rest.split_at_checked(keep_from).unwrap_or((&[], rest));
        let overflow = (self.tail.len() + kept.len()).saturating_sub(self.tail_cap);
        self.tail.drain(..overflow.min(self.tail.len()));
        self.tail.extend(kept);
        self.dropped += to_u64(skipped.len()) + to_u64(overflow);
    }

    /// The kept bytes (head then tail) and how many were dropped between them.
    pub fn finish(self) -> (Vec<u8>, u64) {
        let mut out = self.head;
        out.extend(self.tail);
        (out, self.dropped)
    }
}

fn to_u64(n: usize) -> u64 {
    u64::try_from(n).unwrap_or(u64::MAX)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use super::*;

    fn captured(cap: usize, chunks: &[&[u8]]) -> (Vec<u8>, u64) {
        let mut c = Capture::new(cap);
        for chunk in chunks {
            c.push(chunk);
        }
        c.finish()
    }

    #[test]
    fn keeps_everything_up_to_the_cap() {
        assert_eq!(captured(8, &[b"abc", b"defgh"]), (b"abcdefgh".to_vec(), 0));
        assert_eq!(captured(8, &[]), (Vec::new(), 0));
        assert_eq!(captured(0, &[b"abc"]), (Vec::new(), 3));
    }

    #[test]
    fn keeps_head_and_tail_beyond_it() {
        assert_eq!(captured(4, &[b"abcdefgh"]), (b"abgh".to_vec(), 4));
        assert_eq!(
            captured(4, &[b"a", b"b", b"c", b"d", b"e", b"f"]),
            (b"abef".to_vec(), 2)
        );
        assert_eq!(captured(5, &[b"abcdefghij", b"kl"]), (b"abjkl".to_vec(), 7));
    }

    #[test]
    fn byte_counts_add_up_for_any_chunking() {
        let data: Vec<u8> = (0..=255u8).cycle().take(10_000).collect();
        for cap in [0, 1, 7, 64, 4096, 10_000, 20_000] {
            for size in [1, 3, 100, 4096, 10_000] {
                let chunks: Vec<&[u8]> = data.chunks(size).collect();
                let (kept, dropped) = captured(cap, &chunks);
                assert_eq!(kept.len() as u64 + dropped, data.len() as u64);
                assert_eq!(kept.len(), cap.min(data.len()));
                let head = cap / 2;
                assert_eq!(kept[..head.min(kept.len())], data[..head.min(kept.len())]);
                let tail = kept.len() - head.min(kept.len());
                assert_eq!(kept[kept.len() - tail..], data[data.len() - tail..]);
            }
        }
    }
}
