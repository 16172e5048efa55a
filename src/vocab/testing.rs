//! Vocabularies for tests: the 256 single bytes and given tokens ([`of`]), or random ones
//! ([`random`]) with the shapes real vocabularies have.

use super::Vocab;
use crate::testing::Rng;

/// The 256 single bytes (ranks 0..256 by byte value), then `extra` in order.
pub(crate) fn of(extra: &[&[u8]]) -> Vocab {
    let mut tokens: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
    tokens.extend(extra.iter().map(|e| e.to_vec()));
    Vocab::new(&tokens).unwrap()
}

/// Tokens made by merging random earlier tokens over a small alphabet, plus some tokens
/// added out of order (lower rank than their parts), which real vocabularies also have.
pub(crate) fn random(rng: &mut Rng, merges: usize) -> Vocab {
    random_over(rng, b"abc ", merges, 24)
}

/// [`random`] over the bytes `alphabet`, tokens of at most `longest` bytes.
pub(crate) fn random_over(rng: &mut Rng, alphabet: &[u8], merges: usize, longest: usize) -> Vocab {
    let mut tokens: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
    let mut pool: Vec<Vec<u8>> = alphabet.iter().map(|&b| vec![b]).collect();
    while tokens.len() < 256 + merges {
        let mut t = pool[rng.below(pool.len())].clone();
        t.extend_from_slice(&pool[rng.below(pool.len())]);
        if t.len() > longest || tokens.contains(&t) {
            continue;
        }
        pool.push(t.clone());
        tokens.push(t);
    }
    for _ in 0..merges / 10 {
        let i = 256 + rng.below(merges);
        let j = 256 + rng.below(merges);
        tokens.swap(i, j);
    }
    Vocab::new(&tokens).unwrap()
}
