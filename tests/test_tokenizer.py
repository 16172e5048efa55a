"""The Tokenizer API beyond tiktoken's: numpy, counting, truncation, streaming, batches,
pickling — each checked against the plain encode/decode it must agree with."""

from __future__ import annotations

import gc
import itertools
import pickle
import re
import subprocess
import sys
import sysconfig
import threading
import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from oracle import tiktoken_encoding

import tokenmill
from tokenmill import Tokenizer, _core
from tokenmill.sources import bundled_corpus

NAMES = ["gpt2", "cl100k_base", "o200k_base"]
TEXT = st.text(max_size=300) | st.sampled_from(
    [
        "",
        "hello world",
        "naïve café 日本語 🙂👩‍👩‍👧",
        "  leading\n\n\ttabs  ",
        "a" * 500,
        "12345678",
    ]
)


@pytest.fixture(scope="module", params=NAMES)
def enc(request):
    return tokenmill.load(request.param)


@settings(max_examples=150, deadline=None)
@given(text=TEXT)
def test_numpy_and_count_agree_with_encode(enc, text):
    ids = enc.encode(text, disallowed_special=())
    arr = enc.encode_to_numpy(text, disallowed_special=())
    assert arr.dtype == np.uint32
    assert arr.tolist() == ids
    assert enc.count(text, disallowed_special=()) == len(ids)


# A batch is given a thread for each 8 KB of text (`BATCH_BYTES_PER_THREAD`): with this among
# its documents, a batch of the test below is shared among all the threads asked for.
FILLER = bundled_corpus("holmes")[50_000:120_000]


@settings(max_examples=60, deadline=None)
@given(
    texts=st.lists(TEXT, max_size=12),
    threads=st.integers(1, 4),
    filler_at=st.none() | st.integers(0, 12),
)
def test_batches_agree_with_single_calls(enc, texts, threads, filler_at):
    if filler_at is not None:
        texts = [*texts[:filler_at], FILLER, *texts[filler_at:]]
    want = [enc.encode_ordinary(t) for t in texts]
    assert enc.encode_ordinary_batch(texts, num_threads=threads) == want
    assert enc.encode_batch(texts, num_threads=threads, disallowed_special=()) == want
    assert enc.count_batch(texts, num_threads=threads, disallowed_special=()) == [
        len(w) for w in want
    ]
    flat, offsets = enc.encode_batch_to_numpy(texts, num_threads=threads, disallowed_special=())
    assert offsets.dtype == np.int64 and flat.dtype == np.uint32
    assert len(offsets) == len(texts) + 1 and offsets[0] == 0
    assert [flat[offsets[i] : offsets[i + 1]].tolist() for i in range(len(texts))] == want
    assert enc.decode_batch(want) == [enc.decode(w) for w in want]


@pytest.mark.parametrize("threads", [1, 2])
def test_list_batches_leave_the_garbage_collector_as_they_found_it(threads):
    # The collector is paused while a batch's lists are built (`CollectorPaused`).
    enc = tokenmill.load("gpt2")
    lines = FILLER.splitlines(keepends=True)
    want = [tiktoken_encoding("gpt2").encode_ordinary(line) for line in lines]
    bad = [*lines, "<|endoftext|>"]
    try:
        for running in (True, False):
            (gc.enable if running else gc.disable)()
            assert enc.encode_ordinary_batch(lines, num_threads=threads) == want
            assert gc.isenabled() == running
            with pytest.raises(tokenmill.DisallowedSpecialTokenError):
                enc.encode_batch(bad, num_threads=threads)
            assert gc.isenabled() == running
    finally:
        gc.enable()


def test_merge_parents_leaves_the_garbage_collector_as_it_found_it():
    # The collector is paused while the core builds the list of pairs.
    enc = tokenmill.load("gpt2")
    try:
        for running in (True, False):
            (gc.enable if running else gc.disable)()
            assert enc.merge_parents()[995] == (476, 335)
            assert gc.isenabled() == running
    finally:
        gc.enable()


