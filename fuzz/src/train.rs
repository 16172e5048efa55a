//! (f) Training against DESIGN.md §2's rule, implemented plainly here ([`by_the_rule`]).
//!
//! Input: a pattern choice, the merges asked for, `min_frequency` and special tokens in one
//! byte, then texts separated by 0 bytes (one corpus, in order; no chunk spans two). The
//! trainer's merges (pairs and counts) must equal the rule's whether the texts are fed at
//! once, one call each, or counted by two trainers and added (`add_counted`). The merges must
//! make a vocabulary (distinct tokens), whose encoding of each text equals applying the
//! learned merges earliest first (DESIGN.md §2, 'Encoding').

use crate::input::Input;
use crate::oracle::{cut_specials, Piece};
use std::collections::HashMap;
use tokenmill::train::{Merge, Trainer};
use tokenmill::{Encoder, Splitter, Vocab};

const PATTERNS: &[&str] = &["gpt2", "cl100k", "o200k", r"\w+|\s+|[^\w\s]+", r"(?s).+"];
const SPECIALS: &[&str] = &["<|s|>", "<|s|>>"];
const MOST_TEXTS: usize = 8;

pub fn run(data: &[u8]) {
    let mut input = Input::new(data);
    let pattern = input.pick(PATTERNS);
    let max = usize::from(input.byte());
    let options = input.byte();
    let min_frequency = u64::from(options & 3);
    let names: Vec<String> = SPECIALS[..usize::from(options >> 2 & 1) * SPECIALS.len()]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let rest = input.rest();
    let texts: Vec<String> = rest
        .split(|&b| b == 0)
        .take(MOST_TEXTS)
        .map(|t| String::from_utf8_lossy(t).into_owned())
        .collect();

    let splitter = Splitter::new(pattern).expect("a valid pattern");
    let words = words(&splitter, &texts, &names);
    let want = by_the_rule(words, max, min_frequency);

    let at_once = {
        let mut t = Trainer::new(pattern, &names).unwrap();
        t.feed(&texts).unwrap();
        t.merge(max, min_frequency)
    };
    let learned: Vec<(u32, u32, u64)> =
        at_once.iter().map(|m| (m.left, m.right, m.count)).collect();
    assert_eq!(
        learned, want,
        "{pattern}, min_frequency {min_frequency}: {texts:?}"
    );

    let one_by_one = {
        let mut t = Trainer::new(pattern, &names).unwrap();
        for text in &texts {
            t.feed(&[text]).unwrap();
        }
        t.merge(max, min_frequency)
    };
    assert_eq!(one_by_one, at_once, "fed one by one");

    // Counted in two parts elsewhere, then added in corpus order.
    let half = texts.len() / 2;
    let added = {
        let mut t = Trainer::new(pattern, &names).unwrap();
        for part in [&texts[..half], &texts[half..]] {
            let mut counter = Trainer::new(pattern, &names).unwrap();
            counter.feed(part).unwrap();
            let bytes: usize = part.iter().map(String::len).sum();
            t.add_counted(&counter.counted(), bytes as u64).unwrap();
        }
        t.merge(max, min_frequency)
    };
    assert_eq!(added, at_once, "counted in parts and added");

    check_encoding(pattern, &at_once, &texts);
}

/// The distinct chunks of the corpus as byte ids, in order of first occurrence, with their
/// counts; special tokens cut out first (longest match from the left).
fn words(splitter: &Splitter, texts: &[String], specials: &[String]) -> Vec<(Vec<u32>, u64)> {
    let mut words: Vec<(Vec<u32>, u64)> = Vec::new();
    let mut index: HashMap<&str, usize> = HashMap::new();
    for text in texts {
        for piece in cut_specials(text, specials, |_| true) {
            let Piece::Text(t) = piece else { continue };
            for chunk in splitter.chunks(t).expect("the splitter takes any text") {
                match index.get(chunk) {
                    Some(&w) => words[w].1 += 1,
                    None => {
                        index.insert(chunk, words.len());
                        words.push((chunk.bytes().map(u32::from).collect(), 1));
                    }
                }
            }
        }
    }
    words
}

/// DESIGN.md §2's training rule on counted words: count every adjacent pair (weighted by the
/// word's count), take the most frequent, ties to the pair seen first in the text as it stands
/// now, replace it left to right without overlap, until `max` merges or no pair is seen
/// `min_frequency` times (at least once). Recounted from scratch each time: slow and plain.
fn by_the_rule(
    mut words: Vec<(Vec<u32>, u64)>,
    max: usize,
    min_frequency: u64,
) -> Vec<(u32, u32, u64)> {
    let mut merges = Vec::new();
    while merges.len() < max {
        // Pairs in the order the text shows them: words in order of first occurrence, then
        // left to right in a word.
        let mut counts: Vec<((u32, u32), u64)> = Vec::new();
        let mut at: HashMap<(u32, u32), usize> = HashMap::new();
        for (word, freq) in &words {
            for p in word.windows(2) {
                let pair = (p[0], p[1]);
                match at.get(&pair) {
                    Some(&i) => counts[i].1 += freq,
                    None => {
                        at.insert(pair, counts.len());
                        counts.push((pair, *freq));
                    }
                }
            }
        }
        // The first of the most frequent.
        let mut best: Option<((u32, u32), u64)> = None;
        for &(pair, count) in &counts {
            if best.is_none_or(|(_, c)| count > c) {
                best = Some((pair, count));
            }
        }
        let Some(((a, b), count)) = best else { break };
        if count < min_frequency.max(1) {
            break;
        }
        let id = 256 + merges.len() as u32;
        merges.push((a, b, count));
        for (word, _) in &mut words {
            *word = replace(word, (a, b), id);
        }
    }
    merges
}

/// `word` with every occurrence of `pair` replaced by `id`, left to right, without overlap.
fn replace(word: &[u32], pair: (u32, u32), id: u32) -> Vec<u32> {
    let mut out = Vec::with_capacity(word.len());
    let mut i = 0;
    while i < word.len() {
        if i + 1 < word.len() && (word[i], word[i + 1]) == pair {
            out.push(id);
            i += 2;
        } else {
            out.push(word[i]);
            i += 1;
        }
    }
    out
}

/// The learned merges make a vocabulary whose encoding of each text (as plain text) equals
/// the merges applied to each chunk's bytes in the order they were learned.
fn check_encoding(pattern: &str, merges: &[Merge], texts: &[String]) {
    let mut tokens: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
    for m in merges {
        let t = [
            tokens[m.left as usize].clone(),
            tokens[m.right as usize].clone(),
        ]
        .concat();
        tokens.push(t);
    }
    let vocab = Vocab::new(&tokens).expect("trained merges make distinct tokens");
    let enc = Encoder::new(vocab, Splitter::new(pattern).unwrap(), &[]).unwrap();
    for text in texts {
        let mut got = Vec::new();
        enc.encode_ordinary(text, &mut got).unwrap();
        let mut want = Vec::new();
        for chunk in enc.splitter().chunks(text).unwrap() {
            let mut ids: Vec<u32> = chunk.bytes().map(u32::from).collect();
            for (k, m) in merges.iter().enumerate() {
                ids = replace(&ids, (m.left, m.right), 256 + k as u32);
            }
            want.extend(ids);
        }
        assert_eq!(
            got, want,
            "{pattern}: encoding {text:?} with the learned merges"
        );
    }
}
