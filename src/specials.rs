//! Special tokens: strings such as `<|endoftext|>` that stand for one id each, cut out of the
//! text before it is split. Encoding follows tiktoken's policy ([`Specials::walk`]): a special
//! the caller disallows is an error, one it allows is its id, any other is plain text. Training
//! cuts every special out (`special_matcher`), so none is ever merged.
//!
//! Some are *late* ([`Specials::with_late`]): HF's added tokens with `normalized` true, which HF
//! looks for in the normalized text that the others leave, spelled as the normalizer spells
//! them ([`Specials::walk_late`]). And some take the whitespace beside them with them
//! ([`Specials::with_strips`]: HF's `lstrip` and `rstrip`).

use crate::error::Error;
use crate::vocab::Vocab;
use aho_corasick::{AhoCorasick, MatchKind};
use rustc_hash::FxHashMap;

/// How many ids a vocabulary may leave unused below its largest special token. Real
/// vocabularies leave a few (cl100k_base: 15, o200k_base: 20); a special id far beyond the
/// vocabulary is a mistake in a file or a call, and ids size the tables of an id's int and
/// the numpy dtype, so it is refused at load rather than met later as an allocation of
/// gigabytes.
pub const MOST_UNUSED_IDS: usize = 1 << 20;

/// Special tokens: strings cut out of the text before splitting, each with a fixed id.
#[derive(Debug, Clone)]
pub struct Specials {
    names: Vec<String>,
    ids: Vec<u32>,
    by_id: FxHashMap<u32, usize>,
    /// Whether each name is late (matched in the normalized text).
    late: Vec<bool>,
    /// Whether each takes the whitespace before it (`.0`) and after it (`.1`) with it.
    strips: Vec<(bool, bool)>,
    /// Finds the names that are not late, in the text as given.
    early_matcher: Option<Matcher>,
    /// Finds the late names, as normalized, in the normalized text.
    late_matcher: Option<Matcher>,
}

/// Finds some special tokens' strings in text.
#[derive(Debug, Clone)]
struct Matcher {
    strings: AhoCorasick,
    /// Which special token each string is (its index in `Specials::names`).
    which: Vec<usize>,
    /// The distinct first bytes of the strings, sorted: where none is, no string starts.
    first_bytes: Vec<u8>,
}

impl Specials {
    /// Build from `(string, id)` pairs; an id must be past the ranks of `vocab` or one of its
    /// gaps, and the ids leave at most [`MOST_UNUSED_IDS`] ids unused.
    pub fn new(specials: &[(String, u32)], vocab: &Vocab) -> Result<Specials, Error> {
        let mut by_id = FxHashMap::default();
        let mut seen = FxHashMap::default();
        let n_ranks = vocab.len();
        let limit = n_ranks + specials.len() + MOST_UNUSED_IDS;
        for (i, (name, id)) in specials.iter().enumerate() {
            if (*id as usize) < n_ranks && !vocab.is_gap(*id) {
                return Err(Error::InvalidSpecialTokens {
                    message: format!(
                        "special token {name:?} has id {id}, which is already an ordinary token"
                    ),
                });
            }
            if *id as usize >= limit {
                return Err(Error::InvalidSpecialTokens {
                    message: format!(
                        "special token {name:?} has id {id}, far past the vocabulary's {n_ranks} \
                         ordinary tokens and {} special ones: ids must be below {limit} (at \
                         most {MOST_UNUSED_IDS} unused ids)",
                        specials.len()
                    ),
                });
            }
            // Two names may share an id (tiktoken's o200k_harmony does); decoding gives the last.
            by_id.insert(*id, i);
            if seen.insert(name.as_str(), i).is_some() {
                return Err(Error::InvalidSpecialTokens {
                    message: format!("special token {name:?} is listed twice"),
                });
            }
        }
        let names: Vec<String> = specials.iter().map(|(n, _)| n.clone()).collect();
        Ok(Specials {
            early_matcher: Matcher::new(&names, (0..names.len()).collect())?,
            late_matcher: None,
            late: vec![false; names.len()],
            strips: vec![(false, false); names.len()],
            names,
            ids: specials.iter().map(|(_, id)| *id).collect(),
            by_id,
        })
    }

