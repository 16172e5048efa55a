//! The rescan: the merge for chunks shorter than [`LIMIT`] bytes, O(n^2) but in a few cache
//! lines. Keep a key for every adjacent pair, merge the lowest, update the two neighbours.
//!
//! - **Keys.** The parts stay where their first byte was, linked in order, so a merge moves
//!   nothing. Each part's pair with the next is kept as `rank * CAP + position`, so one `min`
//!   (vectorized) gives the lowest rank and, among equal ranks, the leftmost, as the rule asks.
//! - **Speculation.** Each merge needs two pair-index reads (a random read of a 2-4 MB table).
//!   Before waiting for them, the lowest of the other pairs is found: most of the time it is the
//!   next merge, since a merged token's pairs mostly rank above it. The reads that merge will
//!   need are started then, beside this merge's own. What is left of the time is waiting for
//!   the reads (docs/performance.md, 'Merge algorithms').
//! - **Sizes.** The arrays are sized by the chunk (`CAP` 16, 32, 128 or 1024), so a short chunk
//!   does not clear room it never uses; up to 32 the lowest key is taken over all `CAP` keys (a
//!   few vector steps, no loop whose length changes with the chunk, so no mispredicted exit).
//! - **Atoms.** A chunk that is not ASCII starts from the characters the vocabulary's atoms
//!   allow (`vocab::atoms`), not from their bytes.

#[cfg(target_arch = "x86_64")]
use crate::simd::Avx2;
use crate::vocab::atoms::Atoms;
use crate::vocab::{Vocab, MAX_RANKS};

/// Chunks shorter than this take the rescan; longer ones the heap (`merge::heap`), the rescan
/// being faster below it (docs/performance.md, 'Merge algorithms').
pub(crate) const LIMIT: usize = 1024;

/// The ids of `chunk` (shorter than [`LIMIT`]) by the rule, without the whole-chunk lookup.
pub(crate) fn merge(vocab: &Vocab, chunk: &[u8], out: &mut Vec<u32>) {
    match chunk.len() {
        0..16 => merge_in::<16>(vocab, chunk, out),
        16..32 => merge_in::<32>(vocab, chunk, out),
        32..128 => merge_in::<128>(vocab, chunk, out),
        _ => merge_in::<LIMIT>(vocab, chunk, out),
    }
}

/// [`merge`] with room for `CAP - 1` bytes, compiled for x86-64-v3 where the CPU has it
/// (the `min` over the keys is then 8 lanes wide).
#[inline(always)]
fn merge_in<const CAP: usize>(vocab: &Vocab, chunk: &[u8], out: &mut Vec<u32>) {
    #[cfg(target_arch = "x86_64")]
    if Avx2::detect().is_some() {
        // SAFETY: the CPU has every feature the function is compiled for.
        return unsafe { merge_v3::<CAP>(vocab, chunk, out) };
    }
    merge_body::<CAP>(vocab, chunk, out)
}

/// [`merge_body`] compiled for x86-64-v3.
///
/// # Safety
/// Only for CPUs with the features below.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,bmi1,bmi2,lzcnt,popcnt")]
unsafe fn merge_v3<const CAP: usize>(vocab: &Vocab, chunk: &[u8], out: &mut Vec<u32>) {
    merge_body::<CAP>(vocab, chunk, out)
}

