r"""Pre-tokenization against its oracle, Python's ``regex`` module with tiktoken's Unicode data.

For the named patterns, tokenmill's hand-written scanners must give exactly
``regex.findall(for_regex(PATTERN), text)`` on every string: ``regex``'s semantics, with each
class (``\p{L}``, ``\s``, ...) spelled out as the code points tiktoken's engine puts in it
(``tokenmill.unicode_data``; ``regex``'s own Unicode data is newer and differs on some 17,500 code
points, on which the scanners follow tiktoken, checked directly below). Checked four ways:

- hypothesis, on arbitrary Unicode text and on text built from the characters where the
  patterns are subtle (whitespace kinds, CR/LF, apostrophes and contraction letters including
  case folds such as U+017F, non-ASCII digits, marks, title case, emoji);
- every code point (surrogates aside) in a dozen short contexts;
- the shared corpora, whole files and line by line;
- tiktoken itself, on a sample (it should agree with ``regex``; DESIGN.md §2).

A custom pattern runs on fancy-regex: its chunks are ``regex``'s matches plus the text
between them.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import regex
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from oracle import remembered

from tokenmill import _core, reference
from tokenmill.unicode_data import for_regex, members, regex_differs

TIKTOKEN_PATTERNS = {
    "gpt2": _core.GPT2_PATTERN,
    "cl100k": _core.CL100K_PATTERN,
    "o200k": _core.O200K_PATTERN,
}
# Open models' patterns that the scanners run too (src/pretokenize/shapes.rs), as the models'
# files spell them.
OPEN_PATTERNS = {
    # GPT-2's own, as HF's ByteLevel pre-tokenizer runs it.
    "gpt2_hf": r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+",
    "llama3": r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}"
    r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+",
    "qwen2": r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}"
    r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+",
    # Qwen 3.5's: Qwen2's with marks among the letters.
    "qwen35": r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}"
    r"| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+",
    "tekken": r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+"
    r"|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*"
    r"|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+",
}
PATTERNS = TIKTOKEN_PATTERNS | OPEN_PATTERNS
COMPILED = {name: regex.compile(for_regex(p)) for name, p in PATTERNS.items()}
NAMES = list(PATTERNS)


def expect(name: str, text: str) -> list[str]:
    ask = lambda: COMPILED[name].findall(text)  # noqa: E731
    return remembered(f"regex {regex.__version__}", (PATTERNS[name], text), len(text), ask)


def check(name: str, text: str) -> None:
    got = _core.split(PATTERNS[name], text)
    want = expect(name, text)
    assert got == want, f"{name} {text!r}"
    assert "".join(got) == text


# ---------------------------------------------------------------------------------------------
# Worked examples: each one is a subtlety found while writing the scanners.

EXAMPLES = [
    # (pattern, text, chunks)
    ("gpt2", "I've  got 123 cats!", ["I", "'ve", " ", " got", " 123", " cats", "!"]),
    ("gpt2", "'S ''s 's", ["'", "S", " ''", "s", " '", "s"]),  # case-sensitive contractions
    ("gpt2", "x\u0301", ["x", "\u0301"]),  # a mark is "other"
    ("gpt2", "a \n", ["a", " \n"]),  # \s++$: the whole final run
    ("gpt2", "a  \tb", ["a", "  ", "\t", "b"]),  # only a space prefixes letters
    ("cl100k", "'sam 'Sam 'ſam", ["'s", "am", " '", "Sam", " '", "ſam"]),
    ("cl100k", "'ſ", ["'ſ"]),  # (?i)s matches U+017F
    ("cl100k", "'lL'VE", ["'lL", "'VE"]),
    ("cl100k", "a\u0301b", ["a", "\u0301b"]),  # a mark prefixes the next letters
    ("cl100k", "12345 x", ["123", "45", " x"]),  # numbers: no space, at most three
    ("cl100k", "!!\n\nx", ["!!\n\n", "x"]),  # [\r\n]*+ after punctuation
    ("cl100k", "  \n  ", ["  \n  "]),  # \s++$ wins at the end of the text
    ("cl100k", "  \n  x", ["  \n", " ", " x"]),  # \s*[\r\n] backtracks to the last \n
    ("cl100k", "\u00a0x", ["\u00a0x"]),  # any non-CR/LF space can be the prefix
    ("o200k", "\u0301ABC", ["\u0301", "ABC"]),  # mark alone, then the capitals
    ("o200k", "中A", ["中", "A"]),  # Lo is lower-ish, so U*W+ stops after it
    ("o200k", "A\u0301B", ["A\u0301", "B"]),
    ("o200k", "HELLOworld AǅB'S", ["HELLOworld", " AǅB'S"]),
    ("o200k", "don't DON'T 'sam x'sam", ["don't", " DON'T", " '", "sam", " x's", "am"]),
    ("o200k", "'sam", ["'sam"]),  # `'` is a one-character prefix
    ("o200k", "  \n  ", ["  \n", "  "]),  # no \s++$ in o200k
    ("o200k", "!\n/\nx", ["!\n/\n", "x"]),  # [\r\n/]* after punctuation
    ("o200k", " \u0301", [" \u0301"]),
    ("o200k", "1234", ["123", "4"]),
    ("gpt2_hf", "a \n", ["a", " \n"]),  # \s+(?!\S) takes a final run whole, as \s++$
    ("llama3", "  \n  ", ["  \n", "  "]),  # no \s++$: the run ends at its last \n
    ("llama3", "'ſ 12345", ["'ſ", " ", "123", "45"]),
    ("qwen2", "x 123'S", ["x", " ", "1", "2", "3", "'S"]),  # single digits
    ("qwen35", "a\u0301b !\u0301", ["a\u0301b", " !", "\u0301"]),  # a mark is a letter
    ("qwen35", " \u0301\u0301x", [" \u0301\u0301x"]),  # ... and may be the prefix too
    ("tekken", "don't 12", ["don", "'t", " ", "1", "2"]),  # no contractions
    ("tekken", "x'LL", ["x", "'LL"]),
]


@pytest.mark.parametrize("name", list(OPEN_PATTERNS))
def test_open_models_patterns_run_on_scanners(name: str) -> None:
    assert _core.scanner_of(PATTERNS[name]) is not None
    assert _core.pattern_name(PATTERNS[name]) is None


@pytest.mark.parametrize(("name", "text", "chunks"), EXAMPLES)
def test_examples(name: str, text: str, chunks: list[str]) -> None:
    assert expect(name, text) == chunks  # the example itself is right
    assert _core.split(PATTERNS[name], text) == chunks


@pytest.mark.parametrize("alias", ["gpt2", "r50k_base", "p50k", "cl100k_base", "o200k_base"])
def test_aliases_and_pattern_strings_use_the_scanners(alias: str) -> None:
    name = _core.pattern_name(alias)
    assert name is not None
    text = "Hello, World! It's 2024...\n\n  x"
    assert _core.split(alias, text) == _core.split(PATTERNS[name], text) == expect(name, text)


def test_empty_text() -> None:
    for name in NAMES:
        assert _core.split(PATTERNS[name], "") == []
        assert _core.count_chunks(PATTERNS[name], "") == 0


# ---------------------------------------------------------------------------------------------
# Hypothesis.

HARD_ATOMS = [
    *(" ", "  ", "\t", "\r", "\n", "\r\n", "\n\n", "\x0b", "\x0c", "\x1c", "\x85", "\u00a0"),
    *("\u1680", "\u2000", "\u2028", "\u2029", "\u202f", "\u3000", "\u200b", "\ufeff", "\x00"),
    *("'", "'s", "'S", "'ll", "'LL", "'Ve", "'re", "'ſ", "’", "`"),
    *("s", "t", "d", "m", "l", "v", "e", "r", "S", "T", "D", "M", "L", "V", "E", "R"),
    *("ſ", "K", "\u212a", "ll", "ve", "re", "x", "X"),
    *("0", "1", "123", "1234", "٣", "۴", "Ⅻ", "²", "½", "𝟙"),
    *("é", "É", "ǅ", "ǈ", "ʰ", "ª", "ß", "ẞ", "Ω", "ω", "ё", "Ж", "中", "文", "の", "한"),
    *("א", "ع", "क", "ि", "्", "ก", "ั", "\u0301", "\u0308", "\u20dd", "\u1ab0"),
    *("😀", "👍🏽", "\u200d", "🇫🇷", "/", "//", "!", ".", ",", "-", "(", '"', "…", "#", "_"),
]
HARD_CHARS = sorted({c for atom in HARD_ATOMS for c in atom})
# ASCII text long enough for the scanners' 64-byte block path (its rules are all about ASCII).
ASCII_ATOMS_LONG = [a for a in HARD_ATOMS if a.isascii()]
ASCII_ATOMS_LONG += ["the", " The", "don't", "a1b2", "\n    "]

STRATEGIES = {
    "any_text": st.text(max_size=60),
    "hard_chars": st.text(alphabet=st.sampled_from(HARD_CHARS), max_size=40),
    "hard_atoms": st.lists(st.sampled_from(HARD_ATOMS), max_size=25).map("".join),
    "mixed": st.lists(st.one_of(st.sampled_from(HARD_ATOMS), st.text(max_size=3)), max_size=20).map(
        "".join
    ),
    "long_ascii": st.lists(st.sampled_from(ASCII_ATOMS_LONG), min_size=40, max_size=160).map(
        "".join
    ),
    "long_mixed": st.lists(
        st.one_of(st.sampled_from(ASCII_ATOMS_LONG), st.sampled_from(HARD_ATOMS)),
        min_size=40,
        max_size=160,
    ).map("".join),
}
HYPOTHESIS = settings(
    max_examples=int(os.environ.get("TOKENMILL_PRETOK_EXAMPLES", "400")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("strategy", list(STRATEGIES))
def test_hypothesis_matches_regex(name: str, strategy: str) -> None:
    @HYPOTHESIS
    @given(STRATEGIES[strategy])
    def run(text: str) -> None:
        check(name, text)

    run()


# ---------------------------------------------------------------------------------------------
# Every code point in short contexts.

# What the three patterns can tell apart in a character: the classes they use and the literal
# characters they name (`(?i:...)` ones under case folding). Two code points that agree on
# all of these behave identically under `regex`, so one representative per group answers
# for the group; several representatives are checked to agree, which tests that claim.
SIGNATURE_ATOMS = [
    *(r"\p{L}", r"\p{N}", r"\s", r"\p{Lu}", r"\p{Ll}", r"\p{Lt}", r"\p{Lm}", r"\p{Lo}", r"\p{M}"),
    *(r"\r", r"\n", " ", "/", "'", "(?i:')"),
    *"sdmtlver",
    *(f"(?i:{x})" for x in "sdmtlver"),
]
# Each context: text before, a marker for the code point, text after; "cc" doubles it.
CONTEXTS = {
    "a_c_a": ("a", "c", "a"),
    "sp_c_1": (" ", "c", "1"),
    "c_c_x": ("", "cc", "x"),
    "apos_c": ("'", "c", ""),
    "c_lf": ("", "c", "\n"),
    "apos_c_e": ("'", "c", "e"),
    "apos_l_c": ("'l", "c", ""),
    "A_c_apos_S": ("A", "c", "'S"),
    "c_A_a": ("", "c", "Aa"),
    "lf_c_sp": ("\n", "c", " "),
    "sp_sp_c": ("  ", "c", ""),
    "1_c_23": ("1", "c", "23"),
}
ALL_CODE_POINTS = np.array([c for c in range(0x110000) if not 0xD800 <= c < 0xE000])


def in_context(context: str, c: str) -> str:
    before, middle, after = CONTEXTS[context]
    return before + c * len(middle) + after


def all_in_context(context: str) -> tuple[str, int]:
    """Every code point in `context`, concatenated (built as UTF-32 by numpy, at once)."""
    before, middle, after = CONTEXTS[context]
    columns = [*(ord(x) for x in before), *([None] * len(middle)), *(ord(x) for x in after)]
    grid = np.empty((len(ALL_CODE_POINTS), len(columns)), dtype="<u4")
    for k, col in enumerate(columns):
        grid[:, k] = ALL_CODE_POINTS if col is None else col
    return grid.tobytes().decode("utf-32-le"), len(columns)


def chunk_mask(chunks: list[str]) -> int:
    """Bit k set when a chunk ends right after character k (as `_core.boundary_masks`)."""
    mask, pos = 0, 0
    for chunk in chunks:
        pos += len(chunk)
        mask |= 1 << (pos - 1)
    return mask


@pytest.fixture(scope="module")
def signature_groups() -> list[np.ndarray]:
    sig = np.zeros(len(ALL_CODE_POINTS), dtype=np.uint64)
    for k, atom in enumerate(SIGNATURE_ATOMS):
        hits = np.searchsorted(ALL_CODE_POINTS, np.array(sorted(members(atom)), dtype=np.int64))
        sig[hits] |= np.uint64(1 << k)
    _, inverse = np.unique(sig, return_inverse=True)
    order = np.argsort(inverse, kind="stable")
    bounds = np.flatnonzero(np.diff(inverse[order])) + 1
    return [ALL_CODE_POINTS[g] for g in np.split(order, bounds)]


@pytest.mark.parametrize("context", list(CONTEXTS))
def test_every_code_point_in_context(context: str, signature_groups: list[np.ndarray]) -> None:
    def make(c: str) -> str:
        return in_context(context, c)

    text, width = all_in_context(context)
    rng = random.Random(context)
    for name in NAMES:
        expected = np.zeros(len(ALL_CODE_POINTS), dtype=np.uint64)
        for group in signature_groups:
            picks = [0, len(group) - 1, *rng.sample(range(len(group)), min(10, len(group)))]
            reps = sorted({int(group[k]) for k in picks})
            masks = {int(c): chunk_mask(expect(name, make(chr(c)))) for c in reps}
            assert len(set(masks.values())) == 1, f"{name} {context}: group splits differ {masks}"
            positions = np.searchsorted(ALL_CODE_POINTS, group)
            expected[positions] = np.uint64(next(iter(masks.values())))
        got = _core.boundary_masks(PATTERNS[name], text, width)
        bad = np.flatnonzero(got != expected)
        if len(bad):
            c = int(ALL_CODE_POINTS[bad[0]])
            text = make(chr(c))
            pytest.fail(
                f"{name} {context}: {len(bad)} code points differ, first U+{c:04X}: "
                f"{_core.split(PATTERNS[name], text)} != {expect(name, text)}"
            )


@pytest.mark.skipif(
    not os.environ.get("TOKENMILL_FULL_ORACLE"),
    reason="slow (minutes): set TOKENMILL_FULL_ORACLE=1 to ask regex about every code point",
)
@pytest.mark.parametrize("context", list(CONTEXTS))
def test_every_code_point_against_regex_directly(context: str) -> None:
    texts = [in_context(context, chr(c)) for c in ALL_CODE_POINTS]
    text, width = all_in_context(context)
    assert text == "".join(texts)
    for name in NAMES:
        compiled = COMPILED[name]
        expected = np.array([chunk_mask(compiled.findall(t)) for t in texts], dtype=np.uint64)
        bad = np.flatnonzero(_core.boundary_masks(PATTERNS[name], text, width) != expected)
        assert not len(bad), f"{name} {context}: first U+{int(ALL_CODE_POINTS[bad[0]]):04X}"


def test_signature_groups_are_few(signature_groups: list[np.ndarray]) -> None:
    # Sanity: the grouping is coarse (so representatives are cheap) and total.
    assert 10 < len(signature_groups) < 100
    assert sum(len(g) for g in signature_groups) == len(ALL_CODE_POINTS)


def test_tables_are_generated_from_the_engine() -> None:
    """src/pretokenize/tables.rs is what scripts/gen_unicode_tables.py makes from this build's
    fancy-regex (a new `regex-syntax` must give the same tables, or they are regenerated and
    the scanners checked again)."""
    root = Path(__file__).resolve().parent.parent
    tables = root / "src" / "pretokenize" / "tables.rs"
    if not tables.is_file():
        pytest.skip("no source tree")
    script = root / "scripts" / "gen_unicode_tables.py"
    done = subprocess.run(
        [sys.executable, str(script), "--check"], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_boundary_masks() -> None:
    # Pieces "ab  ", "  cd", "x", each split on its own: "ab" + "  " (`\s++$` at the end of
    # its piece), " " + " cd", "x".
    masks = _core.boundary_masks("gpt2", "ab    cdx", 4)
    assert masks.tolist() == [0b1010, 0b1001, 0b1]
    assert _core.boundary_masks("gpt2", "", 3).tolist() == []
    for width in (0, 65):
        with pytest.raises(ValueError, match="width"):
            _core.boundary_masks("gpt2", "x", width)


# ---------------------------------------------------------------------------------------------
# Corpora.


def corpus_files(shared_data: Path) -> list[Path]:
    return sorted(shared_data.rglob("*.txt"))


# Per-line checks repeat the whole-file work, and `regex` runs at ~8 MB/s: past this many
# bytes per file, only every k-th line is checked (keeps this file's tests under a minute).
LINE_BUDGET = 300_000


@pytest.mark.parametrize("name", NAMES)
def test_corpora_whole_files(name: str, shared_data: Path) -> None:
    files = corpus_files(shared_data)
    assert files
    for path in files:
        text = path.read_text(encoding="utf-8")
        got = _core.split(PATTERNS[name], text)
        want = expect(name, text)
        if got != want:
            pairs = enumerate(zip(got, want, strict=False))
            k = next((i for i, (a, b) in pairs if a != b), min(len(got), len(want)))
            pytest.fail(
                f"{name} {path.name}: chunk {k}: {got[k - 2 : k + 3]} != {want[k - 2 : k + 3]}"
            )


@pytest.mark.parametrize("name", NAMES)
def test_corpora_line_by_line(name: str, shared_data: Path) -> None:
    for path in corpus_files(shared_data):
        text = path.read_text(encoding="utf-8")
        lines = text.splitlines(keepends=True)
        step = max(1, len(text.encode()) // LINE_BUDGET)
        sample = lines[::step]

        def ask(sample: list[str] = sample) -> list[list[str]]:
            return [COMPILED[name].findall(line) for line in sample]

        oracle = f"regex {regex.__version__}"
        wants = remembered(oracle, (PATTERNS[name], sample), sum(map(len, sample)), ask)
        for line, want in zip(sample, wants, strict=True):
            if _core.split(PATTERNS[name], line) != want:
                check(name, line)


@pytest.mark.parametrize("name", NAMES)
def test_corpora_random_slices(name: str, shared_data: Path) -> None:
    """Slices that start and end mid-word, mid-space, mid-line."""
    rng = random.Random(name)
    for path in corpus_files(shared_data):
        text = path.read_text(encoding="utf-8")
        for _ in range(30):
            a = rng.randrange(len(text))
            check(name, text[a : a + rng.randrange(1, 300)])


# ---------------------------------------------------------------------------------------------
# tiktoken, spot checks: its chunks are seen by giving it every `regex` chunk as a token, so a
# text encodes to one token per chunk exactly when tiktoken splits it as `regex` does.


def tiktoken_chunks(pattern: str, text: str, vocab: list[str]) -> list[str]:
    tiktoken = pytest.importorskip("tiktoken")
    ranks = {bytes([i]): i for i in range(256)}
    for chunk in vocab:
        ranks.setdefault(chunk.encode(), len(ranks))
    enc = tiktoken.Encoding(
        name="spot-check", pat_str=pattern, mergeable_ranks=ranks, special_tokens={}
    )
    return [b.decode() for b in enc.decode_tokens_bytes(enc.encode_ordinary(text))]


@pytest.mark.parametrize("name", NAMES)
def test_tiktoken_spot_checks(name: str) -> None:
    rng = random.Random(0)
    texts = [t for _, t, _ in EXAMPLES] + [
        "".join(rng.choice(HARD_ATOMS) for _ in range(rng.randrange(30))) for _ in range(300)
    ]
    text = "".join(texts)
    want = expect(name, text)
    assert tiktoken_chunks(PATTERNS[name], text, want) == want
    assert _core.split(PATTERNS[name], text) == want


def regex_own_differences() -> list[int]:
    """Code points that `regex`'s own Unicode data puts in another class than tiktoken's engine."""
    atoms = [r"\p{L}", r"\p{N}", r"\s", r"\p{M}"]
    atoms += [r"\p{Lu}", r"\p{Ll}", r"\p{Lt}", r"\p{Lm}", r"\p{Lo}"]
    return sorted({int(c) for atom in atoms for d in regex_differs(atom) for c in d})


@pytest.mark.parametrize("name", list(TIKTOKEN_PATTERNS))
def test_where_regex_data_differs_the_split_is_tiktokens(name: str) -> None:
    """On the code points whose class `regex` (2026.11: 17,560 of them) and tiktoken's engine
    disagree on, the scanners split as tiktoken does, and so does the oracle."""
    differ = regex_own_differences()
    if not differ:
        pytest.skip("this regex release has tiktoken's Unicode data")
    contexts = ["a_c_a", "sp_c_1", "A_c_apos_S", "apos_c_e", "c_A_a"]
    text = "".join(in_context(ctx, chr(c)) for c in differ for ctx in contexts)
    want = expect(name, text)
    assert want != regex.findall(PATTERNS[name], text), "these code points change the split"
    assert tiktoken_chunks(PATTERNS[name], text, want) == want
    assert _core.split(PATTERNS[name], text) == want


# ---------------------------------------------------------------------------------------------
# Custom patterns (fancy-regex): regex's matches, plus the text between them as chunks, which
# is what the readable reference's split does.


CUSTOM = [
    r"[a-z]+",
    r"\d+|\s+",
    r"\w+|[^\w\s]+",
    r"(?i:the)\b",
    r" ?[A-Za-z]+(?=[.,])",
    r"x*",  # empty matches are skipped
    r"'(?:[sdmt]|ll|ve|re)| ?[A-Za-z]++| ?[0-9]++| ?[^\sA-Za-z0-9]++|\s+(?!\S)|\s",
]
ASCII_ATOMS = ["the", "The", "x", "xx", " ", "  ", "\n", "7", "42", ".", ",", "'s", "'", "ab"]


@pytest.mark.parametrize("pattern", CUSTOM)
def test_custom_pattern_is_regex_plus_gaps(pattern: str) -> None:
    assert _core.pattern_name(pattern) is None

    @settings(HYPOTHESIS, max_examples=150)
    @given(st.lists(st.sampled_from(ASCII_ATOMS), max_size=20).map("".join))
    def run(text: str) -> None:
        assert _core.split(pattern, text) == reference.split(text, pattern)

    run()


@pytest.mark.parametrize("name", NAMES)
def test_regex_engine_on_named_patterns(name: str) -> None:
    """The fallback engine runs the named patterns too (benchmarks compare against it)."""
    text = "".join(t for _, t, _ in EXAMPLES) * 3
    assert _core.split_regex(PATTERNS[name], text) == expect(name, text)
    assert _core.count_chunks(PATTERNS[name], text, engine="regex") == len(expect(name, text))


def test_bad_custom_patterns_raise() -> None:
    from tokenmill.errors import InvalidPatternError

    for bad in ["(a", "", "[z-a]"]:
        with pytest.raises(InvalidPatternError):
            _core.split(bad, "text")
    with pytest.raises(ValueError, match="engine"):
        _core.count_chunks("gpt2", "x", engine="nope")