    /// These specials with the ones named in `late` matched in the normalized text, spelled
    /// as `normalize` spells them; all others in the text as given.
    pub fn with_late(
        mut self,
        late: &[String],
        normalize: impl Fn(&str) -> String,
    ) -> Result<Specials, Error> {
        for name in late {
            let k = self.index(name, "late")?;
            self.late[k] = true;
        }
        let pick = |late: bool| -> (Vec<String>, Vec<usize>) {
            (0..self.names.len())
                .filter(|&k| self.late[k] == late)
                .map(|k| (self.names[k].clone(), k))
                .unzip()
        };
        let (early, early_which) = pick(false);
        let (late, late_which) = pick(true);
        let spelled: Vec<String> = late.iter().map(|n| normalize(n)).collect();
        self.early_matcher = Matcher::new(&early, early_which)?;
        self.late_matcher = Matcher::new(&spelled, late_which)?;
        Ok(self)
    }

    /// These specials with the ones named in `left` taking the whitespace before them with
    /// them, when they are found, and those in `right` the whitespace after them (HF's
    /// `lstrip` and `rstrip`: the whitespace is not encoded).
    pub fn with_strips(mut self, left: &[String], right: &[String]) -> Result<Specials, Error> {
        for name in left {
            let k = self.index(name, "lstrip")?;
            self.strips[k].0 = true;
        }
        for name in right {
            let k = self.index(name, "rstrip")?;
            self.strips[k].1 = true;
        }
        Ok(self)
    }

    /// The special tokens that take the whitespace before them and after them (see
    /// [`Specials::with_strips`]), in definition order.
    pub fn strips(&self) -> (Vec<&str>, Vec<&str>) {
        let named = |side: fn(&(bool, bool)) -> bool| {
            (0..self.names.len())
                .filter(|&k| side(&self.strips[k]))
                .map(|k| self.names[k].as_str())
                .collect()
        };
        (named(|s| s.0), named(|s| s.1))
    }

    fn index(&self, name: &str, given_as: &str) -> Result<usize, Error> {
        self.names
            .iter()
            .position(|n| n == name)
            .ok_or_else(|| Error::InvalidSpecialTokens {
                message: format!("{name:?} is given as {given_as} but is not a special token"),
            })
    }

    /// The late special tokens' strings (see [`Specials::with_late`]), in definition order.
    pub fn late(&self) -> impl Iterator<Item = &str> {
        (0..self.names.len())
            .filter(|&k| self.late[k])
            .map(|k| self.names[k].as_str())
    }

    /// Whether any special token is late.
    pub fn has_late(&self) -> bool {
        self.late_matcher.is_some()
    }

    /// The largest special id, if there is a special token.
    pub fn max_id(&self) -> Option<u32> {
        self.ids.iter().copied().max()
    }

    /// The (string, id) pairs, in definition order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, u32)> {
        self.names
            .iter()
            .map(String::as_str)
            .zip(self.ids.iter().copied())
    }

    /// The string of special token `id`.
    pub fn name(&self, id: u32) -> Option<&str> {
        self.by_id.get(&id).map(|&i| self.names[i].as_str())
    }

    /// The id of a special-token string.
    pub fn id(&self, name: &str) -> Option<u32> {
        self.names
            .iter()
            .position(|n| n == name)
            .map(|i| self.ids[i])
    }

    /// Walk `text` under tiktoken's special-token policy: a `disallowed` special anywhere is
    /// an error; each `allowed` special goes to `on_special`, the text between to `on_text`.
    /// Late specials are not looked for: see [`Specials::walk_late`].
    pub fn walk<'t>(
        &self,
        text: &'t str,
        allowed: Allowed<'_>,
        disallowed: Allowed<'_>,
        on_text: impl FnMut(&'t str) -> Result<(), Error>,
        on_special: impl FnMut(u32),
    ) -> Result<(), Error> {
        self.walk_with(
            self.early_matcher.as_ref(),
            text,
            allowed,
            disallowed,
            on_text,
            on_special,
        )
    }

    /// [`Specials::walk`] for the late specials, in a normalized piece of text that `walk`
    /// left.
    pub fn walk_late<'t>(
        &self,
        text: &'t str,
        allowed: Allowed<'_>,
        disallowed: Allowed<'_>,
        on_text: impl FnMut(&'t str) -> Result<(), Error>,
        on_special: impl FnMut(u32),
    ) -> Result<(), Error> {
        self.walk_with(
            self.late_matcher.as_ref(),
            text,
            allowed,
            disallowed,
            on_text,
            on_special,
        )
    }

    /// Walk `text` with `matcher`: see [`Specials::walk`]. A special that takes the whitespace
    /// beside it takes it from the text between; the next search starts after it, as HF's
    /// does when no special starts with whitespace (the HF reader checks that).
    fn walk_with<'t>(
        &self,
        matcher: Option<&Matcher>,
        text: &'t str,
        allowed: Allowed<'_>,
        disallowed: Allowed<'_>,
        mut on_text: impl FnMut(&'t str) -> Result<(), Error>,
        mut on_special: impl FnMut(u32),
    ) -> Result<(), Error> {
        let Some(matcher) = matcher else {
            return on_text(text);
        };
        if !disallowed.is_none() {
            let refused = matcher.find(text, 0, |k| disallowed.contains(self.ids[k]));
            if let Some((s, e, _)) = refused {
                return Err(Error::DisallowedSpecialToken {
                    token: text[s..e].to_string(),
                });
            }
        }
        let mut start = 0;
        if !allowed.is_none() {
            while let Some((mut s, mut e, k)) =
                matcher.find(text, start, |k| allowed.contains(self.ids[k]))
            {
                let (left, right) = self.strips[k];
                if left {
                    s = text[start..s].trim_end().len() + start;
                }
                if right {
                    e = text.len() - text[e..].trim_start().len();
                }
                on_text(&text[start..s])?;
                on_special(self.ids[k]);
                start = e;
            }
        }
        on_text(&text[start..])
    }
}