#[inline(always)]
fn merge_body<const CAP: usize>(vocab: &Vocab, chunk: &[u8], out: &mut Vec<u32>) {
    // A key packs a rank (below MAX_RANKS) and a position (below CAP); `NO` is above them all.
    const NO: u32 = u32::MAX;
    const { assert!(MAX_RANKS * CAP < NO as usize && CAP <= 1 << 16) };
    let cap = CAP as u32;
    let n = chunk.len();
    debug_assert!(n < CAP);
    if n == 1 {
        out.push(vocab.byte_rank(chunk[0]));
        return;
    }
    let mut ids = [0u32; CAP];
    let mut keys = [NO; CAP];
    let mut next = [0u16; CAP];
    let mut prev = [0u16; CAP];
    for (i, &b) in chunk.iter().enumerate() {
        ids[i] = vocab.byte_rank(b);
        next[i] = i as u16 + 1;
        prev[i] = (i as u16).wrapping_sub(1);
    }
    // `keys[i]` for each part `i` but the last; a merged-away part's key is `NO`.
    let m = n - 1;
    if chunk.is_ascii() || !form_atoms(vocab.atoms(), chunk, &mut ids, &mut next, &mut prev) {
        for (i, w) in chunk.windows(2).enumerate() {
            let r = vocab.byte_pair_rank(w[0], w[1]);
            keys[i] = if r == NO { NO } else { r * cap + i as u32 };
        }
    } else {
        let mut i = 0;
        while (next[i] as usize) < n {
            let j = next[i] as usize;
            let r = if j == i + 1 && next[j] as usize == j + 1 {
                vocab.byte_pair_rank(chunk[i], chunk[j])
            } else {
                vocab.merge_rank(ids[i], ids[j]).unwrap_or(NO)
            };
            keys[i] = if r == NO { NO } else { r * cap + i as u32 };
            i = j;
        }
    }
    // Over all `CAP` keys where that is a few vector steps (those past `m` are `NO`): no loop
    // whose length changes from chunk to chunk, so no mispredicted exit at every merge.
    let lowest = |keys: &[u32; CAP]| {
        let keys = if CAP <= 32 { &keys[..] } else { &keys[..m] };
        keys.iter().fold(NO, |a, &k| a.min(k))
    };
    let mut best = lowest(&keys);
    while best != NO {
        let (rank, at) = (best / cap, (best % cap) as usize);
        // Part `at` takes in the part after it, `q`.
        let q = next[at] as usize;
        ids[at] = rank;
        if q < m {
            keys[q] = NO;
        }
        let after = next[q] as usize;
        next[at] = after as u16;
        if after < n {
            prev[after] = at as u16;
        }
        let before = prev[at] as usize; // only read when `at > 0`
        keys[at] = NO;
        if at > 0 {
            keys[before] = NO;
        }
        // The lowest pair this merge left alone: start the reads its merge would make.
        best = lowest(&keys);
        if best != NO {
            let (r, c) = (best / cap, (best % cap) as usize);
            if c > 0 {
                vocab.prefetch_merge(ids[prev[c] as usize], r);
            }
            let right = next[next[c] as usize] as usize;
            if right < n {
                vocab.prefetch_merge(r, ids[right]);
            }
        }
        // This merge's two new pairs.
        if after < n {
            if let Some(r) = vocab.merge_rank(rank, ids[after]) {
                keys[at] = r * cap + at as u32;
                best = best.min(keys[at]);
            }
        }
        if at > 0 {
            if let Some(r) = vocab.merge_rank(ids[before], rank) {
                keys[before] = r * cap + before as u32;
                best = best.min(keys[before]);
            }
        }
    }
    let mut i = 0;
    while i < n {
        out.push(ids[i]);
        i = next[i] as usize;
    }
}

/// Put the chunk's atoms in place as parts (`vocab::atoms`): whether there was any.
#[inline(always)]
fn form_atoms(
    atoms: &Atoms,
    chunk: &[u8],
    ids: &mut [u32],
    next: &mut [u16],
    prev: &mut [u16],
) -> bool {
    let n = chunk.len();
    let mut any = false;
    let mut s = 0;
    while s < n {
        let Some((token, len)) = atoms.at(chunk, s) else {
            s += 1;
            continue;
        };
        ids[s] = token;
        next[s] = (s + len) as u16;
        if s + len < n {
            prev[s + len] = s as u16;
        }
        any = true;
        s += len;
    }
    any
}

#[cfg(test)]
mod tests {
    use super::super::literal;
    use super::*;
    use crate::testing::Rng;
    use crate::vocab::testing;

    /// Every size of the short merge, in both compiled copies, against the literal rule: the
    /// keys' tie order, the links, and the speculative reads (which must change nothing).
    #[test]
    fn every_size_equals_the_literal_rule() {
        type Merge = fn(&Vocab, &[u8], &mut Vec<u32>);
        #[cfg_attr(not(target_arch = "x86_64"), allow(unused_mut))]
        let mut copies: Vec<(&str, usize, Merge)> = vec![
            ("baseline", 16, merge_body::<16>),
            ("baseline", 32, merge_body::<32>),
            ("baseline", 128, merge_body::<128>),
            ("baseline", 1024, merge_body::<1024>),
            ("dispatch", 1024, merge),
        ];
        #[cfg(target_arch = "x86_64")]
        if Avx2::detect().is_some() {
            // SAFETY (of each call): the CPU has the features (checked just above).
            copies.push(("x86-64-v3", 16, |v, c, o| unsafe {
                merge_v3::<16>(v, c, o)
            }));
            copies.push(("x86-64-v3", 32, |v, c, o| unsafe {
                merge_v3::<32>(v, c, o)
            }));
            copies.push(("x86-64-v3", 128, |v, c, o| unsafe {
                merge_v3::<128>(v, c, o)
            }));
            copies.push(("x86-64-v3", 1024, |v, c, o| unsafe {
                merge_v3::<1024>(v, c, o)
            }));
        }
        let mut rng = Rng(0x5eed_cafe);
        for round in 0..60 {
            let merges = 20 + rng.below(200);
            let v = testing::random(&mut rng, merges);
            let alphabet: &[u8] = [&b"ab"[..], b"abc ", b"a"][round % 3];
            for _ in 0..30 {
                let longest = [40, 140, 1023][rng.below(3)];
                let len = 1 + rng.below(longest);
                let s = rng.text(alphabet, len);
                // The literal rule takes a whole-chunk token as is; the merge does not look.
                if v.rank(&s).is_some() {
                    continue;
                }
                let want = literal::merge(&v, &s);
                for &(name, cap, merge) in &copies {
                    if len < cap {
                        let mut got = Vec::new();
                        merge(&v, &s, &mut got);
                        assert_eq!(
                            got,
                            want,
                            "{name} <{cap}> on {:?}",
                            String::from_utf8_lossy(&s)
                        );
                    }
                }
            }
        }
    }

