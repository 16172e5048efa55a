//! (c) Encoding against the literal merge rule, on small random vocabularies.
//!
//! Input: a pattern choice, a merge count, a shape byte, two bytes per merge, then the text.
//! The vocabulary has every byte (in a rotated rank order for some shapes, as GPT-2's has
//! them out of byte order), then tokens made by the merges, each two earlier tokens over the
//! text's own bytes joined (so that they apply), a few tokens the merges may not make
//! (substrings of the text, found only by the whole-chunk lookup), some merged tokens' ranks
//! swapped (ranks below their parts', as real vocabularies have), and up to three special
//! tokens whose names overlap.
//!
//! Checks, on every instruction set the CPU has: `encode_ordinary` gives the literal rule's
//! ids (`oracle::literal`) for the splitter's chunks, cold and with the chunk cache warm;
//! each merge algorithm alone (`tokenmill::fuzzing::Merges`: the rescan, the heap, the long
//! path under several limits) gives the rule's ids on every chunk and on the whole text as one
//! chunk; `count` agrees; decode(encode(x)) == x; special tokens follow tiktoken's policy
//! (allowed, disallowed, some allowed), and the parallel encode of small pieces equals the
//! plain one.
//!
//! The chunks come from the crate's splitter: `scanners` and `custom_pattern` hold it to the
//! regex engine.

use crate::input::Input;
use crate::oracle::{self, cut_specials, literal, Piece, Ranks};
use tokenmill::fuzzing::Merges;
use tokenmill::specials::Allowed;
use tokenmill::{Encoder, Error, Splitter, Vocab};

const PATTERNS: &[&str] = &[
    "gpt2",
    "cl100k",
    "o200k",
    // Custom: words, numbers, the rest; and the whole text as one chunk, for long chunks.
    r"\w+|\d+|\s+|[^\w\d\s]+",
    r"(?s).+",
];

/// Special tokens' names: overlapping, so that the longest-match rule decides.
const SPECIALS: &[&str] = &["<|s|>", "<|s|>>", "s|"];

/// Merged tokens are at most this long, as the crate's own random vocabularies are.
const LONGEST: usize = 24;

/// The whole text as one chunk goes through every merge algorithm up to this many bytes
/// (the literal rule costs the square of the length).
const WHOLE_TEXT: usize = 1500;

pub fn run(data: &[u8]) {
    let mut input = Input::new(data);
    let pattern = input.pick(PATTERNS);
    let n_merges = input.below(64);
    let shape = input.byte();
    let merges: Vec<(u8, u8)> = (0..n_merges)
        .map(|_| (input.byte(), input.byte()))
        .collect();
    let text = input.rest_text();

    let tokens = vocabulary(&text, &merges, shape);
    let n_specials = usize::from(shape >> 5 & 3).min(SPECIALS.len());
    let names: Vec<String> = SPECIALS[..n_specials]
        .iter()
        .map(|s| s.to_string())
        .collect();
    // Ids after the ranks, with a gap of unused ids for some shapes.
    let gap = if shape & 0x80 != 0 { 5 } else { 0 };
    let specials: Vec<(String, u32)> = names
        .iter()
        .enumerate()
        .map(|(k, n)| (n.clone(), (tokens.len() + gap + k) as u32))
        .collect();
    let vocab = Vocab::new(&tokens).expect("distinct tokens, every byte");
    let splitter = Splitter::new(pattern).expect("a valid pattern");
    let enc = Encoder::new(vocab, splitter, &specials).expect("valid special tokens");
    let ranks = Ranks::new(&tokens);
    let n_vocab = specials.last().map_or(tokens.len(), |s| s.1 as usize + 1);
    assert_eq!(enc.n_vocab(), n_vocab);

    let ordinary = by_the_rule(&enc, &ranks, &text);
    oracle::each_level(|level| {
        for round in ["cold", "warm"] {
            let mut got = Vec::new();
            enc.encode_ordinary(&text, &mut got).unwrap();
            assert_eq!(
                got,
                ordinary,
                "{pattern} on {} ({round}): {text:?}",
                level.name()
            );
        }
        let count = enc.count(&text, Allowed::None, Allowed::None).unwrap();
        assert_eq!(count, ordinary.len());
    });
    assert_eq!(decode(&enc, &ordinary), text.as_bytes());
    assert!(matches!(
        enc.decode_bytes(&[n_vocab as u32], &mut Vec::new()),
        Err(Error::UnknownTokenId { .. })
    ));

    check_algorithms(&enc, &ranks, &text);
    if !specials.is_empty() {
        check_specials(&enc, &ranks, &text, &names, &specials, shape);
    }
}

