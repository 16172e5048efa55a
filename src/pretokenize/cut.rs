//! Where a text may be cut without changing the chunks of a pattern the scanners run (gpt2,
//! cl100k, o200k and their families' variants, `shapes`): the pieces, split apart, give the
//! chunks the whole text gives. Counting for training
//! cuts long texts for threads at [`next_newline_cut`]; encoding one text on several threads
//! cuts it at [`next_cut`]. No cut rule is proved for other patterns, so their texts are never
//! cut. Both rules need only ASCII around the cut, so a cut is a character boundary.
//!
//! **After a newline** ([`after_newline`]): right after a `\n` that follows a printable ASCII
//! character (not whitespace) and precedes an ASCII letter or digit. No alternative of the three
//! patterns matches a newline followed by a letter or digit (a letter may follow one optional
//! non-newline character or a space; a newline ends a chunk or is followed by more whitespace,
//! or `/` in o200k). The left part then ends in a newline, where `\s++$` (gpt2, cl100k) matches
//! at the new end of text: with a non-space before the newline that is the lone `\n`, as in the
//! whole text (without `\s++$`, `\s*[\r\n]` takes that lone `\n` too). A newline after other whitespace is *not* safe: gpt2 splits `"  \nb"` into
//! `"  "`, `"\n"`, `"b"`, but `"  \n"` at the end of a text into one chunk (`\s++$`).
//!
//! **Before a space between letters**: right before a single space between two ASCII letters.
//! No alternative of the three patterns matches a letter followed by a space, so the chunk on
//! the left ends at the letter either way, and the space followed by a letter starts the chunk
//! ` word` (gpt2's ` ?\p{L}+`, cl100k's and o200k's `[^\r\n\p{L}\p{N}]?` letter runs) whether or
//! not the text starts there.
//!
//! Python's readers, trainer and encoders of long texts cut by the same rules
//! (`python/tokenmill/sources/cut.py`), and `tests/test_parallel_encode.py` checks encodings of
//! cut texts against whole ones.

/// Whether `text` may be cut at `i` (`2 <= i < text.len()`) by the newline rule: a `\n` after
/// a printable ASCII character, before an ASCII letter or digit.
#[inline]
pub fn after_newline(text: &[u8], i: usize) -> bool {
    text[i - 1] == b'\n' && text[i].is_ascii_alphanumeric() && text[i - 2].is_ascii_graphic()
}

/// The first place at or after `from` (and before `end`) where `text` may be cut by the
/// newline rule ([`after_newline`]).
pub fn next_newline_cut(text: &[u8], from: usize, end: usize) -> Option<usize> {
    (from.max(2)..end.min(text.len())).find(|&i| after_newline(text, i))
}

/// The first place at or after `from` where `text` may be cut by either rule.
pub fn next_cut(text: &[u8], from: usize) -> Option<usize> {
    let letter = |i: usize| text.get(i).is_some_and(u8::is_ascii_alphabetic);
    (from.max(2)..text.len())
        .find(|&i| after_newline(text, i) || (text[i] == b' ' && letter(i - 1) && letter(i + 1)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pretokenize::{Shape, Splitter};

    #[test]
    fn newline_cuts_are_after_a_newline_before_alphanumeric() {
        assert_eq!(next_newline_cut(b"ab\nc\n\nd", 0, 7), Some(3));
        assert_eq!(next_newline_cut(b"ab\n\nc \nd", 0, 8), None);
        assert_eq!(next_newline_cut(b"ab\n\n c", 0, 6), None);
    }

    #[test]
    fn cuts_by_both_rules_and_nowhere_else() {
        assert_eq!(next_cut(b"ab\nc", 0), Some(3));
        assert_eq!(next_cut(b"ab cd", 0), Some(2));
        // After whitespace, before a non-alphanumeric, between digits: no cut.
        assert_eq!(next_cut(b"a \nb", 0), None);
        assert_eq!(next_cut(b"ab\n.c", 0), None);
        assert_eq!(next_cut(b"12 34", 0), None);
        assert_eq!(next_cut(b"a  b", 0), None);
        assert_eq!(next_cut("é b".as_bytes(), 0), None);
        assert_eq!(next_cut(b"ab cd ef", 3), Some(5));
        assert_eq!(next_cut(b"ab cd", 5), None);
    }

    #[test]
    fn cutting_at_either_rule_keeps_the_chunks_of_every_scanner_shape() {
        let text = "Hello, world!\nIt's 2024.\n中文\n1a\n\n\nNew  \nline\tend\t\nx \n\n1 2\r\nok!\n/path\n\u{e9}t\u{e9}\n\u{a0}\nZ said so";
        let b = text.as_bytes();
        let deepseek = Splitter::sequence(&crate::pretokenize::deepseek::STAGES).unwrap();
        let splitters = Shape::ALL.map(|shape| Splitter::new(&shape.pattern()).unwrap());
        for s in splitters.iter().chain([&deepseek]) {
            let pattern = s.pattern();
            let whole = s.chunks(text).unwrap();
            type Rule = fn(&[u8], usize) -> Option<usize>;
            let rules: [Rule; 2] = [|b, at| next_newline_cut(b, at, b.len()), next_cut];
            for next in rules {
                let mut at = 0;
                while let Some(cut) = next(b, at + 1) {
                    let mut parts = s.chunks(&text[..cut]).unwrap();
                    parts.extend(s.chunks(&text[cut..]).unwrap());
                    assert_eq!(parts, whole, "{pattern} cut at {cut}");
                    at = cut;
                }
                assert!(at > 0);
            }
        }
    }
}
