"""Ids identical to tiktoken's for gpt2, cl100k_base and o200k_base.

Oracle: tiktoken itself, working offline from the official files (tests/oracle.py).
"""

from __future__ import annotations

import gzip
import itertools
from importlib import resources
from pathlib import Path

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st
from oracle import Remembering, tiktoken_encoding

import tokenmill
from tokenmill import reference

NAMES = ["gpt2", "cl100k_base", "o200k_base"]
TEXT_SUFFIXES = {".txt", ".json", ".yml", ".yaml", ".csv", ".xml", ".md"}


@pytest.fixture(scope="module", params=NAMES)
def pair(request):
    return tokenmill.load(request.param), Remembering(tiktoken_encoding(request.param))


def shared_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.suffix in TEXT_SUFFIXES and p.is_file())


def test_bundled_corpus_whole_and_by_line(pair):
    ours, theirs = pair
    text = gzip.decompress(
        resources.files("tokenmill.data").joinpath("tinyshakespeare.txt.gz").read_bytes()
    ).decode()
    assert ours.encode_ordinary(text) == theirs.encode_ordinary(text)
    lines = text.splitlines(keepends=True)
    assert ours.encode_ordinary_batch(lines, num_threads=2) == theirs.encode_ordinary_batch(lines)


def test_more_distinct_chunks_than_the_cache_holds(pair):
    # The per-thread chunk cache is cleared when 3/4 of its 65,536 slots are used; a clear in
    # the middle of a batched lookup once dropped a token. 100,000 distinct words, repeated so
    # that hits and clears interleave; words of two vocabulary pieces are chunks of at most
    # 15 bytes and 3 ids, the ones it holds.
    ours, theirs = pair
    values = ours.token_byte_values()
    heads = [t.decode() for t in values if regex.fullmatch(rb" [a-z]{2,6}", t)]
    tails = [t.decode() for t in values if regex.fullmatch(rb"[a-z]{2,6}", t)][:400]
    words = [h + t for t in tails for h in heads[:250]]
    assert len(set(words)) > 80_000
    text = "".join(w + words[i // 3] for i, w in enumerate(words))
    assert ours.encode_ordinary(text) == theirs.encode_ordinary(text)
    docs = [text[i : i + 5000] for i in range(0, len(text), 5000)]
    assert ours.encode_ordinary_batch(docs, num_threads=2) == theirs.encode_ordinary_batch(docs)
    assert ours.count(text) == len(theirs.encode_ordinary(text))


def test_every_shared_file_whole_and_by_line(pair, shared_data):
    ours, theirs = pair
    files = shared_files(shared_data)
    assert len(files) > 50
    for path in files:
        text = path.read_text(encoding="utf-8")
        assert ours.encode_ordinary(text) == theirs.encode_ordinary(text), path
        lines = text.splitlines(keepends=True)
        got = ours.encode_ordinary_batch(lines, num_threads=2)
        want = theirs.encode_ordinary_batch(lines, num_threads=2)
        if got != want:
            bad = next(i for i, (a, b) in enumerate(zip(got, want, strict=True)) if a != b)
            pytest.fail(f"{path} line {bad + 1}: {lines[bad]!r}")


# Atoms that exercise the split patterns and the merge rule: whitespace of every kind,
# contractions, digits of several scripts, marks, letters of several scripts, emoji, specials.
ATOMS = st.sampled_from(
    [
        " ",
        "  ",
        "\t",
        "\n",
        "\r\n",
        "\r",
        "\x0b",
        "\x0c",
        "\x85",
        "\u00a0",
        "\u2028",
        "\u3000",
        "'s",
        "'T",
        "'ll",
        "'VE",
        "'re",
        "'d",
        "'m",
        "ſ",
        "'",
        "a",
        "Z",
        "hello",
        "World",
        "ÉCOLE",
        "école",
        "1",
        "12345",
        "٣٤",
        "Ⅻ",
        "½",
        "\u0301",
        "é",
        "ß",
        "İ",
        "日本語",
        "한국어",
        "Привет",
        "مرحبا",
        "नमस्ते",
        "🙂",
        "👩‍👩‍👧",
        "🇫🇷",
        "/",
        "//",
        "...",
        "!?",
        "{",
        "}",
        "<|endoftext|>",
        "<|fim_prefix|>",
        "$",
        "_",
        "-",
        "\\",
        "\ufffd",
        "\U0010ffff",
    ]
)
TRICKY_TEXT = st.lists(ATOMS, max_size=30).map("".join)
ANY_TEXT = st.text(st.characters(exclude_categories=()), max_size=200)  # includes surrogates


@settings(max_examples=300, deadline=None)
@given(text=st.one_of(TRICKY_TEXT, ANY_TEXT))
def test_arbitrary_text(pair, text):
    ours, theirs = pair
    assert ours.encode_ordinary(text) == theirs.encode_ordinary(text)
    assert ours.encode(text, disallowed_special=()) == theirs.encode(text, disallowed_special=())
    assert ours.encode(text, allowed_special="all") == theirs.encode(text, allowed_special="all")
    assert ours.count(text, allowed_special="all") == len(
        theirs.encode(text, allowed_special="all")
    )


@settings(max_examples=100, deadline=None)
@given(text=ANY_TEXT)
def test_lone_surrogates_are_handled_like_tiktoken(pair, text):
    ours, theirs = pair
    text = "\ud83d" + text + "\ud83d\ude00" + "\udfff"
    assert ours.encode_ordinary(text) == theirs.encode_ordinary(text)
    # Hypothesis also draws strings from the package's source, special-token text among them;
    # both would raise on it under the default policy.
    batch = [text, "ok"]
    assert ours.encode_batch(batch, num_threads=2, disallowed_special=()) == theirs.encode_batch(
        batch, disallowed_special=()
    )


SPECIAL_TEXT = st.lists(
    st.sampled_from(["<|endoftext|>", "<|fim_prefix|>", "<|endofprompt|>", "<|endof", "text", " "]),
    max_size=8,
).map("".join)


# A long str that is not all ASCII is converted to UTF-8 by tokenmill the first time it is
# met, from whichever of CPython's 1, 2 and 4-byte forms holds it (src/py/text.rs); this is
# past the length from which it does. Each test makes its str anew, so the conversion is what
# the first call of each method meets.
LONG = 70_000
WIDEST = ["", "\xe9", "\u03c8", "\u2019", "\U0001f600"]  # ASCII, 1, 2, 2 and 4 bytes a unit


@settings(max_examples=40, deadline=None)
@given(
    text=st.one_of(TRICKY_TEXT, ANY_TEXT, SPECIAL_TEXT).filter(bool),
    widest=st.sampled_from(WIDEST),
    at=st.floats(0, 1),
)
def test_long_texts_of_every_width(pair, text, widest, at):
    ours, theirs = pair

    def long() -> str:
        base = (text * (LONG // len(text) + 1))[:LONG]
        cut = int(at * LONG)
        return base[:cut] + widest + base[cut:]

    want = theirs.encode(long(), allowed_special="all")
    assert ours.encode(long(), allowed_special="all") == want
    assert ours.count(long(), allowed_special="all") == len(want)
    assert ours.encode_to_numpy(long(), allowed_special="all").tolist() == want
    want = theirs.encode_ordinary(long())
    assert ours.encode_ordinary(long()) == want
    again = long()
    assert [ours.encode_ordinary(again) for _ in range(3)] == [want] * 3
    assert ours.encode_ordinary(long(), num_threads=2) == want


@settings(max_examples=200, deadline=None)
@given(text=SPECIAL_TEXT, allowed=st.sampled_from(["all", set(), {"<|endoftext|>"}]))
def test_special_token_policy(pair, text, allowed):
    ours, theirs = pair
    allowed = allowed if allowed == "all" else allowed & theirs.special_tokens_set
    for disallowed in ["all", (), frozenset()]:
        try:
            want = theirs.encode(text, allowed_special=allowed, disallowed_special=disallowed)
        except ValueError:
            with pytest.raises(tokenmill.DisallowedSpecialTokenError):
                ours.encode(text, allowed_special=allowed, disallowed_special=disallowed)
            continue
        assert ours.encode(text, allowed_special=allowed, disallowed_special=disallowed) == want


@settings(max_examples=200, deadline=None)
@given(text=st.one_of(TRICKY_TEXT, st.text(max_size=100)))
def test_decoding_matches(pair, text):
    ours, theirs = pair
    ids = theirs.encode_ordinary(text)
    assert ours.decode(ids) == theirs.decode(ids)
    assert ours.decode_bytes(ids) == theirs.decode_bytes(ids)
    assert ours.decode_tokens_bytes(ids) == theirs.decode_tokens_bytes(ids)
    assert ours.decode_with_offsets(ids) == theirs.decode_with_offsets(ids)
    for cut in range(len(ids)):  # decode prefixes that end inside a character
        assert ours.decode(ids[:cut]) == theirs.decode(ids[:cut])


@pytest.mark.parametrize(
    "text",
    [
        "a" * 1_000_000,
        " " * 1_000_000,
        "\n" * 100_000,
        "1" * 100_000,
        "^" * 100_000,
        "ab" * 200_000,
        "é" * 100_000,
        "🙂" * 50_000,
    ],
    ids=["a", "spaces", "newlines", "digits", "carets", "ab", "e-acute", "emoji"],
)
def test_pathological_inputs(pair, text):
    # tiktoken's own encode overflows its regex stack on a million spaces with o200k, so the
    # oracle here is the reference split (`regex`, with tiktoken's Unicode data) followed by
    # tiktoken's BPE on each piece.
    ours, theirs = pair
    want = [
        t
        for piece in reference.split(text, theirs._pat_str)
        for t in theirs._encode_single_piece(piece.encode())
    ]
    assert ours.encode_ordinary(text) == want


def test_random_letters_without_spaces(pair):
    import random

    rng = random.Random(7)
    text = "".join(
        rng.choice("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ") for _ in range(300_000)
    )
    ours, theirs = pair
    assert ours.encode_ordinary(text) == theirs.encode_ordinary(text)


# Chunks of 4 KB and more take the long-chunk path, which switches between its search and its
# windows as the tokens get shorter or longer: runs of one letter, random text of a few letters,
# and the two alternating inside one chunk.
@settings(max_examples=40, deadline=None)
@given(
    texts=st.lists(st.one_of(TRICKY_TEXT, ANY_TEXT, SPECIAL_TEXT), min_size=1, max_size=4),
    widest=st.sampled_from(WIDEST),
    threads=st.sampled_from([1, 2]),
)
def test_batches_of_every_width(pair, texts, widest, threads):
    """A batch's non-ASCII texts of 64 code points and more are converted to UTF-8 by
    tokenmill into one buffer (src/py/text.rs, `utf8_batch`), the others read from CPython:
    each drawn text at lengths on both sides of 64, with a character of one of CPython's widths
    in its middle (or none), side by side with ASCII, short texts and lone surrogates (which
    tiktoken's way of answering applies to)."""
    ours, theirs = pair

    def batch() -> list[str]:
        # New strs for each call: tiktoken's attaches CPython's UTF-8 copy to each.
        made = []
        for text in texts:
            for n in (0, 1, 63, 64, 65, 300, 5000):
                base = (text * (n // max(len(text), 1) + 1))[:n] if text else "x" * n
                made.append(base[: n // 2] + widest + base[n // 2 :])
        return made

    want = theirs.encode_batch(batch(), allowed_special="all")
    assert ours.encode_batch(batch(), allowed_special="all", num_threads=threads) == want
    ids, offsets = ours.encode_batch_to_numpy(batch(), allowed_special="all", num_threads=threads)
    assert [ids[a:b].tolist() for a, b in itertools.pairwise(offsets)] == want
    counts = ours.count_batch(batch(), allowed_special="all", num_threads=threads)
    assert counts == [len(w) for w in want]


LONG_CHUNK_ALPHABETS = [
    "ab",
    "abc",
    "aeiou",
    "abcdefghijklmnopqrstuvwxyz",
    "éa",
    "的一是不了人我在有",
]


@settings(max_examples=20, deadline=None)
@given(
    seed=st.integers(0, 2**32),
    alphabet=st.sampled_from(LONG_CHUNK_ALPHABETS),
    runs=st.lists(st.tuples(st.booleans(), st.integers(1, 6000)), min_size=1, max_size=6),
)
def test_long_chunks_of_short_and_long_tokens(pair, seed, alphabet, runs):
    import random

    rng = random.Random(seed)
    text = "".join(
        rng.choice(alphabet) * n if repeat else "".join(rng.choices(alphabet, k=n))
        for repeat, n in runs
    )
    ours, theirs = pair
    assert ours.encode_ordinary(text) == theirs.encode_ordinary(text)


def test_metadata(pair):
    ours, theirs = pair
    assert ours.n_vocab == theirs.n_vocab
    assert ours.eot_token == theirs.eot_token
    assert ours.special_tokens_set == theirs.special_tokens_set
    assert ours.max_token_value == theirs.max_token_value
    assert ours.pattern == theirs._pat_str
    assert ours.mergeable_ranks == theirs._mergeable_ranks
    assert ours.token_byte_values() == theirs.token_byte_values()