def test_large_numpy_outputs_reuse_buffers_without_sharing_them():
    """Buffers of 2 MB or more go back into use once numpy frees their array (`buffers.rs`):
    an array still alive keeps its own ids whatever is encoded after it, writing into it
    touches no other array, and a reused buffer holds only the new text's ids."""
    holmes = bundled_corpus("holmes")
    texts = [holmes[:600_000], holmes[-1_500_000:], holmes[1000:700_000], "short text"]
    enc = tokenmill.load("gpt2")
    want = [tiktoken_encoding("gpt2").encode_ordinary(t) for t in texts]
    for threads in (1, 2):
        alive = []
        for keep in (True, False, False):
            for text, ids in zip(texts, want, strict=True):
                arr = enc.encode_to_numpy(text, num_threads=threads)
                assert arr.tolist() == ids
                if keep:
                    alive.append(arr)
                del arr
            flat, offsets = enc.encode_batch_to_numpy(texts, num_threads=threads)
            assert flat.tolist() == [i for ids in want for i in ids]
            assert offsets[-1] == len(flat)
            del flat
        alive[0][:] = 0
        assert not alive[0].any()
        for arr, ids in zip(alive[1:], want[1:], strict=True):
            assert arr.tolist() == ids


@pytest.mark.skipif(
    sys.implementation.name != "cpython"
    or sys.version_info >= (3, 14)
    or bool(sysconfig.get_config_var("Py_GIL_DISABLED")),
    reason="reads CPython's layout of a str where pyo3 exposes it (src/py/text.rs)",
)
@pytest.mark.parametrize(
    "char", ["\xe9", "\u2019", "\U0001f600"], ids=["1-byte", "2-byte", "4-byte"]
)
def test_a_long_str_gets_no_utf8_copy_until_it_is_met_again(char):
    """CPython attaches a UTF-8 copy to a str once asked for its UTF-8, and ``sys.getsizeof``
    counts it. tokenmill converts a long str itself the first time (src/py/text.rs), so that
    tokenizing a corpus once does not double its memory; a str met again is left to CPython,
    whose attached copy makes the calls after that convert nothing."""
    enc = tokenmill.load("o200k_base")
    # A length of its own: a str met before is known by its address, length and kind.
    text = f"a line of text with {char} in it\n" * 5000 + "x" * (1 + ord(char) % 97)
    size = sys.getsizeof(text)
    first = enc.encode_ordinary(text)
    assert sys.getsizeof(text) == size
    assert enc.encode_ordinary(text) == first
    assert sys.getsizeof(text) > size
    assert enc.encode_ordinary(text) == first
    assert first == tiktoken_encoding("o200k_base").encode_ordinary(text)
    # A short str (under 64 code points) is left to CPython from the first call.
    short = f"{char} short" * 6
    size = sys.getsizeof(short)
    enc.encode_ordinary(short)
    assert sys.getsizeof(short) > size


@pytest.mark.skipif(
    sys.implementation.name != "cpython"
    or sys.version_info >= (3, 14)
    or bool(sysconfig.get_config_var("Py_GIL_DISABLED")),
    reason="reads CPython's layout of a str where pyo3 exposes it (src/py/text.rs)",
)
def test_a_batch_leaves_its_texts_without_utf8_copies():
    """A batch's non-ASCII texts of 64 code points and more are converted by tokenmill (one
    buffer for the batch), so a corpus tokenized in batches does not get a UTF-8 copy attached
    to every document; shorter ones are left to CPython, which attaches its copy."""
    enc = tokenmill.load("cl100k_base")
    long = [f"документ {i} с текстом: " * 5 + "\U0001f600" * (i % 2) for i in range(20)]
    short = [f"é {i}" for i in range(5)]
    sizes = [sys.getsizeof(t) for t in long + short]
    want = [enc.encode_ordinary(t) for t in [*long, *short]]
    sizes_after_single = [sys.getsizeof(t) for t in long + short]
    # Each text was met once on its own: the long ones are still without a copy.
    assert sizes_after_single[:20] == sizes[:20]
    for threads in (1, 2):
        assert enc.encode_ordinary_batch(long + short, num_threads=threads) == want
        ids, offsets = enc.encode_batch_to_numpy(long + short, num_threads=threads)
        assert [ids[a:b].tolist() for a, b in itertools.pairwise(offsets)] == want
        assert enc.count_batch(long + short, num_threads=threads) == [len(w) for w in want]
    after = [sys.getsizeof(t) for t in long + short]
    assert after[:20] == sizes[:20]
    assert all(a > b for a, b in zip(after[20:], sizes[20:], strict=True))


