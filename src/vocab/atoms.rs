//! Characters put in place before the merge loop starts: *atoms*.
//!
//! In a first pass over text that is not English most merges happen inside one character, and
//! each is a wait for the pair index. When it is certain that a character's bytes end as its
//! own token whatever happens around it, the merge starts from that token instead, and the
//! result is the same; about half the merges of a first pass over other languages go
//! (docs/performance.md, 'Merge algorithms').
//!
//! **When that is certain.** Let `c` be a character of 2 or 3 bytes whose bytes, merged
//! alone, end as one token `t`; let `max` be the highest rank of the merges that make it
//! (`t`'s own rank among them). Run the rule on a chunk holding `c`. Until `c` is whole,
//! some merge inside it is waiting with a rank of at most `max`, so no pair of rank above
//! `max` can be merged first. A merge that joins a piece of `c` (or `t`) to a part outside it
//! is one of the pair index's entries `(x, p)` with `p` a piece `c` starts with, or `(p, y)`
//! with `p` a piece it ends with. If every such entry of rank at most `max` has an `x` whose
//! last byte differs from the byte before `c` (and every `y` a first byte other than the one
//! after `c`), nothing crosses `c`'s edges before it is whole: inside it the merges are those
//! of its bytes alone, and outside it the same merges happen in the same order, since each
//! was the lowest pair of its moment and beats every pair of rank above `max`. Forming `t`
//! first changes neither. Each character is judged on its own, so any number of them can be
//! formed at once.
//!
//! So each atom keeps two sets of bytes, the bytes that may not stand just before it and
//! just after it; the tests compare merges from atoms with tiktoken's rule on random
//! vocabularies (`merge::small`).

use super::pairs::PairIndex;
use std::collections::HashMap;

/// A character that may be formed before merging, unless the byte before it is in
/// `masks[left]` or the byte after it in `masks[right]`. `token` is `NO_ATOM` for none.
#[derive(Debug, Clone, Copy)]
struct Atom {
    token: u32,
    left: u16,
    right: u16,
}

const NO_ATOM: Atom = Atom {
    token: u32::MAX,
    left: 0,
    right: 0,
};

/// The atoms of a vocabulary, found by code point (characters of 2 and 3 bytes).
#[derive(Debug, Clone, Default)]
pub struct Atoms {
    /// For each 256 code points below U+10000, its row in `rows` (0: no atom there). Empty
    /// when the vocabulary has no atom.
    pages: Vec<u16>,
    /// `rows[k][cp & 255]`: the atom of that code point. Row 0 has none.
    rows: Vec<[Atom; 256]>,
    /// Sets of bytes, 256 bits each; `masks[0]` is empty.
    masks: Vec<[u64; 4]>,
    len: usize,
}

/// The merges that make a character's token out of its bytes.
struct Trace {
    /// Ranks of the pieces that start the character (its first byte, ...), and its token.
    starts: Vec<u32>,
    /// Ranks of the pieces that end it (its last byte, ...), and its token.
    ends: Vec<u32>,
    /// The highest rank merged.
    max: u32,
}

/// Merge `bytes` alone by the pair index: `None` unless they end as the one token `token`.
fn trace(pairs: &PairIndex, bytes: &[u8], token: u32) -> Option<Trace> {
    let n = bytes.len();
    let mut trace = Trace {
        starts: vec![pairs.byte_rank(bytes[0])],
        ends: vec![pairs.byte_rank(bytes[n - 1])],
        max: 0,
    };
    let mut parts = Vec::new();
    pairs.merge_alone(bytes, &mut parts, |start, end, rank| {
        trace.max = trace.max.max(rank);
        if start == 0 {
            trace.starts.push(rank);
        }
        if end == n {
            trace.ends.push(rank);
        }
    });
    (parts[..] == [token]).then_some(trace)
}

/// For each rank, the atoms that watch it (in rank order, as one array).
struct Watch {
    /// `atoms[start[r]..start[r + 1]]` watch rank `r`.
    start: Vec<u32>,
    atoms: Vec<u32>,
}

impl Watch {
    /// `ranks[a]` are the ranks atom `a` watches.
    fn new<'a>(n_ranks: usize, ranks: impl Iterator<Item = &'a Vec<u32>> + Clone) -> Watch {
        let mut start = vec![0u32; n_ranks + 1];
        for &r in ranks.clone().flatten() {
            start[r as usize + 1] += 1;
        }
        for r in 0..n_ranks {
            start[r + 1] += start[r];
        }
        let mut fill = start.clone();
        let mut atoms = vec![0; start[n_ranks] as usize];
        for (a, watched) in ranks.enumerate() {
            for &r in watched {
                atoms[fill[r as usize] as usize] = a as u32;
                fill[r as usize] += 1;
            }
        }
        Watch { start, atoms }
    }

    fn of(&self, rank: u32) -> &[u32] {
        &self.atoms[self.start[rank as usize] as usize..self.start[rank as usize + 1] as usize]
    }
}

/// The code point and length of the character of 2 or 3 bytes at `chunk[s..]`, if the
/// bytes there are one in UTF-8 (shortest form, complete).
#[inline(always)]
fn char_at(chunk: &[u8], s: usize) -> Option<(usize, usize)> {
    let b0 = *chunk.get(s)?;
    let cont = |k: usize| {
        chunk
            .get(s + k)
            .filter(|&&b| b & 0xC0 == 0x80)
            .map(|&b| b as usize & 0x3F)
    };
    if b0 & 0xE0 == 0xC0 {
        let cp = (b0 as usize & 0x1F) << 6 | cont(1)?;
        (cp >= 0x80).then_some((cp, 2))
    } else if b0 & 0xF0 == 0xE0 {
        let cp = (b0 as usize & 0x0F) << 12 | cont(1)? << 6 | cont(2)?;
        (cp >= 0x800).then_some((cp, 3))
    } else {
        None
    }
}