impl Matcher {
    /// A matcher for `strings`, `which[i]` the special token `strings[i]` is; None when there
    /// are none.
    fn new(strings: &[String], which: Vec<usize>) -> Result<Option<Matcher>, Error> {
        let Some(found) = special_matcher(strings)? else {
            return Ok(None);
        };
        let mut first_bytes: Vec<u8> = strings.iter().filter_map(|n| n.bytes().next()).collect();
        first_bytes.sort_unstable();
        first_bytes.dedup();
        Ok(Some(Matcher {
            strings: found,
            which,
            first_bytes,
        }))
    }

    /// Leftmost occurrence at or after `from` of a string whose special token (its index)
    /// `accept` accepts: where it starts and ends, and the index.
    ///
    /// Like tiktoken, a match that is not accepted makes the search resume one byte after its
    /// start, so a rejected token cannot hide an accepted one that overlaps it.
    fn find(
        &self,
        text: &str,
        mut from: usize,
        accept: impl Fn(usize) -> bool,
    ) -> Option<(usize, usize, usize)> {
        while from <= text.len() {
            from += self.first_byte_in(text.as_bytes().get(from..)?)?;
            let input = aho_corasick::Input::new(text).range(from..);
            let m = self.strings.find(input)?;
            let k = self.which[m.pattern().as_usize()];
            if accept(k) {
                return Some((m.start(), m.end(), k));
            }
            from = m.start() + 1;
        }
        None
    }

    /// Where the first byte of a string first is in `hay` (None: nowhere), by `memchr` when
    /// the strings start with at most three distinct bytes (OpenAI's all start with `<`);
    /// else 0. tiktoken's `encode` searches every text for its specials, and on a short text
    /// the matcher alone costs more than encoding it (docs/performance.md, 'Special tokens').
    #[inline]
    fn first_byte_in(&self, hay: &[u8]) -> Option<usize> {
        match self.first_bytes[..] {
            [a] => memchr::memchr(a, hay),
            [a, b] => memchr::memchr2(a, b, hay),
            [a, b, c] => memchr::memchr3(a, b, c, hay),
            _ => Some(0),
        }
    }
}

/// The matcher that finds special-token strings in text (leftmost, longest on overlaps), or
/// None when there are none; shared by encoding and by training, which cuts them out.
pub(crate) fn special_matcher(names: &[String]) -> Result<Option<AhoCorasick>, Error> {
    if let Some(s) = names.iter().find(|s| s.is_empty()) {
        return Err(Error::InvalidSpecialTokens {
            message: format!("a special token is the empty string ({s:?})"),
        });
    }
    if names.is_empty() {
        return Ok(None);
    }
    AhoCorasick::builder()
        .match_kind(MatchKind::LeftmostLongest)
        .build(names)
        .map(Some)
        .map_err(|e| Error::InvalidSpecialTokens {
            message: e.to_string(),
        })
}