/// The vocabulary (tokens by rank) that `merges` and `shape` make over `text`'s bytes.
fn vocabulary(text: &str, merges: &[(u8, u8)], shape: u8) -> Vec<Vec<u8>> {
    let rotate = if shape & 1 != 0 { 37 } else { 0 };
    let mut tokens: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b.wrapping_add(rotate)]).collect();
    // Merges join tokens over the text's bytes, in order of first appearance.
    let mut pool: Vec<Vec<u8>> = Vec::new();
    for &b in text.as_bytes() {
        if !pool.iter().any(|t| t[0] == b) {
            pool.push(vec![b]);
        }
    }
    if pool.is_empty() {
        pool = vec![b"a".to_vec(), b" ".to_vec()];
    }
    for &(i, j) in merges {
        let mut t = pool[usize::from(i) % pool.len()].clone();
        t.extend_from_slice(&pool[usize::from(j) % pool.len()]);
        if t.len() <= LONGEST && !tokens.contains(&t) {
            pool.push(t.clone());
            tokens.push(t);
        }
    }
    // Tokens that the merges may not make: pieces of the text.
    let b = text.as_bytes();
    for k in 0..usize::from(shape >> 1 & 3) {
        if b.len() < 2 {
            break;
        }
        let len = 2 + k;
        let start = (k * 7919 + usize::from(shape)) % b.len();
        let piece = b[start..].get(..len).unwrap_or(&b[b.len() - 2..]).to_vec();
        if !tokens.contains(&piece) {
            tokens.push(piece);
        }
    }
    // Some merged tokens moved to a rank below their parts'.
    let merged = tokens.len() - 256;
    for k in 0..usize::from(shape >> 3 & 3) {
        if merged < 2 {
            break;
        }
        let (i, j) = merges.get(k).copied().unwrap_or((0, 1));
        tokens.swap(256 + usize::from(i) % merged, 256 + usize::from(j) % merged);
    }
    tokens
}

/// The ids of `text` (plain text) by the literal rule on the splitter's chunks.
fn by_the_rule(enc: &Encoder, ranks: &Ranks<'_>, text: &str) -> Vec<u32> {
    let chunks = enc
        .splitter()
        .chunks(text)
        .expect("the splitter takes any text");
    chunks
        .iter()
        .flat_map(|c| literal(ranks, c.as_bytes(), true))
        .collect()
}

fn decode(enc: &Encoder, ids: &[u32]) -> Vec<u8> {
    let mut out = Vec::new();
    enc.decode_bytes(ids, &mut out).expect("known ids");
    out
}

/// Every merge algorithm alone gives the rule's ids (without the whole-chunk lookup) on each
/// distinct chunk, and on the whole text as one chunk.
fn check_algorithms(enc: &Encoder, ranks: &Ranks<'_>, text: &str) {
    let vocab = enc.vocab();
    let merges = Merges::new(vocab);
    let mut chunks = enc.splitter().chunks(text).unwrap();
    chunks.sort_unstable();
    chunks.dedup();
    if text.len() <= WHOLE_TEXT {
        chunks.push(text);
    }
    for chunk in chunks {
        let want = literal(ranks, chunk.as_bytes(), false);
        for k in 0..Merges::COUNT {
            if let Some(got) = merges.run(k, vocab, chunk.as_bytes()) {
                assert_eq!(got, want, "{}: {chunk:?}", Merges::name(k));
            }
        }
    }
}

/// tiktoken's special-token policy, and the parallel encode.
fn check_specials(
    enc: &Encoder,
    ranks: &Ranks<'_>,
    text: &str,
    names: &[String],
    specials: &[(String, u32)],
    shape: u8,
) {
    let ids: Vec<u32> = specials.iter().map(|s| s.1).collect();
    let want_of = |accept: &dyn Fn(usize) -> bool| -> (Vec<u32>, Option<usize>) {
        let mut want = Vec::new();
        let mut first = None;
        for piece in cut_specials(text, names, accept) {
            match piece {
                Piece::Text(t) => want.extend(by_the_rule(enc, ranks, t)),
                Piece::Special(k) => {
                    first = first.or(Some(k));
                    want.push(ids[k]);
                }
            }
        }
        (want, first)
    };

    // All allowed.
    let (want, first) = want_of(&|_| true);
    let mut got = Vec::new();
    enc.encode(text, Allowed::All, Allowed::None, &mut got)
        .unwrap();
    assert_eq!(got, want, "all specials allowed: {text:?}");
    assert_eq!(decode(enc, &got), text.as_bytes());
    assert_eq!(
        enc.count(text, Allowed::All, Allowed::None).unwrap(),
        want.len()
    );
    let piece_bytes = 1 + usize::from(shape & 0x1f);
    got.clear();
    enc.encode_parallel(text, Allowed::All, Allowed::None, piece_bytes, &mut got)
        .unwrap();
    assert_eq!(
        got, want,
        "parallel, pieces of {piece_bytes} bytes: {text:?}"
    );

    // All disallowed: the first special is an error naming it.
    got.clear();
    let result = enc.encode(text, Allowed::None, Allowed::All, &mut got);
    match (result, first) {
        (Err(Error::DisallowedSpecialToken { token }), Some(k)) => assert_eq!(token, names[k]),
        (Ok(()), None) => assert_eq!(got, want),
        (result, first) => panic!("disallowed: {result:?}, expected special {first:?}: {text:?}"),
    }

    // The first allowed, the others plain text (a refused match hides no allowed one).
    let (want, _) = want_of(&|k| k == 0);
    got.clear();
    enc.encode(text, Allowed::Ids(&ids[..1]), Allowed::None, &mut got)
        .unwrap();
    assert_eq!(got, want, "only {:?} allowed: {text:?}", names[0]);
}
