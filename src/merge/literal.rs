//! tiktoken's rule on one chunk, run as tiktoken's `_byte_pair_merge` runs it: the definition
//! every fast merge is tested against.
//!
//! A chunk that is itself a token is one id. Otherwise start from single bytes and repeatedly
//! merge the adjacent pair whose concatenation has the lowest rank (the leftmost of equal
//! ones) until no adjacent pair concatenates to a token.
//!
//! Parts are byte spans, and a pair's rank is the rank of its bytes joined, looked up by
//! hashing them: every split of a token counts, not only its parents as in the pair index
//! (`vocab::pairs`). That is the rule at its plainest and slowest (a hash of a slice per pair,
//! a scan of all pairs per merge), so only the tests run it.

use crate::vocab::Vocab;

/// The ids of `piece` by tiktoken's rule.
pub(crate) fn merge(vocab: &Vocab, piece: &[u8]) -> Vec<u32> {
    if let Some(r) = vocab.rank(piece) {
        return vec![r];
    }
    const NO_MERGE: u32 = u32::MAX;
    // `parts[i]` is (where part `i` starts, the rank of part `i` joined with part `i + 1`); the
    // last entry is the end of the piece.
    let mut parts: Vec<(usize, u32)> = (0..=piece.len()).map(|i| (i, NO_MERGE)).collect();
    for i in 0..piece.len().saturating_sub(1) {
        parts[i].1 = vocab.rank(&piece[i..i + 2]).unwrap_or(NO_MERGE);
    }
    // The rank of part `i` joined with the two after it: what the pair at `i` becomes once the
    // parts `i + 1` and `i + 2` merge.
    let rank_at = |parts: &[(usize, u32)], i: usize| -> u32 {
        if i + 3 < parts.len() {
            vocab
                .rank(&piece[parts[i].0..parts[i + 3].0])
                .unwrap_or(NO_MERGE)
        } else {
            NO_MERGE
        }
    };
    while let Some((i, &(_, r))) = parts[..parts.len() - 1]
        .iter()
        .enumerate()
        .min_by_key(|(i, p)| (p.1, *i))
    {
        if r == NO_MERGE {
            break;
        }
        if i > 0 {
            parts[i - 1].1 = rank_at(&parts, i - 1);
        }
        parts[i].1 = rank_at(&parts, i);
        parts.remove(i + 1);
    }
    parts
        .windows(2)
        .map(|w| vocab.rank(&piece[w[0].0..w[1].0]).unwrap_or(NO_MERGE))
        .collect()
}
