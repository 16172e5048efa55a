"""tokenmill.train: determinism, input forms, round trips, saving/loading, and every error.

Oracles: training on one string (the same corpus in other forms must give the same merges),
``reference.encode`` (a trained tokenizer encodes like the reference), ``decode(encode(t))``.
"""

from __future__ import annotations

import gzip
import io
import itertools
import json
import re
import warnings
from importlib import resources
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tokenmill
from tokenmill import _core, reference, training
from tokenmill.errors import (
    CorpusFileError,
    InvalidPatternError,
    InvalidSpecialTokensError,
    TrainingError,
    TrainingWarning,
    VocabFileError,
)
from tokenmill.sources import cut, read
from tokenmill.tokenizer import clean_text


def bundled(name: str) -> str:
    data = resources.files("tokenmill.data").joinpath(name).read_bytes()
    return gzip.decompress(data).decode("utf-8")


SHAKESPEARE = bundled("tinyshakespeare.txt.gz")
# Mixed scripts and emoji, so blocks of a streamed file end inside multi-byte characters.
MIXED = (SHAKESPEARE[:150_000] + "\nПривет, мир! こんにちは 😀👍🏽 naïve café\n") * 2


def merges(tok):
    return [(m.left, m.right, m.count) for m in tok.merges]


def pieces(text: str) -> list[str]:
    """``text`` cut at every safe place: the same chunks as the whole text."""
    return re.split(r"(?<=[!-~]\n)(?=[A-Za-z0-9])", text)


@pytest.fixture(scope="module")
def trained():
    return tokenmill.train(SHAKESPEARE, 1024, special_tokens=["<|endoftext|>"], name="shk")


@pytest.fixture(scope="module")
def want_mixed():
    return merges(tokenmill.train(MIXED, 600, num_threads=1))


# ---------------------------------------------------------------------------- determinism


@pytest.mark.parametrize("threads", [1, 2])
def test_same_merges_for_any_thread_count(want_mixed, threads):
    assert merges(tokenmill.train(MIXED, 600, num_threads=threads)) == want_mixed


def test_large_text_cut_for_threads_gives_same_merges():
    # A text above 2 MB is cut into pieces counted by different threads (src/train/count.rs).
    text = SHAKESPEARE * 3
    one = merges(tokenmill.train(text, 400, num_threads=1))
    assert merges(tokenmill.train(text, 400, num_threads=2)) == one
    assert one == merges(tokenmill.train(pieces(text), 400, num_threads=2))


def test_list_of_pieces_and_iterable(want_mixed):
    assert merges(tokenmill.train(pieces(MIXED), 600)) == want_mixed
    assert merges(tokenmill.train(iter(pieces(MIXED)), 600)) == want_mixed
    assert merges(tokenmill.train((p for p in pieces(MIXED)), 600)) == want_mixed


def test_list_of_lines_equals_reference_on_those_lines():
    # Lines are separate texts: "\n\n" is then two chunks, so this differs from one string,
    # exactly as the reference says.
    lines = SHAKESPEARE[:60_000].splitlines(keepends=True)
    assert merges(tokenmill.train(lines, 400)) == reference.train(lines, 400)


@pytest.mark.parametrize("pattern", ["gpt2", "cl100k", "o200k"])
def test_safe_cuts_keep_the_chunks(pattern):
    # Shakespeare has many blank lines and lines ending in spaces: cutting after every newline
    # would change gpt2's chunks ("  \n" at the end of a text is one chunk, two inside it).
    text = MIXED + "end  \nnext \n\nmore\n\n\nx"
    parts = pieces(text)
    assert len(parts) > 1000
    assert [c for p in parts for c in _core.split(pattern, p)] == _core.split(pattern, text)
    # The reader's rule (tokenmill.sources.cut) cuts at least there, and at every one of its
    # places at once the chunks are still the whole text's.
    places = cut.every_cut(text)
    assert {len(p) for p in itertools.accumulate(parts[:-1])} <= set(places)
    bounds = [0, *places, len(text)]
    parts = [text[a:b] for a, b in itertools.pairwise(bounds)]
    assert [c for p in parts for c in _core.split(pattern, p)] == _core.split(pattern, text)


@pytest.mark.parametrize("pattern", ["gpt2", "o200k"])
def test_streamed_file_other_patterns(tmp_path, monkeypatch, pattern):
    monkeypatch.setattr(training, "BATCH_CHARS", 1000)
    monkeypatch.setattr(read, "BLOCK", 1000)
    path = tmp_path / "c.txt"
    path.write_text(MIXED, encoding="utf-8")
    want = merges(tokenmill.train(MIXED, 400, pattern=pattern))
    assert merges(tokenmill.train(path, 400, pattern=pattern)) == want


