"""A transformers drop-in: a tokenmill tokenizer as HF ``transformers``' fast tokenizer
(:func:`to_transformers`, ``Tokenizer.to_transformers``), or as a folder that
``transformers.AutoTokenizer.from_pretrained(folder)`` loads (:func:`save_pretrained`, which
needs no ``transformers``).

Both carry the tokenizer's ``tokenizer.json`` (:mod:`tokenmill.formats.hf`), on which HF
computes tokenmill's ids: HF's ``encode(text)`` and ``__call__`` match special-token strings
in any text, so they give ``encode(text, allowed_special="all", add_special_tokens=True)``,
and with ``split_special_tokens=True`` they give ``encode_ordinary(text)`` with the same
additions. HF adds the tokens of the tokenizer's ``template`` (its post-processor) unless
told ``add_special_tokens=False``, and none when the template is empty; ``decode`` gives
tokenmill's ``decode`` (bytes that are not UTF-8 replaced alike), and
``clean_up_tokenization_spaces`` is off so that ``decode(encode(text)) == text``. Padding,
truncation, ``return_tensors`` and the rest are HF's own code, run on the same file. (HF's
``save_pretrained`` writes the padding and truncation of the tokenizer's last call into
``tokenizer.json``, where HF ``tokenizers`` applies them to every batch; ``tokenmill.load``
refuses such a file, as tokenmill neither pads nor truncates.)

Special tokens. A special token takes the role its name says (:data:`ROLES`: ``<s>`` is
``bos_token``, ``<pad>`` ``pad_token``, ...). ``<|endoftext|>`` is ``eos_token`` when no other
token is, and then also ``bos_token`` and ``unk_token`` unless others take those roles, as
transformers' ``GPT2Tokenizer`` defaults and HF's ports of GPT-2, GPT-4 and GPT-4o have it: the
drop-in for ``gpt2`` has the special ids that code written for HF's has, and like HF's it has
no ``pad_token`` (HF then refuses to pad until one is given, e.g.
``to_transformers(pad_token="<|endoftext|>")``). A byte-level vocabulary holds every byte, so
the unknown token is never produced. Keyword arguments set any role (None removes it) and any
other option of the tokenizer's config (``model_max_length``, ``padding_side``, ...).

>>> import tokenmill
>>> fast = tokenmill.load("gpt2").to_transformers()
>>> fast("hello world<|endoftext|>")["input_ids"], fast.eos_token_id
([31373, 995, 50256], 50256)
>>> fast.decode([31373, 995, 50256], skip_special_tokens=True)
'hello world'
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tokenmill.errors import MissingDependencyError, WrongTypeError
from tokenmill.fileio import write_atomic
from tokenmill.formats import hf

if TYPE_CHECKING:
    from tokenmill.tokenizer import Tokenizer

# Role -> the special-token names that take it, the first present wins.
ROLES: dict[str, tuple[str, ...]] = {
    "bos_token": ("<|begin_of_text|>", "<|startoftext|>", "<s>", "<bos>"),
    "eos_token": ("<|end_of_text|>", "</s>", "<eos>", "<|endoftext|>"),
    "unk_token": ("<unk>", "<|unk|>"),
    "pad_token": ("<pad>", "<|pad|>", "[PAD]", "<|padding|>"),
}
# GPT-2's end-of-text token, also its beginning and unknown token in transformers.
GPT2_EOT = "<|endoftext|>"
TOKENIZER_JSON = "tokenizer.json"
TOKENIZER_CONFIG = "tokenizer_config.json"


def special_roles(tok: Tokenizer) -> dict[str, str]:
    """The roles (``bos_token``, ``eos_token``, ``unk_token``, ``pad_token``) the tokenizer's
    special tokens take (see the module docstring).

    >>> import tokenmill
    >>> special_roles(tokenmill.load("gpt2"))
    {'bos_token': '<|endoftext|>', 'eos_token': '<|endoftext|>', 'unk_token': '<|endoftext|>'}
    >>> special_roles(tokenmill.train("ab cd ab cd", 259))
    {}
    """
    have = tok.special_tokens
    roles = {}
    for role, names in ROLES.items():
        found = next((n for n in names if n in have), None)
        if found is not None:
            roles[role] = found
    if roles.get("eos_token") == GPT2_EOT:
        roles = {"bos_token": GPT2_EOT, "eos_token": GPT2_EOT, "unk_token": GPT2_EOT} | roles
    return roles


def tokenizer_config(tok: Tokenizer, **options: Any) -> dict[str, Any]:
    """The options HF's fast tokenizer is built with (what ``tokenizer_config.json`` holds):
    the special tokens' roles, no clean-up of spaces on decoding, then ``options``.

    >>> import tokenmill
    >>> config = tokenizer_config(tokenmill.load("gpt2"), unk_token=None, model_max_length=1024)
    >>> config["eos_token"], "unk_token" in config, config["model_max_length"]
    ('<|endoftext|>', False, 1024)
    """
    config: dict[str, Any] = {
        "tokenizer_class": "PreTrainedTokenizerFast",
        "clean_up_tokenization_spaces": False,
    }
    config |= special_roles(tok)
    for key, value in options.items():
        if value is None and key in ROLES:
            config.pop(key, None)
        else:
            config[key] = value
    return config


def to_transformers(tok: Tokenizer, **options: Any) -> Any:
    """``tok`` as a ``transformers.PreTrainedTokenizerFast`` (see the module docstring);
    ``options`` go to its constructor after the special tokens' roles.

    Raises :class:`~tokenmill.MissingDependencyError` when ``transformers`` is not installed.

    >>> import tokenmill
    >>> fast = to_transformers(tokenmill.load("gpt2"), pad_token="<|endoftext|>")
    >>> fast(["hello world", "hi"], padding=True)["attention_mask"]
    [[1, 1], [1, 0]]
    """
    try:
        import tokenizers
        from transformers import PreTrainedTokenizerFast
    except ImportError as e:
        raise MissingDependencyError(
            f"to_transformers needs HF transformers ({e}): pip install transformers; "
            "tokenmill.compat.transformers.save_pretrained writes a folder without it"
        ) from None
    backend = tokenizers.Tokenizer.from_str(hf.to_json(tok))
    config = tokenizer_config(tok, **options)
    config.pop("tokenizer_class")
    fast = PreTrainedTokenizerFast(tokenizer_object=backend, **config)
    fast.name_or_path = tok.name
    return fast


def save_pretrained(tok: Tokenizer, folder: str | os.PathLike[str], **options: Any) -> list[str]:
    """Write ``tokenizer.json`` and ``tokenizer_config.json`` into ``folder`` (created if
    needed; each file atomically), which ``transformers.AutoTokenizer.from_pretrained``
    loads as :func:`to_transformers` builds it, and ``tokenmill.load(folder)`` as ``tok``.
    ``options`` (JSON values) go into the config. Returns the paths written.

    >>> import json, tempfile, pathlib, tokenmill
    >>> folder = pathlib.Path(tempfile.mkdtemp()) / "hf"
    >>> [pathlib.Path(p).name for p in save_pretrained(tokenmill.load("gpt2"), folder)]
    ['tokenizer.json', 'tokenizer_config.json']
    >>> json.loads((folder / "tokenizer_config.json").read_text())["eos_token"]
    '<|endoftext|>'
    >>> tokenmill.load(folder) == tokenmill.load("gpt2")
    True
    """
    config = tokenizer_config(tok, **options)
    try:
        config_text = json.dumps(config, indent=2, ensure_ascii=False) + "\n"
    except TypeError as e:
        raise WrongTypeError(f"save_pretrained's options must be JSON values: {e}") from None
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    paths = [out / TOKENIZER_JSON, out / TOKENIZER_CONFIG]
    write_atomic(paths[0], hf.to_json(tok).encode("utf-8"))
    write_atomic(paths[1], config_text.encode("utf-8"))
    return [str(p) for p in paths]
