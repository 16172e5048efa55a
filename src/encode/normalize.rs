//! Unicode normalization of the text between special tokens, for the tokenizers that HF
//! `tokenizer.json` files describe with an `NFC`, `NFD`, `NFKC` or `NFKD` normalizer (Qwen 2/3,
//! MiniMax, GPT-NeoX). HF normalizes each piece of text its added tokens leave, before it
//! splits it, with the crate used here; the encoder does the same with each segment between
//! special tokens (`Encoder::encode_ordinary`, `Encoder::count`).
//!
//! A text may be cut for threads between two ASCII characters (`pretokenize::cut`), and
//! normalizing the pieces gives the normalized whole: an ASCII character is a starter that no
//! mark before it reorders, and it decomposes to itself, so only a mark after it can compose
//! with it, and a cut never falls before a mark.

use std::borrow::Cow;
use unicode_normalization_alignments::{
    is_nfc_quick, is_nfd_quick, is_nfkc_quick, is_nfkd_quick, IsNormalized, UnicodeNormalization,
};

/// One of Unicode's four normalization forms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Normalizer {
    Nfc,
    Nfd,
    Nfkc,
    Nfkd,
}

impl Normalizer {
    /// The form named `NFC`, `NFD`, `NFKC` or `NFKD` (HF's normalizer types).
    pub fn parse(name: &str) -> Option<Normalizer> {
        match name {
            "NFC" => Some(Normalizer::Nfc),
            "NFD" => Some(Normalizer::Nfd),
            "NFKC" => Some(Normalizer::Nfkc),
            "NFKD" => Some(Normalizer::Nfkd),
            _ => None,
        }
    }

    /// Its name, as [`Normalizer::parse`] takes it.
    pub fn name(self) -> &'static str {
        match self {
            Normalizer::Nfc => "NFC",
            Normalizer::Nfd => "NFD",
            Normalizer::Nfkc => "NFKC",
            Normalizer::Nfkd => "NFKD",
        }
    }

    /// `text` in this form: borrowed when it already is (ASCII always is, and is checked
    /// first, at memory speed), else a normalized copy.
    ///
    /// ```
    /// use tokenmill::encode::normalize::Normalizer;
    ///
    /// assert_eq!(Normalizer::Nfc.apply("e\u{301}"), "\u{e9}");
    /// assert_eq!(Normalizer::Nfkc.apply("ﬁ ①"), "fi 1");
    /// assert!(matches!(Normalizer::Nfd.apply("plain"), std::borrow::Cow::Borrowed(_)));
    /// ```
    pub fn apply(self, text: &str) -> Cow<'_, str> {
        if text.is_ascii() {
            return Cow::Borrowed(text);
        }
        let quick = match self {
            Normalizer::Nfc => is_nfc_quick(text.chars()),
            Normalizer::Nfd => is_nfd_quick(text.chars()),
            Normalizer::Nfkc => is_nfkc_quick(text.chars()),
            Normalizer::Nfkd => is_nfkd_quick(text.chars()),
        };
        if quick == IsNormalized::Yes {
            return Cow::Borrowed(text);
        }
        let chars: String = match self {
            Normalizer::Nfc => text.nfc().map(|(c, _)| c).collect(),
            Normalizer::Nfd => text.nfd().map(|(c, _)| c).collect(),
            Normalizer::Nfkc => text.nfkc().map(|(c, _)| c).collect(),
            Normalizer::Nfkd => text.nfkd().map(|(c, _)| c).collect(),
        };
        Cow::Owned(chars)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms_compose_and_decompose() {
        let text = "Ame\u{301}lie ﬁ Å";
        assert_eq!(Normalizer::Nfc.apply(text), "Amélie ﬁ Å");
        assert_eq!(Normalizer::Nfd.apply("é"), "e\u{301}");
        assert_eq!(Normalizer::Nfkc.apply(text), "Amélie fi Å");
        assert_eq!(Normalizer::Nfkd.apply("ﬁé"), "fie\u{301}");
        for form in [
            Normalizer::Nfc,
            Normalizer::Nfd,
            Normalizer::Nfkc,
            Normalizer::Nfkd,
        ] {
            assert_eq!(Normalizer::parse(form.name()), Some(form));
            assert!(matches!(form.apply("ascii only"), Cow::Borrowed(_)));
        }
        assert_eq!(Normalizer::parse("Lowercase"), None);
    }

    /// Cutting between two ASCII characters and normalizing the pieces gives the normalized
    /// whole (what `encode_parallel` relies on), even where a mark follows the cut's right side.
    #[test]
    fn pieces_cut_between_ascii_characters_normalize_as_the_whole() {
        let text = "x>\u{338}a e\u{301}\u{323}b\nc\u{30a}\u{327} d ﬁ\u{301}";
        for form in [
            Normalizer::Nfc,
            Normalizer::Nfd,
            Normalizer::Nfkc,
            Normalizer::Nfkd,
        ] {
            let whole = form.apply(text);
            let b = text.as_bytes();
            for cut in 1..b.len() {
                if b[cut - 1].is_ascii() && b[cut].is_ascii() {
                    let joined = form.apply(&text[..cut]).into_owned() + &form.apply(&text[cut..]);
                    assert_eq!(joined, whole, "{form:?} cut at {cut}");
                }
            }
        }
    }
}