@pytest.mark.parametrize("block", [1 << 20, 4099, 1000])
def test_files_txt_gz_jsonl_streamed_in_blocks(tmp_path, monkeypatch, want_mixed, block):
    # Small blocks end inside characters and inside words; the result must not change.
    monkeypatch.setattr(training, "BATCH_CHARS", block)
    monkeypatch.setattr(read, "BLOCK", block)
    txt = tmp_path / "c.txt"
    txt.write_text(MIXED, encoding="utf-8")
    gz = tmp_path / "c.txt.gz"
    gz.write_bytes(gzip.compress(MIXED.encode("utf-8")))
    jsonl = tmp_path / "c.jsonl.gz"
    records = "".join(json.dumps({"text": p, "id": i}) + "\n" for i, p in enumerate(pieces(MIXED)))
    jsonl.write_bytes(gzip.compress(records.encode("utf-8")))
    for corpus in (txt, gz, jsonl, [jsonl]):
        assert merges(tokenmill.train(corpus, 600)) == want_mixed, corpus


def test_parquet_and_folders_of_any_kind_give_the_merges_of_their_texts(tmp_path, want_mixed):
    import pyarrow as pa
    import pyarrow.parquet as pq

    from tokenmill.sources import find

    parts = pieces(MIXED)
    pq.write_table(pa.table({"body": parts}), tmp_path / "c.parquet", row_group_size=300)
    assert merges(tokenmill.train(tmp_path / "c.parquet", 600, text_field="body")) == want_mixed
    d = tmp_path / "folder"
    d.mkdir()
    half = len(parts) // 2
    (d / "a.jsonl").write_text("".join(json.dumps({"text": p}) + "\n" for p in parts[:half]))
    (d / "b.csv").write_text("".join(parts[half:]), encoding="utf-8")
    files = [Path(f.path) for f in find(d)]
    want = merges(tokenmill.train([*parts[:half], "".join(parts[half:])], 600))
    assert merges(tokenmill.train(files, 600)) == want


@pytest.mark.parametrize("block", [64, 1 << 20])
def test_a_file_is_never_cut_inside_a_special_token(tmp_path, monkeypatch, block):
    # "END OF DOC" holds places where text may be cut (before a space between letters); a cut
    # there would hide the special token from the matcher and count its pieces as text.
    monkeypatch.setattr(read, "BLOCK", block)
    text = "".join(f"Story {i} was told here.END OF DOC" for i in range(400))
    path = tmp_path / "s.txt"
    path.write_text(text)
    want = merges(tokenmill.train(text, 280, special_tokens=["END OF DOC"]))
    assert merges(tokenmill.train(path, 280, special_tokens=["END OF DOC"])) == want


def test_several_files_are_one_corpus_in_order(tmp_path):
    parts = pieces(MIXED)
    half = len(parts) // 2
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text("".join(parts[:half]), encoding="utf-8")
    b.write_text("".join(parts[half:]), encoding="utf-8")
    want = reference.train(["".join(parts[:half]), "".join(parts[half:])], 300)
    assert merges(tokenmill.train([a, b], 300)) == want
    assert merges(tokenmill.train([a, "x y", b], 300)) == reference.train(
        ["".join(parts[:half]), "x y", "".join(parts[half:])], 300
    )


def test_jsonl_text_field(tmp_path):
    path = tmp_path / "c.jsonl"
    path.write_text('{"body": "ab ab ab"}\n\n{"body": "ab"}\n', encoding="utf-8")
    tok = tokenmill.train(path, 257, text_field="body", pattern="gpt2")
    assert merges(tok) == [(97, 98, 4)]


# ------------------------------------------------------------------ bounded memory


@settings(max_examples=200, deadline=None)
@given(
    batches=st.lists(
        st.lists(st.text(alphabet="ab c\n'1é", max_size=30), max_size=4), min_size=1, max_size=6
    ),
    limit=st.integers(0, 1500),
    threads=st.sampled_from([1, 2]),
)
def test_a_bounded_table_counts_by_the_definition(batches, limit, threads):
    trainer = _core.CoreTrainer("gpt2", [], threads)
    trainer.set_limit(limit)
    for batch in batches:
        trainer.feed(batch)
    want, dropped = reference.count_chunks_bounded(batches, "gpt2", limit)
    assert trainer.counted() == list(want.items())
    assert trainer.pruned()[3] == dropped