# Run under ``-X dev``: CPython's debug memory hooks abort on memory freed by the wrong
# allocator or written past its end; the lists of `encode` are built in memory tokenmill
# allocates and fills (src/py/id_list.rs).
LISTS_SCRIPT = """
import gc, sys
import tokenmill
import tokenmill.sources
enc = tokenmill.load("o200k_base")
holmes = tokenmill.sources.bundled_corpus("holmes")
texts = ["", "a", "hi <|endoftext|> there", " " * 3000, "日本語 " * 900, holmes[:2_500_000]]
one = enc.encode(" the")[0]  # the int every list holds for the id: not a small int
assert one > 256 and enc.encode(" the")[0] is one
before = sys.getrefcount(one)
kept = []
# The first long text's list is built in place, the later ones (and a batch's) from a buffer.
batch = enc.encode_ordinary_batch(texts, num_threads=2)
assert batch == [enc.encode_to_numpy(t, disallowed_special=()).tolist() for t in texts]
kept.extend(batch)
del batch
for text in texts * 3:
    ids = enc.encode(text, allowed_special="all")
    assert ids == enc.encode_to_numpy(text, allowed_special="all").tolist()
    assert enc.encode_ordinary(text) == enc.encode_to_numpy(text, disallowed_special=()).tolist()
    kept.append(ids)
    ids = ids + [one] * 3
    ids.append(one)
    del ids[: len(ids) // 2]
    ids.sort()
    ids.extend(range(1000))
    ids.clear()
    try:
        enc.encode(text + "<|endoftext|>")
        raise SystemExit("no error")
    except tokenmill.DisallowedSpecialTokenError:
        pass
assert sys.getrefcount(one) == before + sum(k.count(one) for k in kept), "references"
del kept
gc.collect()
assert sys.getrefcount(one) == before, "references after"
print("ok")
"""


def test_lists_of_ids_are_sound_under_the_debug_allocator():
    run = subprocess.run(
        [sys.executable, "-X", "dev", "-c", LISTS_SCRIPT], capture_output=True, text=True
    )
    assert run.returncode == 0 and run.stdout.strip() == "ok", run.stderr[-3000:]


@settings(max_examples=150, deadline=None)
@given(text=TEXT, max_tokens=st.integers(0, 40))
def test_truncate(enc, text, max_tokens):
    # Hypothesis also draws strings from the package's source, special-token text among them;
    # here it is plain text (the default policy would raise on it, as tiktoken's does).
    plain = {"disallowed_special": ()}
    cut = enc.truncate(text, max_tokens, **plain)
    assert text.startswith(cut)
    assert enc.count(cut, **plain) <= max_tokens
    n = len(enc.encode(text, **plain))
    if n <= max_tokens:
        assert cut == text
    # Nothing longer ending at a boundary of the text's own encoding would do.
    ids = enc.encode(text, **plain)
    if max_tokens < n:
        longer = enc.decode_bytes(ids[: max_tokens + 1]).decode("utf-8", "ignore")
        assert len(cut) <= len(longer)


@settings(max_examples=150, deadline=None)
@given(text=TEXT)
def test_stream_decoder_emits_whole_characters(enc, text):
    ids = enc.encode_ordinary(text)
    dec = enc.stream_decoder()
    pieces = [dec.push(t) for t in ids]
    assert "\ufffd" not in "".join(pieces) or "\ufffd" in text
    assert "".join(pieces) + dec.flush() == text
    assert "".join(enc.decode_stream(iter(ids))) == text


