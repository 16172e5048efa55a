"""Token boundaries made visible: ``|`` between tokens, or colours in a terminal.

>>> import tokenmill
>>> enc = tokenmill.load("gpt2")
>>> render(enc, enc.encode("Hello world!"))
'Hello| world|!'
>>> render(enc, enc.encode("Hi there"), show_ids=True)
'Hi[17250]| there[612]'
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tokenmill.tokenizer import Tokenizer

# Background colours that keep black text readable (ANSI 256-colour palette).
_BACKGROUNDS = (153, 222, 157, 217, 189, 230)
_RESET = "\x1b[0m"


def token_text(data: bytes) -> str:
    """A token's bytes as text; bytes that are not whole UTF-8 characters show as ``\\xNN``."""
    return data.decode("utf-8", "backslashreplace")


def render(
    tok: Tokenizer, ids: Sequence[int], *, color: bool = False, show_ids: bool = False
) -> str:
    """The decoded text with each token marked: ``|`` separators, or alternating colours."""
    parts = []
    for i, (token, data) in enumerate(zip(ids, tok.decode_tokens_bytes(ids), strict=True)):
        text = token_text(data)
        label = f"[{token}]" if show_ids else ""
        if color:
            visible = text.replace("\n", "↵\n").replace("\t", "→\t")
            bg = _BACKGROUNDS[i % len(_BACKGROUNDS)]
            dim = f"\x1b[2m{label}" if label else ""
            parts.append(f"\x1b[30;48;5;{bg}m{visible}{dim}{_RESET}")
        else:
            parts.append(text + label)
    return "".join(parts) if color else "|".join(parts)