def zipf_words(n_words: int, n_distinct: int, seed: int) -> list[str]:
    """Lines of made-up words, the word of rank r drawn about 1/r as often as the first."""
    import random

    rng = random.Random(seed)
    letters = "abcdefghijklmnopqrstuvwxyz"
    vocab = ["".join(rng.choices(letters, k=rng.randint(2, 9))) for _ in range(n_distinct)]
    weights = [1 / (r + 1) for r in range(n_distinct)]
    words = rng.choices(vocab, weights=weights, k=n_words)
    return [" ".join(words[i : i + 12]) + "\n" for i in range(0, n_words, 12)]


def test_training_past_max_memory_drops_rare_chunks_by_the_rule(monkeypatch):
    lines = zipf_words(300_000, 300_000, seed=7)
    monkeypatch.setattr(training, "BATCH_CHARS", 100_000)
    batches: list[list[str]] = [[]]  # as train() hands them to the counter
    size = 0
    for line in lines:
        batches[-1].append(line)
        size += len(line)
        if size >= training.BATCH_CHARS:
            batches.append([])
            size = 0
    max_memory = 16 << 20
    with pytest.warns(TrainingWarning, match=r"chunks seen (once|at most \d+ times) were dropped"):
        tok = tokenmill.train(lines, 556, pattern="gpt2", max_memory=max_memory)
    counts, dropped = reference.count_chunks_bounded(
        batches, "gpt2", max_memory // training.TABLE_SHARE
    )
    assert dropped > 0
    assert merges(tok) == reference.train_counts(counts, 556)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        whole = tokenmill.train(lines, 556, pattern="gpt2", max_memory=None)
    assert merges(whole) == reference.train_counts(reference.count_chunks(lines, "gpt2"), 556)


@pytest.mark.parametrize("bad", [0, 1 << 20, -5, 1.5e9, "1G", True])
def test_max_memory_must_be_a_number_of_bytes(bad):
    with pytest.raises(TrainingError, match="max_memory"):
        tokenmill.train("ab ab", 260, max_memory=bad)


# ------------------------------------------------------------------------ what it learned


def test_trained_encodes_its_corpus_like_the_reference(trained):
    text = SHAKESPEARE[:40_000]
    want = reference.encode(text, merges(trained), pattern="cl100k")
    assert trained.encode_ordinary(text) == want
    assert trained.decode(want) == text


@settings(max_examples=200, deadline=None)
@given(text=st.text())
def test_any_text_round_trips(trained, text):
    # Scripts and emoji the corpus never held fall back to bytes.
    assert trained.decode(trained.encode_ordinary(text)) == clean_text(text)


def test_unseen_scripts_and_emoji_round_trip(trained):
    text = "Ἀρχὴ 漢字 テスト 👩‍👩‍👧‍👦 🇺🇳 عربى हिन्दी \u0000\t\r\n"
    assert trained.decode(trained.encode(text)) == text


def test_special_tokens_take_ids_after_merges_and_are_cut_out():
    text = "ab ab<|endoftext|>ab ab"
    tok = tokenmill.train(text, 260, special_tokens=["<|endoftext|>", "<|pad|>"])
    assert tok.special_tokens == {"<|endoftext|>": 258, "<|pad|>": 259}
    # Merges never take bytes from the special token's text ("b<" would be seen twice).
    assert merges(tok) == [(97, 98, 4), (32, 256, 2)]
    assert tok.encode("ab<|endoftext|>", allowed_special="all") == [256, 258]


def test_merge_log(capsys):
    out = io.StringIO()
    tokenmill.train("aa aa aa", 258, pattern="gpt2", log=out)
    assert out.getvalue().splitlines() == [
        "merge 256: b'a' + b'a' -> b'aa' seen 3x",
        "merge 257: b' ' + b'aa' -> b' aa' seen 2x",
    ]
    lines = []
    tokenmill.train("aa aa aa", 257, pattern="gpt2", log=lines.append)
    assert lines == ["merge 256: b'a' + b'a' -> b'aa' seen 3x"]
    tokenmill.train("aa aa aa", 257, pattern="gpt2", verbose=True)
    assert "merge 256: b'a' + b'a' -> b'aa' seen 3x" in capsys.readouterr().err


def test_progress_bar_on_stderr(capsys):
    tokenmill.train(SHAKESPEARE[:20_000], 300, progress=True)
    err = capsys.readouterr().err
    assert "training: merges" in err and "44/44" in err
    tokenmill.train(SHAKESPEARE[:20_000], 300, progress=False)
    assert capsys.readouterr().err == ""