def test_stream_decoder_holds_back_partial_characters():
    enc = tokenmill.load("cl100k_base")
    ids = enc.encode("🙂")
    assert len(ids) > 1  # the emoji is split across tokens
    dec = enc.stream_decoder()
    assert [dec.push(t) for t in ids[:-1]] == [""] * (len(ids) - 1)
    assert dec.pending == "🙂".encode()[: len(dec.pending)]
    assert dec.push(ids[-1]) == "🙂"
    dec.push(ids[0])
    assert dec.flush() == "\ufffd"  # an unfinished character at the end is replaced


@pytest.mark.parametrize("name", NAMES)
def test_pickle_round_trip(name):
    enc = tokenmill.load(name)
    again = pickle.loads(pickle.dumps(enc))
    assert again.encode("hello world") == enc.encode("hello world")
    assert again.name == name
    assert len(pickle.dumps(enc)) < 200  # pretrained tokenizers pickle by name


def test_custom_tokenizer_pickles_its_data():
    ranks = {bytes([b]): b for b in range(256)} | {b"ab": 256, b"abc": 257}
    tok = Tokenizer(ranks, r"\w+|\W", {"<|end|>": 258}, name="tiny")
    again = pickle.loads(pickle.dumps(tok))
    assert again == tok
    assert again.encode("abc abd<|end|>", allowed_special="all") == [257, 32, 256, 100, 258]
    assert again.special_tokens == {"<|end|>": 258}


def test_tokenizers_pickle_as_their_loader_says(tmp_path):
    # A loader that shares its tokenizers by name gives from_core how pickle recreates them;
    # tokenizer.py imports neither the loaders nor the formats for it.
    core = _core.CoreTokenizer([bytes([b]) for b in range(256)], "gpt2", [])
    shared = Tokenizer.from_core(core, name="g", pickle_as=(tokenmill.load, ("gpt2",)))
    assert pickle.loads(pickle.dumps(shared)) is tokenmill.load("gpt2")
    assert pickle.loads(pickle.dumps(Tokenizer.from_core(core, name="b"))).name == "b"
    # Tokenizers loaded from files pickle as their data: names, merges and all.
    trained = tokenmill.train(bundled_corpus("holmes")[:50_000], 300, special_tokens=["<|e|>"])
    for name in ["t.tokenmill", "tokenizer.json"]:
        trained.save(tmp_path / name)
        loaded = tokenmill.load(tmp_path / name)
        again = pickle.loads(pickle.dumps(loaded))
        assert (again, again.name, again.merges) == (loaded, loaded.name, loaded.merges), name


def test_vocabulary_accessors_agree_with_mergeable_ranks():
    enc = tokenmill.load("cl100k_base")
    tokens, ranks = enc.token_bytes_list(), enc.mergeable_ranks
    assert {t: i for i, t in enumerate(tokens)} == ranks
    assert all(enc.rank(t) == i for t, i in itertools.islice(ranks.items(), 0, None, 97))
    assert enc.rank(b"<|endoftext|>") is None
    parents = enc.merge_parents()
    assert len(parents) == len(tokens) and parents[:256] == [None] * 256
    for i in range(256, len(tokens), 1009):
        left, right = parents[i] or (0, 0)
        assert tokens[left] + tokens[right] == tokens[i]


def test_a_subclass_may_ignore_unknown_special_names():
    class Lenient(Tokenizer):
        unknown_special_names = "ignore"

    ranks = {bytes([b]): b for b in range(256)}
    strict, lenient = (cls(ranks, "gpt2", {"<|e|>": 256}) for cls in (Tokenizer, Lenient))
    with pytest.raises(tokenmill.InvalidSpecialTokensError, match=re.escape("<|nope|>")):
        strict.encode("x", allowed_special={"<|nope|>"})
    for tok in (strict, lenient):
        assert tok.encode("<|e|>", allowed_special={"<|e|>"}) == [256]
    assert lenient.encode("<|e|>", allowed_special={"<|nope|>", "<|e|>"}) == [256]
    assert lenient.count("<|e|>", disallowed_special={"<|nope|>"}) == 5