/// Which special tokens an `encode` call treats as special.
#[derive(Debug, Clone, Copy)]
pub enum Allowed<'a> {
    None,
    All,
    Ids(&'a [u32]),
}

impl Allowed<'_> {
    #[inline]
    fn contains(&self, id: u32) -> bool {
        match self {
            Allowed::None => false,
            Allowed::All => true,
            Allowed::Ids(ids) => ids.contains(&id),
        }
    }

    fn is_none(&self) -> bool {
        match self {
            Allowed::None => true,
            Allowed::All => false,
            Allowed::Ids(ids) => ids.is_empty(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::Rng;
    use crate::vocab::testing;

    #[test]
    fn special_ids_far_past_the_vocabulary_are_refused() {
        let bytes = testing::of(&[]);
        let with = |id: u32| Specials::new(&[("<|a|>".into(), 256), ("<|b|>".into(), id)], &bytes);
        let last = (256 + 2 + MOST_UNUSED_IDS - 1) as u32;
        assert!(with(last).is_ok());
        for id in [last + 1, 1_000_000_000, u32::MAX] {
            match with(id) {
                Err(Error::InvalidSpecialTokens { message }) => {
                    assert!(message.contains("far past the vocabulary"), "{message}")
                }
                other => panic!("{id}: {other:?}"),
            }
        }
    }

    /// A special id may fill a gap in the ranks, never an ordinary token's id.
    #[test]
    fn special_ids_may_fill_gaps_only() {
        let mut tokens: Vec<Vec<u8>> = vec![Vec::new()];
        tokens.extend((0..=255u8).map(|b| vec![b]));
        let vocab = Vocab::new(&tokens).unwrap();
        assert!(Specials::new(&[("<s>".into(), 0)], &vocab).is_ok());
        match Specials::new(&[("<s>".into(), 1)], &vocab) {
            Err(Error::InvalidSpecialTokens { message }) => {
                assert!(message.contains("already an ordinary token"), "{message}")
            }
            other => panic!("{other:?}"),
        }
    }
    /// Every special-token search finds what a plain search does (leftmost, longest of those
    /// starting there, resuming one byte after a rejected one), whether the names start with
    /// one, two, three or more distinct bytes (`Specials::first_byte_in`).
    #[test]
    fn special_search_equals_a_plain_search() {
        let sets: [&[&str]; 4] = [
            &["<|a|>", "<|ab|>", "<|b|>"],
            &["<s>", "[P]", "[Px]"],
            &["<s>", "</s>", "[P]", "{x}"],
            &["<s>", "[P]", "{x}", "#", "xy"],
        ];
        let alphabet = [
            "<", "|", "a", "b", ">", "[", "P", "]", "{", "x", "}", "#", "y", "s", "/",
        ];
        let mut rng = Rng(0x5eed_5eed);
        for names in sets {
            let pairs: Vec<(String, u32)> = (0..names.len())
                .map(|k| (names[k].to_string(), 300 + k as u32))
                .collect();
            let specials = Specials::new(&pairs, &testing::of(&[])).unwrap();
            for _ in 0..3000 {
                // Pieces of names and whole ones, so that matches are frequent.
                let text: String = (0..rng.below(12))
                    .map(|_| match rng.below(3) {
                        0 => names[rng.below(names.len())],
                        _ => alphabet[rng.below(alphabet.len())],
                    })
                    .collect();
                // All accepted, or the odd ids rejected.
                for odd in [true, false] {
                    let accept = |id: u32| odd || id.is_multiple_of(2);
                    let plain = (0..=text.len()).find_map(|s| {
                        let (k, name) = names
                            .iter()
                            .enumerate()
                            .filter(|(_, n)| text[s..].starts_with(**n))
                            .max_by_key(|(_, n)| n.len())?;
                        accept(300 + k as u32).then_some((s, s + name.len(), 300 + k as u32))
                    });
                    let found = specials
                        .early_matcher
                        .as_ref()
                        .unwrap()
                        .find(&text, 0, |k| accept(specials.ids[k]))
                        .map(|(s, e, k)| (s, e, specials.ids[k]));
                    assert_eq!(found, plain, "{names:?} {text:?}");
                }
            }
        }
    }
}