def test_early_stop_warns_with_the_number_of_merges():
    with pytest.warns(TrainingWarning, match="stopped after 2 merges"):
        tok = tokenmill.train("abc abc", 1000, pattern="gpt2")
    assert tok.n_vocab == 258


def test_no_warning_when_full():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tokenmill.train("abab abab", 257, pattern="gpt2")


# ---------------------------------------------------------------------------- save / load


def test_save_and_load_round_trip(tmp_path, trained):
    written = trained.save(tmp_path / "shk.tokenmill")
    assert written == [str(tmp_path / "shk.tokenmill"), str(tmp_path / "shk.vocab.txt")]
    back = tokenmill.load(tmp_path / "shk.tokenmill")
    assert back == trained and back.merges == trained.merges and back.name == "shk"
    assert back.special_tokens == {"<|endoftext|>": 1023}
    text = SHAKESPEARE[:5000]
    assert back.encode(text) == trained.encode(text)
    listing = (tmp_path / "shk.vocab.txt").read_text(encoding="utf-8").splitlines()
    assert listing[2] == "0\tb'\\x00'"
    assert listing[-1] == "1023\t'<|endoftext|>'\tspecial"
    first = trained.merges[0]
    assert listing[2 + 256] == (
        f"256\t{trained.decode_single_token_bytes(256)!r}\t{first.left}\t{first.right}\t{first.count}"
    )
    # Also as .tokenmill.json.
    out = tmp_path / "x.tokenmill.json"
    assert trained.save(out)[0] == str(out)
    assert tokenmill.load(out) == trained


def test_save_a_loaded_vocabulary_or_say_why_not(tmp_path):
    tok = tokenmill.train("ab ab cd cd", 258, pattern="gpt2")
    plain = tokenmill.Tokenizer(tok.mergeable_ranks, "gpt2")  # no merge counts
    plain.save(tmp_path / "p.tokenmill")
    assert tokenmill.load(tmp_path / "p.tokenmill") == plain
    with pytest.raises(tokenmill.UnsupportedFormatError, match=r"tokenizer\.json"):
        tokenmill.load("gpt2").save(tmp_path / "g.tokenmill")


def _doc(tmp_path, trained):
    trained.save(tmp_path / "t.tokenmill")
    return json.loads((tmp_path / "t.tokenmill").read_text(encoding="utf-8"))


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d.update(format="other"), "not a tokenmill file"),
        (lambda d: d.update(version=99), "newer tokenmill"),
        (lambda d: d.update(version="1"), "must be an integer"),
        (lambda d: d.pop("pattern"), "pattern"),
        (lambda d: d.update(pattern="(unclosed"), "does not compile"),
        (lambda d: d["merges"].__setitem__(0, [300, 1, 5]), "may only use ids 0..255"),
        (lambda d: d["merges"].__setitem__(5, [1, 2]), r"merge 5 must be \[left, right, count\]"),
        (lambda d: d["merges"].__setitem__(5, [1, 2, -1]), "non-negative"),
        (lambda d: d["merges"].append(d["merges"][0]), "already token 256"),
        (lambda d: d.update(merges={}), "must be a list"),
        (lambda d: d.update(special_tokens={"": 1023}), "empty string"),
        (lambda d: d.update(special_tokens={"<a>": 5}), "must be an integer >= 1023"),
        (lambda d: d.update(special_tokens={"<a>": 1023, "<b>": 1023}), "same id 1023"),
        (lambda d: d.update(n_vocab=5000), '"n_vocab" says 5000'),
    ],
)
def test_load_names_what_is_wrong(tmp_path, trained, change, message):
    doc = _doc(tmp_path, trained)
    change(doc)
    path = tmp_path / "bad.tokenmill"
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(VocabFileError, match=message) as e:
        tokenmill.load(path)
    assert str(path) in str(e.value)


def test_load_not_json(tmp_path):
    path = tmp_path / "bad.tokenmill"
    path.write_text('{"format": "tokenmill",\n  oops', encoding="utf-8")
    with pytest.raises(VocabFileError, match="line 2: not valid JSON"):
        tokenmill.load(path)


