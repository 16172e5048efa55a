//! Lanes: several short chunks merged side by side, so that their pair-index reads overlap.
//!
//! The rescan (`small`) merges one chunk at a time: each merge needs two pair-index reads (a
//! random read of a 4 MB table for o200k_base), and it hides their wait only when it guesses
//! the next merge right. Here up to `LANES` chunks take turns: a lane does one merge, starts
//! loading the ranks of its two new pairs, and reads them on its next turn, after the other
//! lanes' merges have hidden the wait. The merges of each chunk are exactly the rescan's
//! (lowest rank first, leftmost among equals). The long path's windows (`long`) are merged
//! this way, faster than by the rescan one window at a time (docs/performance.md, 'Merge
//! algorithms').

use crate::vocab::{Vocab, MAX_RANKS};

/// Chunks merged side by side.
pub const LANES: usize = 8;
/// The longest chunk a lane takes.
pub const LANE_BYTES: usize = 64;

/// A pair that does not merge (above every key).
const NO_MERGE: i32 = i32::MAX;
/// No part before this one.
const FIRST: u8 = u8::MAX;

// A key packs a rank and a position below `LANE_BYTES` into an i32.
const _: () = assert!(MAX_RANKS * LANE_BYTES <= i32::MAX as usize && LANE_BYTES < FIRST as usize);

/// One chunk being merged. Its parts stay where their first byte was, linked in order, so a
/// merge moves nothing; each part's pair with the next is kept as `rank * LANE_BYTES +
/// position`, so the smallest key is the lowest rank and, among equal ranks, the leftmost.
struct Lane {
    ids: [u32; LANE_BYTES],
    keys: [i32; LANE_BYTES],
    next: [u8; LANE_BYTES],
    prev: [u8; LANE_BYTES],
    /// The chunk's length: `next` of the last part.
    end: u8,
    /// `(i, left, right)`: `keys[i]` is to be the key of `left ++ right`, whose rank is loading.
    pending: [(usize, u32, u32); 2],
    n_pending: usize,
    done: bool,
}

#[inline]
fn key(rank: Option<u32>, i: usize) -> i32 {
    rank.map_or(NO_MERGE, |r| (r as usize * LANE_BYTES + i) as i32)
}

impl Lane {
    fn new(vocab: &Vocab, chunk: &[u8]) -> Lane {
        let n = chunk.len();
        let mut lane = Lane {
            ids: [0; LANE_BYTES],
            keys: [NO_MERGE; LANE_BYTES],
            next: [0; LANE_BYTES],
            prev: [0; LANE_BYTES],
            end: n as u8,
            pending: [(0, 0, 0); 2],
            n_pending: 0,
            done: false,
        };
        for (i, &b) in chunk.iter().enumerate() {
            lane.ids[i] = vocab.byte_rank(b);
            lane.next[i] = i as u8 + 1;
            lane.prev[i] = if i == 0 { FIRST } else { i as u8 - 1 };
        }
        for (i, w) in chunk.windows(2).enumerate() {
            let r = vocab.byte_pair_rank(w[0], w[1]);
            lane.keys[i] = key((r != u32::MAX).then_some(r), i);
        }
        lane
    }

    /// Read the ranks loaded since the last turn, then do one merge (or find there is none
    /// left) and start loading the ranks of the pairs it made.
    #[inline]
    fn step(&mut self, vocab: &Vocab) {
        for &(i, left, right) in &self.pending[..self.n_pending] {
            self.keys[i] = key(vocab.merge_rank(left, right), i);
        }
        self.n_pending = 0;
        let best = self.keys.iter().copied().min().unwrap_or(NO_MERGE);
        if best == NO_MERGE {
            self.done = true;
            return;
        }
        let at = best as usize % LANE_BYTES;
        let gone = self.next[at] as usize;
        self.ids[at] = (best as usize / LANE_BYTES) as u32;
        self.keys[gone] = NO_MERGE;
        let after = self.next[gone];
        self.next[at] = after;
        if after < self.end {
            self.prev[after as usize] = at as u8;
            self.load(vocab, at, after as usize);
        } else {
            self.keys[at] = NO_MERGE;
        }
        let before = self.prev[at];
        if before != FIRST {
            self.load(vocab, before as usize, at);
        }
    }

    /// Start loading the rank of part `i` with the part `j` after it.
    #[inline]
    fn load(&mut self, vocab: &Vocab, i: usize, j: usize) {
        let (left, right) = (self.ids[i], self.ids[j]);
        vocab.prefetch_merge(left, right);
        self.pending[self.n_pending] = (i, left, right);
        self.n_pending += 1;
    }

    fn emit(&self, out: &mut Vec<u32>) {
        let mut i = 0;
        while i < self.end {
            out.push(self.ids[i as usize]);
            i = self.next[i as usize];
        }
    }
}

/// Merge each of `chunks` (each 1 to `LANE_BYTES` bytes) by tiktoken's rule, without the
/// whole-chunk lookup, appending their ids to `out` in order and the end of each chunk's ids
/// in `out` to `ends`.
pub fn merge(vocab: &Vocab, chunks: &[&[u8]], out: &mut Vec<u32>, ends: &mut Vec<usize>) {
    for group in chunks.chunks(LANES) {
        let mut lanes: Vec<Lane> = group.iter().map(|c| Lane::new(vocab, c)).collect();
        loop {
            let mut busy = false;
            for lane in lanes.iter_mut().filter(|l| !l.done) {
                lane.step(vocab);
                busy = true;
            }
            if !busy {
                break;
            }
        }
        for lane in &lanes {
            lane.emit(out);
            ends.push(out.len());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::literal;
    use super::*;
    use crate::testing::Rng;
    use crate::vocab::testing;

    #[test]
    fn lanes_merge_each_chunk_like_the_literal_rule() {
        let mut rng = Rng(2718);
        for round in 0..30 {
            let merges = 20 + rng.below(300);
            let vocab = testing::random(&mut rng, merges);
            let n = rng.below(3 * LANES);
            let chunks: Vec<Vec<u8>> = (0..n)
                .map(|_| {
                    let len = 1 + rng.below(LANE_BYTES);
                    rng.text(if round % 2 == 0 { b"abc " } else { b"a" }, len)
                })
                .collect();
            let slices: Vec<&[u8]> = chunks.iter().map(|c| &c[..]).collect();
            let (mut out, mut ends) = (vec![7], Vec::new());
            merge(&vocab, &slices, &mut out, &mut ends);
            assert_eq!(ends.len(), n);
            let mut at = 1;
            for (chunk, &end) in chunks.iter().zip(&ends) {
                // The merge rule alone: a chunk that is a token no merge reaches is still split.
                let mut want = Vec::new();
                vocab.merge_alone(chunk, &mut want, |_, _, _| {});
                if vocab.rank(chunk).is_none() {
                    assert_eq!(want, literal::merge(&vocab, chunk), "round {round}");
                }
                assert_eq!(out[at..end], want[..], "round {round}");
                at = end;
            }
            assert_eq!(out[0], 7);
        }
    }
}
