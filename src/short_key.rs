//! Short byte strings (1 to 15 bytes) packed into one `u128` with their length: the keys of
//! the chunk cache's first level, so that a lookup compares one integer instead of reading
//! and comparing bytes elsewhere. `MAX_KEY` is also where `Encoder::encode_chunk` stops
//! merging new chunks without a whole-chunk lookup.

/// Longest string a key holds (the 16th key byte is the length).
pub const MAX_KEY: usize = 15;

/// The key of a chunk of 1..=15 bytes: its bytes in order (zero-padded) and its length in the
/// top byte, built from a few overlapping loads instead of a variable-length copy (which
/// compiled to a `memmove` call and cost 10% of encoding). Keys are unique per chunk.
#[inline]
pub fn key_of(chunk: &[u8]) -> Option<u128> {
    let n = chunk.len();
    let lo = |k: usize| u32::from_le_bytes(chunk[k..k + 4].try_into().unwrap_or_default()) as u64;
    let lo8 = |k: usize| u64::from_le_bytes(chunk[k..k + 8].try_into().unwrap_or_default());
    let (lo, hi) = match n {
        // An empty chunk would have key 0, the empty-slot marker; the splitter never makes one.
        0 => return None,
        1 => (chunk[0] as u64, 0),
        2 => (u16::from_le_bytes([chunk[0], chunk[1]]) as u64, 0),
        3 => (
            u32::from_le_bytes([chunk[0], chunk[1], chunk[2], 0]) as u64,
            0,
        ),
        // Bytes 4..n are the top lanes of the last four.
        4..=8 => (lo(0) | (lo(n - 4) >> (8 * (8 - n))) << 32, 0),
        // Bytes 8..n are the top lanes of the last eight.
        9..=MAX_KEY => (lo8(0), lo8(n - 8) >> (8 * (16 - n))),
        _ => return None,
    };
    Some(with_len(lo as u128 | (hi as u128) << 64, n))
}

/// What stands for the key of a chunk that has none (empty, or longer than `MAX_KEY`): its
/// length byte (255) is no chunk's, and it is neither 0, the empty-slot marker, so a lookup
/// that compares it with a slot's key finds nothing with no test of its own.
pub const NO_KEY: u128 = u128::MAX;

/// The key of a chunk of `n` bytes whose bytes are the first of `word` (16 bytes read from
/// the chunk's start, little-endian; the bytes past the chunk are dropped), or `NO_KEY` for
/// `n` of 0 or more than `MAX_KEY`. No branch: the key's bytes and length come from a table
/// (a variable 128-bit shift is several instructions and a branch).
#[inline(always)]
pub fn key_in(word: u128, n: usize) -> u128 {
    let (keep, len) = KEY_MASKS[n.min(MAX_KEY + 1)];
    word & keep | len
}

/// For `n` in 1..=15: the mask of a key's first `n` bytes, and `with_len(0, n)`; for 0 and 16,
/// no bytes and `NO_KEY`.
const KEY_MASKS: [(u128, u128); MAX_KEY + 2] = {
    let mut t = [(0u128, NO_KEY); MAX_KEY + 2];
    let mut n = 1;
    while n <= MAX_KEY {
        t[n] = ((1u128 << (8 * n)) - 1, with_len(0, n));
        n += 1;
    }
    t
};

#[inline(always)]
const fn with_len(bytes: u128, n: usize) -> u128 {
    bytes | (n as u128) << 120
}

/// Bits of [`hash128`]: a table indexed by it masks it to at most this many.
pub const HASH_BITS: u32 = 19;

/// A key's hash, `HASH_BITS` wide: the top bits of a multiplicative hash, which depend on
/// every bit of the key. Bits 32..47 of the product, used before, depend only on its low 48
/// bits, a chunk's first six bytes: chunks of one length that shared them always had the
/// same home slot, and took turns on the lookup's slow path (gpt2, warm: 3.4% of the chunks
/// of the 0.25 MB of English, now 2.2%; Holmes 2.4%, now 1.7%).
#[inline]
pub fn hash128(key: u128) -> usize {
    let h = (key as u64 ^ ((key >> 64) as u64).rotate_left(29)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    (h >> (64 - HASH_BITS)) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_unique_and_loaded_alike() {
        let text: Vec<u8> = (0..40u8).map(|i| i.wrapping_mul(97) | 1).collect();
        // `key_in` on any 16 bytes read from a chunk's start: the key, or `NO_KEY` with none.
        let word = u128::from_le_bytes(text[3..19].try_into().unwrap());
        for n in 0..40 {
            let want = text.get(3..3 + n).and_then(key_of).unwrap_or(NO_KEY);
            assert_eq!(key_in(word, n), want, "{n}");
        }
        // Keys are unique: chunks differing in any one byte, or in length, differ in key.
        for n in 1..=MAX_KEY {
            let a: Vec<u8> = (1..=n as u8).collect();
            for p in 0..n {
                let mut b = a.clone();
                b[p] ^= 0x80;
                assert_ne!(key_of(&a), key_of(&b), "length {n}, byte {p}");
            }
            let mut longer = a.clone();
            longer.push(0);
            assert_ne!(key_of(&a), key_of(&longer), "length {n}");
        }
    }
}