# ------------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"vocab_size": 255}, TrainingError, "at least 256"),
        ({"vocab_size": 256, "special_tokens": ["<a>"]}, TrainingError, "at least 257"),
        ({"vocab_size": "300"}, TrainingError, "must be an int"),
        ({"pattern": "(unclosed"}, InvalidPatternError, "unclosed"),
        ({"pattern": ""}, InvalidPatternError, "empty"),
        ({"special_tokens": [""]}, InvalidSpecialTokensError, "empty string"),
        ({"special_tokens": ["<a>", "<a>"]}, InvalidSpecialTokensError, "listed twice"),
        ({"special_tokens": "<a>"}, InvalidSpecialTokensError, "not one string"),
        ({"min_frequency": 0}, TrainingError, "min_frequency"),
        ({"num_threads": 0}, TrainingError, "num_threads"),
    ],
)
def test_bad_arguments(kwargs, error, message):
    args = {"vocab_size": 300} | kwargs
    with pytest.raises(error, match=message):
        tokenmill.train("some text", **args)


@pytest.mark.parametrize("corpus", ["", [], ["", ""], "<|x|><|x|>"])
def test_empty_corpus(corpus):
    with pytest.raises(TrainingError, match="empty"):
        tokenmill.train(corpus, 300, special_tokens=["<|x|>"])


def test_bad_corpus_types():
    with pytest.raises(TrainingError, match="decode it first"):
        tokenmill.train(b"bytes", 300)
    with pytest.raises(TrainingError, match="not int"):
        tokenmill.train(["ok", 5], 300)
    with pytest.raises(TrainingError, match="iterable"):
        tokenmill.train(5, 300)


def test_a_str_that_names_a_file_is_an_error(tmp_path, monkeypatch):
    # A str is text; a short one that names a file or folder is a file name passed by mistake
    # (training on its characters would learn nothing and only warn).
    monkeypatch.chdir(tmp_path)
    Path("holmes.txt").write_text(SHAKESPEARE[:20_000])
    Path("books").mkdir()
    for corpus in ("holmes.txt", ["holmes.txt", "more.txt"], iter(["holmes.txt"])):
        with pytest.raises(TrainingError, match=r"Path\('holmes\.txt'\)") as err:
            tokenmill.train(corpus, 300)
        assert "names an existing file" in str(err.value)
    with pytest.raises(TrainingError, match=r"names an existing folder.*find"):
        tokenmill.train("books", 300)
    want = merges(tokenmill.train(SHAKESPEARE[:20_000], 300))
    assert merges(tokenmill.train(Path("holmes.txt"), 300)) == want
    assert tokenmill.train(["not a file name", "ab ab"], 257).n_vocab == 257


def test_unreadable_files(tmp_path):
    with pytest.raises(CorpusFileError, match=r"missing\.txt: cannot read"):
        tokenmill.train(tmp_path / "missing.txt", 300)
    with pytest.raises(CorpusFileError, match="is a folder"):
        tokenmill.train(tmp_path, 300)
    broken = tmp_path / "broken.txt.gz"
    broken.write_bytes(gzip.compress(b"hello world " * 100)[:-20])
    with pytest.raises(CorpusFileError, match=r"broken\.txt\.gz: cannot read"):
        tokenmill.train(broken, 300)


@pytest.mark.parametrize("block", [1 << 20, 7])
def test_non_utf8_file_names_file_and_byte_offset(tmp_path, monkeypatch, block):
    monkeypatch.setattr(training, "BATCH_CHARS", block)
    monkeypatch.setattr(read, "BLOCK", block)
    path = tmp_path / "latin1.txt"
    path.write_bytes("caf\u00e9 ok\n".encode() * 3 + b"na\xefve\n")
    with pytest.raises(CorpusFileError, match=r"latin1\.txt: not UTF-8 at byte 29"):
        tokenmill.train(path, 300)
    gz = tmp_path / "latin1.txt.gz"
    gz.write_bytes(gzip.compress(path.read_bytes()))
    with pytest.raises(CorpusFileError, match=r"not UTF-8 at byte 29 \(decompressed\)"):
        tokenmill.train(gz, 300)
    truncated = tmp_path / "cut.txt"
    truncated.write_bytes("ok é".encode()[:-1])
    with pytest.raises(CorpusFileError, match="not UTF-8 at byte 3"):
        tokenmill.train(truncated, 300)


def test_bad_jsonl(tmp_path):
    path = tmp_path / "c.jsonl"
    path.write_text('{"text": "ok"}\n{"txt": "no"}\n', encoding="utf-8")
    with pytest.raises(CorpusFileError, match=r"c\.jsonl, line 2: no 'text' field"):
        tokenmill.train(path, 300)
    path.write_text('{"text": "ok"}\nnot json\n', encoding="utf-8")
    with pytest.raises(CorpusFileError, match="line 2: not JSON"):
        tokenmill.train(path, 300)
    path.write_text('{"text": 5}\n', encoding="utf-8")
    with pytest.raises(CorpusFileError, match="is int, not text"):
        tokenmill.train(path, 300)
