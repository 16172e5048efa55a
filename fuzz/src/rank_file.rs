//! (e) tiktoken rank files of arbitrary bytes: `parse_rank_file` gives tokens or an error
//! (`VocabFile`, naming a line of the file), never a panic, an abort or an allocation beyond
//! the input's size (`scripts/fuzz.sh` runs it under `-rss_limit_mb` and `-malloc_limit_mb`).
//! Ranks no line gives and empty tokens are gaps. What it accepts goes on as `CoreTokenizer.from_rank_file` takes it: `Vocab::new` (an
//! error, or a vocabulary), then an encoder that encodes and decodes a text back; and it
//! reads back the same from the file tiktoken would write of it.

use tokenmill::vocab::parse_rank_file;
use tokenmill::{Encoder, Error, Splitter, Vocab};

const TEXT: &str = "Hello world! It's 2024:\n\tnaïve café, 日本語 🙂";

pub fn run(data: &[u8]) {
    let tokens = match parse_rank_file(data) {
        Ok(tokens) => tokens,
        Err(Error::VocabFile { line, .. }) => {
            let lines = data.iter().filter(|&&b| b == b'\n').count() + 1;
            assert!(line >= 1 && line <= lines, "line {line} of {lines}");
            return;
        }
        Err(e) => panic!("not a VocabFile error: {e:?}"),
    };
    // Ranks no line gives and empty tokens are gaps, no more than the tokens.
    let gaps = tokens.iter().filter(|t| t.is_empty()).count();
    assert!(gaps <= tokens.len() - gaps);
    // Written without its gaps, a file reads back the same but for gaps after the last token.
    let mut kept = tokens.clone();
    while kept.last().is_some_and(Vec::is_empty) {
        kept.pop();
    }
    assert_eq!(
        parse_rank_file(&dump(&tokens)).unwrap(),
        kept,
        "written and read back"
    );
    let vocab = match Vocab::new(&tokens) {
        Ok(vocab) => vocab,
        Err(Error::InvalidVocab { .. }) => return,
        Err(e) => panic!("not an InvalidVocab error: {e:?}"),
    };
    assert_eq!(vocab.len(), tokens.len());
    let enc = Encoder::new(vocab, Splitter::new("cl100k").unwrap(), &[]).unwrap();
    let mut ids = Vec::new();
    enc.encode_ordinary(TEXT, &mut ids).unwrap();
    let mut back = Vec::new();
    enc.decode_bytes(&ids, &mut back).unwrap();
    assert_eq!(back, TEXT.as_bytes());
}

/// A rank file as tiktoken writes one: `<base64> <rank>` a line.
fn dump(tokens: &[Vec<u8>]) -> Vec<u8> {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = Vec::new();
    for (rank, t) in tokens.iter().enumerate().filter(|(_, t)| !t.is_empty()) {
        for group in t.chunks(3) {
            let n =
                group.iter().fold(0u32, |n, &b| n << 8 | u32::from(b)) << (8 * (3 - group.len()));
            for k in 0..4 {
                out.push(if k <= group.len() {
                    ALPHABET[(n >> (18 - 6 * k) & 63) as usize]
                } else {
                    b'='
                });
            }
        }
        out.extend_from_slice(format!(" {rank}\n").as_bytes());
    }
    out
}
