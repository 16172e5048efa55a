"""tokenmill.compat.tiktoken behaves as tiktoken does (oracle: tiktoken itself)."""

from __future__ import annotations

import inspect
import pickle

import pytest
from oracle import tiktoken_encoding

from tokenmill.compat import tiktoken as tt

NAMES = ["gpt2", "r50k_base", "cl100k_base", "o200k_base"]
SAMPLES = ["hello world", "<|endoftext|> and more", "naïve 日本語 🙂", "  x\n\n  y  ", ""]


@pytest.mark.parametrize("name", NAMES)
def test_same_results_as_tiktoken(name):
    ours, theirs = tt.get_encoding(name), tiktoken_encoding(name)
    assert ours.name == theirs.name
    for text in SAMPLES:
        assert ours.encode(text, allowed_special="all") == theirs.encode(
            text, allowed_special="all"
        )
        assert ours.encode_ordinary(text) == theirs.encode_ordinary(text)
        # Names that are not special tokens are ignored, as tiktoken does.
        kw = {"allowed_special": {"<|endoftext|>", "not-special"}}
        assert ours.encode(text, **kw) == theirs.encode(text, **kw)
    assert ours.encode_batch(SAMPLES[2:]) == theirs.encode_batch(SAMPLES[2:])
    assert ours.encode_ordinary_batch(SAMPLES) == theirs.encode_ordinary_batch(SAMPLES)
    with pytest.raises(ValueError):
        ours.encode("<|endoftext|>")
    ids = theirs.encode_ordinary(SAMPLES[2])
    assert ours.decode(ids) == theirs.decode(ids)
    assert ours.decode_with_offsets(ids) == theirs.decode_with_offsets(ids)
    assert ours.n_vocab == theirs.n_vocab and ours.max_token_value == theirs.max_token_value
    assert ours.eot_token == theirs.eot_token
    assert ours._special_tokens == theirs._special_tokens
    assert ours._pat_str == theirs._pat_str


def test_constructor_and_pickling():
    base = tiktoken_encoding("cl100k_base")
    kwargs = {
        "pat_str": base._pat_str,
        "mergeable_ranks": base._mergeable_ranks,
        "special_tokens": {**base._special_tokens, "<|im_start|>": 100264, "<|im_end|>": 100265},
    }
    import tiktoken

    ours = tt.Encoding("cl100k_im", **kwargs)
    theirs = tiktoken.Encoding("cl100k_im", **kwargs)
    text = "<|im_start|>user hi<|im_end|>"
    assert ours.encode(text, allowed_special="all") == theirs.encode(text, allowed_special="all")
    again = pickle.loads(pickle.dumps(ours))
    assert isinstance(again, tt.Encoding)
    assert again.encode(text, allowed_special="all") == theirs.encode(text, allowed_special="all")
    assert isinstance(pickle.loads(pickle.dumps(tt.get_encoding("gpt2"))), tt.Encoding)


def test_models():
    import tiktoken

    for model in [
        "gpt-4o",
        "gpt-4o-mini-2024-07-18",
        "gpt-4",
        "gpt-3.5-turbo",
        "text-davinci-003",
        "text-embedding-3-small",
        "davinci",
        "gpt2",
        "o1-preview",
        "gpt-4-0613",
    ]:
        assert tt.encoding_name_for_model(model) == tiktoken.encoding_name_for_model(model)
    assert tt.encoding_for_model("gpt-4").name == "cl100k_base"
    with pytest.raises(KeyError):
        tt.encoding_for_model("no-such-model")
    with pytest.raises(ValueError, match="Unknown encoding"):
        tt.get_encoding("nope")


METHODS = [
    "encode",
    "encode_ordinary",
    "encode_batch",
    "encode_ordinary_batch",
    "decode",
    "decode_bytes",
    "decode_single_token_bytes",
    "decode_tokens_bytes",
    "decode_with_offsets",
    "decode_batch",
    "decode_bytes_batch",
    "encode_single_token",
    "token_byte_values",
    "encode_to_numpy",
    "is_special_token",
]


@pytest.mark.parametrize("method", METHODS)
def test_signatures_match(method):
    import tiktoken

    want = inspect.signature(getattr(tiktoken.Encoding, method))
    got = inspect.signature(getattr(tt.Encoding, method))
    names = lambda sig: [(p.name, p.kind, p.default) for p in sig.parameters.values()]  # noqa: E731
    assert names(got) == names(want)