impl Atoms {
    /// The atoms of `tokens` (by rank), whose pair index is `pairs`.
    pub(crate) fn new(tokens: &[Vec<u8>], pairs: &PairIndex) -> Atoms {
        // Every character token of 2 or 3 bytes that its own bytes merge into.
        let mut found: Vec<(usize, u32, Trace)> = Vec::new();
        for (rank, bytes) in tokens.iter().enumerate() {
            if let Some((cp, len)) = char_at(bytes, 0) {
                if len == bytes.len() {
                    if let Some(t) = trace(pairs, bytes, rank as u32) {
                        found.push((cp, rank as u32, t));
                    }
                }
            }
        }
        if found.is_empty() {
            return Atoms::default();
        }
        // Which atoms watch each rank: entries `(x, rank)` fill their left sets, entries
        // `(rank, y)` their right sets.
        let watch_left = Watch::new(tokens.len(), found.iter().map(|f| &f.2.starts));
        let watch_right = Watch::new(tokens.len(), found.iter().map(|f| &f.2.ends));
        let mut left = vec![[0u64; 4]; found.len()];
        let mut right = vec![[0u64; 4]; found.len()];
        let set = |mask: &mut [u64; 4], b: u8| mask[b as usize >> 6] |= 1 << (b & 63);
        for merged in 0..tokens.len() as u32 {
            let Some((l, r)) = pairs.parents(merged) else {
                continue;
            };
            // Parents are tokens, never gaps, so never empty.
            let (Some(&x_last), Some(&y_first)) =
                (tokens[l as usize].last(), tokens[r as usize].first())
            else {
                continue;
            };
            for &a in watch_left.of(r) {
                if merged <= found[a as usize].2.max {
                    set(&mut left[a as usize], x_last);
                }
            }
            for &a in watch_right.of(l) {
                if merged <= found[a as usize].2.max {
                    set(&mut right[a as usize], y_first);
                }
            }
        }
        let mut atoms = Atoms {
            pages: vec![0; 256],
            rows: vec![[NO_ATOM; 256]],
            masks: vec![[0; 4]],
            len: 0,
        };
        let mut mask_ids: HashMap<[u64; 4], u16> = HashMap::from([([0; 4], 0)]);
        for (a, &(cp, token, _)) in found.iter().enumerate() {
            let mut id = |mask: [u64; 4]| {
                let next = u16::try_from(atoms.masks.len()).ok();
                match mask_ids.get(&mask) {
                    Some(&id) => Some(id),
                    None => {
                        // More distinct sets than ids (no real vocabulary comes close): the
                        // character stays bytes, which is always right.
                        let id = next?;
                        atoms.masks.push(mask);
                        mask_ids.insert(mask, id);
                        Some(id)
                    }
                }
            };
            let (Some(left), Some(right)) = (id(left[a]), id(right[a])) else {
                continue;
            };
            let page = &mut atoms.pages[cp >> 8];
            if *page == 0 {
                *page = atoms.rows.len() as u16;
                atoms.rows.push([NO_ATOM; 256]);
            }
            atoms.rows[*page as usize][cp & 255] = Atom { token, left, right };
            atoms.len += 1;
        }
        atoms
    }

    /// Whether there is any atom.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Number of atoms.
    pub fn len(&self) -> usize {
        self.len
    }

    #[inline(always)]
    fn has(&self, mask: u16, b: u8) -> bool {
        self.masks[mask as usize][b as usize >> 6] >> (b & 63) & 1 != 0
    }

    /// The token and length of the atom at `chunk[s..]`, if one starts there and its
    /// neighbours in the chunk allow it.
    #[inline(always)]
    pub fn at(&self, chunk: &[u8], s: usize) -> Option<(u32, usize)> {
        let (cp, len) = char_at(chunk, s)?;
        let row = *self.pages.get(cp >> 8)?;
        let atom = self.rows[row as usize][cp & 255];
        if atom.token == NO_ATOM.token {
            return None;
        }
        if s > 0 && self.has(atom.left, chunk[s - 1]) {
            return None;
        }
        if chunk.get(s + len).is_some_and(|&b| self.has(atom.right, b)) {
            return None;
        }
        Some((atom.token, len))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn char_at_takes_only_whole_shortest_characters() {
        let s = "aé的😀".as_bytes();
        assert_eq!(char_at(s, 0), None, "ASCII is no atom");
        assert_eq!(char_at(s, 1), Some((0xE9, 2)));
        assert_eq!(char_at(s, 2), None, "a continuation byte starts nothing");
        assert_eq!(char_at(s, 3), Some((0x7684, 3)));
        assert_eq!(
            char_at(s, 6),
            None,
            "4-byte characters are left to the merge"
        );
        assert_eq!(char_at(b"\xC3", 0), None, "cut short");
        assert_eq!(char_at(b"\xE7\x9A", 0), None, "cut short");
        assert_eq!(char_at(b"\xC3a", 0), None, "not a continuation");
        assert_eq!(char_at(b"\xC1\xBF", 0), None, "overlong");
        assert_eq!(char_at(b"\xE0\x9F\xBF", 0), None, "overlong");
    }
}
