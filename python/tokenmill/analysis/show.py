r"""How tokens are shown, everywhere tokenmill shows one: ``tokenmill show``, ``inspect``,
``compare``, the summary of ``train``, the report and the playground's API.

Two forms, one rule between them: bytes that are not whole UTF-8 characters are ``\xNN``.

- :func:`token_text` is the token's text as it is (what ``show`` draws between ``|``, what
  the report's pages and the playground put in a box);
- :func:`token_repr` is the token on a line of a listing: quoted, escaped as a Python
  literal (one backslash per escape, a real backslash doubled), and a run of one character
  written ``' ' x 24`` at every length from 4 on, so that no run has to be counted.

>>> import tokenmill
>>> enc = tokenmill.load("gpt2")
>>> render(enc, enc.encode("Hello world!"))
'Hello| world|!'
>>> render(enc, enc.encode("Hi there"), show_ids=True)
'Hi[17250]| there[612]'
>>> token_text(b"\xe6\x97"), token_repr(b"\xe6\x97")
('\\xe6\\x97', "'\\xe6\\x97'")
>>> print(token_repr(b"\\n"), token_repr(b"\n"), token_repr(b"\n" + b" " * 8))
'\\n' '\n' '\n' + ' ' x 8
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tokenmill.tokenizer import Tokenizer

# Background colours that keep black text readable (ANSI 256-colour palette).
_BACKGROUNDS = (153, 222, 157, 217, 189, 230)
_RESET = "\x1b[0m"
# A run of one character this long or longer is written 'c' x N: three can be seen at a
# glance, four and more have to be counted.
RUN = 4
_ESCAPES = {"\\": "\\\\", "\n": "\\n", "\t": "\\t", "\r": "\\r"}


def token_text(data: bytes) -> str:
    """A token's bytes as text; bytes that are not whole UTF-8 characters show as ``\\xNN``."""
    return data.decode("utf-8", "backslashreplace")


def _units(data: bytes) -> list[str]:
    """The token as escaped pieces, one per character or stray byte (without quotes)."""
    units = []
    for c in data.decode("utf-8", "surrogateescape"):
        if "\udc80" <= c <= "\udcff":  # a byte that is not part of a whole character
            units.append(f"\\x{ord(c) - 0xDC00:02x}")
        elif c in _ESCAPES:
            units.append(_ESCAPES[c])
        elif c.isprintable():
            units.append(c)
        elif ord(c) < 0x80:
            units.append(f"\\x{ord(c):02x}")  # an ASCII control byte is a whole character
        else:
            # \u, never \x: a character above U+007F is not the stray byte \xNN.
            units.append(f"\\u{ord(c):04x}" if ord(c) <= 0xFFFF else f"\\U{ord(c):08x}")
    return units


def _quoted(units: Sequence[str]) -> str:
    text = "".join(units)
    quote = '"' if "'" in text and '"' not in text else "'"
    return quote + text.replace(quote, "\\" + quote) + quote


def token_repr(data: bytes) -> str:
    """A token for a line of a listing: quoted and escaped (see the module docstring), runs of
    one character from :data:`RUN` on as ``'c' x N``, after a different first character as
    ``'a' + 'c' x N``.

    >>> token_repr(b" " * 24), token_repr(b" " + b"=" * 40), token_repr(b"   "), token_repr(b"it's")
    ("' ' x 24", "' ' + '=' x 40", "'   '", '"it\\'s"')
    """
    units = _units(data)
    if len(units) >= RUN and len(set(units[1:])) == 1:
        run = units[1]
        if units[0] == run:
            return f"{_quoted([run])} x {len(units)}"
        if len(units) - 1 >= RUN:
            return f"{_quoted(units[:1])} + {_quoted([run])} x {len(units) - 1}"
    return _quoted(units)


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