def test_decode_variants():
    enc = tokenmill.load("cl100k_base")
    text = "héllo 𝔘𝔫𝔦"
    ids = enc.encode(text)
    assert enc.decode(ids) == text
    assert enc.decode(np.array(ids, dtype=np.uint32)) == text
    assert enc.decode(np.array(ids, dtype=np.int64)) == text
    partial = ids[:-1]
    with pytest.raises(UnicodeDecodeError):
        enc.decode(partial, errors="strict")
    assert enc.decode(partial).endswith("\ufffd")
    assert b"".join(enc.decode_tokens_bytes(ids)) == text.encode()


def test_single_tokens_and_specials():
    enc = tokenmill.load("gpt2")
    assert enc.encode_single_token(" world") == 995
    assert enc.encode_single_token(b" world") == 995
    assert enc.encode_single_token("<|endoftext|>") == 50256
    with pytest.raises(KeyError):
        enc.encode_single_token(" worldwide peace")
    assert enc.eot_token == 50256
    assert enc.is_special_token(50256) and not enc.is_special_token(995)
    assert enc.decode_single_token_bytes(50256) == b"<|endoftext|>"
    assert enc.chunks("I've got 12 cats") == ["I", "'ve", " got", " 12", " cats"]


def test_allowed_special_names_are_checked():
    enc = tokenmill.load("gpt2")
    with pytest.raises(tokenmill.InvalidSpecialTokensError, match=re.escape("<|endoftxt|>")):
        enc.encode("x", allowed_special={"<|endoftxt|>"})
    assert enc.encode("<|endoftext|>", allowed_special={"<|endoftext|>"}) == [50256]


def test_threads_share_a_tokenizer():
    enc = tokenmill.load("o200k_base")
    texts = [f"thread {i}: " + "the quick brown fox " * (50 + i) for i in range(8)]
    want = [enc.encode(t) for t in texts]
    got: dict[int, list[int]] = {}

    def work(i: int) -> None:
        for _ in range(20):
            got[i] = enc.encode(texts[i])

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [got[i] for i in range(8)] == want


def test_repr_and_equality():
    a, b = tokenmill.load("gpt2"), tokenmill.load("r50k_base")
    assert "gpt2" in repr(a)
    assert a == b  # same ranks, pattern and specials under two names
    assert a != tokenmill.load("cl100k_base")


def test_long_inputs_let_other_python_threads_run():
    """Encoding, counting and decoding a long input (or a batch of long total) run with the
    GIL released, so another Python thread goes on meanwhile (a short input keeps it:
    `detached` in src/py/gil.rs).
    The other thread stamps the time as it spins; some stamp must fall in the middle half of
    each call."""
    enc = tokenmill.load("gpt2")
    text = bundled_corpus("holmes") * 2
    ids = enc.encode_ordinary(text)
    docs = text.split("\n\n")
    calls = {
        "encode_ordinary": lambda: enc.encode_ordinary(text),
        "encode": lambda: enc.encode(text),
        "encode_to_numpy": lambda: enc.encode_to_numpy(text),
        "count": lambda: enc.count(text),
        "decode": lambda: enc.decode(ids),
        # Batches on this thread alone (one thread asked for).
        "encode_ordinary_batch": lambda: enc.encode_ordinary_batch(docs, num_threads=1),
        "encode_batch_to_numpy": lambda: enc.encode_batch_to_numpy(docs, num_threads=1),
        "count_batch": lambda: enc.count_batch(docs, num_threads=1),
    }
    for name, call in calls.items():
        stamps: list[float] = []
        stop = threading.Event()

        def spin(stamps=stamps, stop=stop):
            while not stop.is_set():
                stamps.append(time.perf_counter())

        spinner = threading.Thread(target=spin)
        spinner.start()
        while not stamps:
            time.sleep(0.001)
        start = time.perf_counter()
        call()
        end = time.perf_counter()
        stop.set()
        spinner.join()
        quarter = (end - start) / 4
        inside = [s for s in stamps if start + quarter < s < end - quarter]
        assert inside, f"{name}: no other thread ran during {end - start:.4f} s"