    /// Merging from atoms (`vocab::atoms`) against the literal rule, on random vocabularies over
    /// the bytes of a few characters of 2 and 3 bytes: tokens made by joining random earlier
    /// ones, so that many end or start inside a character and cross its edges, plus some
    /// added out of order. Texts are runs of those characters with an occasional stray byte.
    #[test]
    fn merging_from_atoms_equals_the_literal_rule() {
        let chars: [&[u8]; 7] = [
            "о".as_bytes(),
            "п".as_bytes(),
            "ä".as_bytes(),
            "的".as_bytes(),
            "ा".as_bytes(),
            b"a",
            b" ",
        ];
        let mut rng = Rng(0x0a70_5eed);
        let (mut with_atoms, mut refused) = (0, 0);
        for _ in 0..200 {
            let alphabet: Vec<u8> = chars.concat();
            let merges = 20 + rng.below(120);
            let v = testing::random_over(&mut rng, &alphabet, merges, 12);
            for _ in 0..40 {
                let mut text = Vec::new();
                for _ in 0..1 + rng.below(24) {
                    if rng.below(30) == 0 {
                        text.push([0x80, 0xBE, 0xD0, 0xE0][rng.below(4)]);
                    } else {
                        text.extend_from_slice(chars[rng.below(chars.len())]);
                    }
                }
                if text.len() >= 128 || v.rank(&text).is_some() {
                    continue;
                }
                let n = text.len();
                let (mut ids, mut next, mut prev) = ([0u32; 128], [0u16; 128], [0u16; 128]);
                if form_atoms(v.atoms(), &text, &mut ids, &mut next, &mut prev) {
                    with_atoms += 1;
                }
                let whole = (0..n).filter(|&i| text[i] >= 0xC2).count();
                let formed = (0..n)
                    .filter(|&i| text[i] >= 0xC2 && next[i] as usize > i + 1)
                    .count();
                refused += usize::from(formed < whole && !v.atoms().is_empty());
                let want = literal::merge(&v, &text);
                let mut got = Vec::new();
                merge(&v, &text, &mut got);
                let mut baseline = Vec::new();
                merge_body::<128>(&v, &text, &mut baseline);
                assert_eq!(got, want, "{:?}", String::from_utf8_lossy(&text));
                assert_eq!(baseline, want, "{:?}", String::from_utf8_lossy(&text));
            }
        }
        // Both kinds occur: texts merged from atoms, and characters an atom's neighbour refused.
        assert!(
            with_atoms > 1000 && refused > 1000,
            "{with_atoms} {refused}"
        );
    }

    /// Two vocabularies where forming "的" (E7 9A 84) first would be wrong after "a": a token
    /// joins "a" to a piece the character starts with below the highest rank of its own
    /// merges (here above the character's own rank), so "a" may not stand before it.
    #[test]
    fn atoms_watch_every_piece_up_to_the_highest_merge() {
        let c = "的".as_bytes();
        let cases: [(Vec<&[u8]>, [u32; 2]); 2] = [
            // "的" (256) = E7 + "9A84" (258); "a" + E7 (257) ranks between them.
            (vec![c, b"a\xE7", b"\x9A\x84"], [257, 258]),
            // "的" (258) = "E79A" (256) + 84; "a" + "E79A" (257).
            (vec![b"\xE7\x9A", b"a\xE7\x9A", c], [257, 0x84]),
        ];
        for (extra, want) in cases {
            let v = testing::of(&extra);
            assert_eq!(v.atoms().len(), 1);
            let text = [&b"a"[..], c].concat();
            assert_eq!(literal::merge(&v, &text), want);
            let mut got = Vec::new();
            merge(&v, &text, &mut got);
            assert_eq!(got, want);
            // Not after " ": there the character is formed first.
            assert_eq!(v.atoms().at(b" \xE7\x9A\x84", 1).map(|a| a.1), Some(3));
        }
    }
}
