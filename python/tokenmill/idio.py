"""Token ids in and out of files: text (whitespace-separated), JSON, ``.npy`` and raw
``uint16``/``uint32`` ``.bin`` (the layout small-GPT training scripts read).

>>> import io
>>> buf = io.BytesIO()
>>> write_ids(buf, [[1, 2, 3], [4]], "text")
>>> buf.getvalue()
b'1 2 3\\n4\\n'
>>> read_ids(b"1 2 3\\n4\\n", "text")
[[1, 2, 3], [4]]
"""

from __future__ import annotations

import io
import json
from collections.abc import Sequence
from typing import BinaryIO

import numpy as np

from tokenmill.errors import IdsFileError, InvalidArgumentError

FORMATS = ("text", "json", "npy", "bin")
DTYPES = ("uint16", "uint32")


def dtype_for(n_vocab: int, requested: str | None = None) -> str:
    """``uint16`` when every id fits, else ``uint32``; a requested dtype too small is an error."""
    if requested is None:
        return "uint16" if n_vocab <= 1 << 16 else "uint32"
    if requested not in DTYPES:
        raise InvalidArgumentError(f"dtype must be one of {', '.join(DTYPES)}, not {requested!r}")
    if requested == "uint16" and n_vocab > 1 << 16:
        raise InvalidArgumentError(
            f"ids up to {n_vocab - 1} do not fit in uint16; use --dtype uint32"
        )
    return requested


def guess_format(path: str | None) -> str:
    """The format a file name suggests (``.json``, ``.npy``, ``.bin``), else ``text``."""
    if path:
        for fmt, suffix in (("json", ".json"), ("npy", ".npy"), ("bin", ".bin")):
            if path.endswith(suffix):
                return fmt
    return "text"


def write_ids(
    out: BinaryIO, docs: Sequence[Sequence[int]], fmt: str, dtype: str = "uint32"
) -> None:
    """Write documents of ids. ``text``: one document per line; ``json``: a list per document
    (a single list when there is one document); ``npy``/``bin``: all ids concatenated."""
    if fmt == "text":
        out.write(b"".join(" ".join(map(str, d)).encode() + b"\n" for d in docs))
    elif fmt == "json":
        value = list(docs[0]) if len(docs) == 1 else [list(d) for d in docs]
        out.write(json.dumps(value).encode() + b"\n")
    elif fmt in ("npy", "bin"):
        flat = (
            np.concatenate([np.asarray(d, dtype=np.int64) for d in docs]) if docs else np.zeros(0)
        )
        arr = flat.astype(dtype)
        if fmt == "npy":
            buf = io.BytesIO()
            np.save(buf, arr)
            out.write(buf.getvalue())
        else:
            out.write(arr.tobytes())
    else:
        raise InvalidArgumentError(f"format must be one of {', '.join(FORMATS)}, not {fmt!r}")


def check_npy_header(data: bytes) -> None:
    """An :class:`IdsFileError` unless ``data`` starts with a ``.npy`` header of integer ids
    whose shape the bytes after it hold: checked before ``np.load``, which allocates the
    array the header declares (terabytes for a shape of ``(2**40,)`` in a file of 128
    bytes) and lets more than ``ValueError`` out of a damaged header (``tokenize.TokenError``
    for brackets that do not close).

    >>> import io
    >>> buf = io.BytesIO()
    >>> np.save(buf, np.arange(3, dtype=np.uint16))
    >>> check_npy_header(buf.getvalue())
    >>> try:
    ...     check_npy_header(buf.getvalue()[:-1])
    ... except IdsFileError as e:
    ...     print(e)
    the .npy header declares shape (3,) of uint16 (6 bytes), but 5 bytes follow it
    """
    import tokenize
    import warnings

    from numpy.lib import format as npy

    f = io.BytesIO(data)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # e.g. "created on Python 2": np.load says it
            version = npy.read_magic(f)
            if version == (1, 0):
                shape, _, dtype = npy.read_array_header_1_0(f)
            elif version == (2, 0):
                shape, _, dtype = npy.read_array_header_2_0(f)
            else:  # 3.0 is for headers that latin-1 cannot hold: never integer ids'
                shape, dtype = (), None
    except ValueError as e:  # numpy's checks
        raise IdsFileError(f"not a .npy file: {e}"[:300]) from None
    except (
        TypeError,
        SyntaxError,
        OverflowError,
        RecursionError,
        MemoryError,
        tokenize.TokenError,
    ) as e:
        # Python's parser on a damaged header ("{[1]: 2}", brackets that do not close).
        raise IdsFileError(
            f"not a .npy file: its header does not parse ({type(e).__name__}: {e})"[:300]
        ) from None
    if dtype is None:
        raise IdsFileError(
            f"not a .npy file of token ids: format version {version[0]}.{version[1]} "
            "(token ids are written as 1.0 or 2.0)"
        )
    if dtype.kind not in "iu":
        # Floats became the ids they round to, and uint64 past 2**63 negative ids.
        raise IdsFileError(f"expected token ids of an integer dtype, not {dtype}")
    if any(n < 0 for n in shape):
        raise IdsFileError(f"the .npy header declares shape {shape}: a negative dimension")
    count = 1
    for n in shape:
        count *= n
    wanted = count * dtype.itemsize
    left = len(data) - f.tell()
    if wanted > left:
        raise IdsFileError(
            f"the .npy header declares shape {shape} of {dtype} ({wanted:,} bytes), but "
            f"{left:,} bytes follow it"
        )


def read_ids(data: bytes, fmt: str, dtype: str = "uint32") -> list[list[int]]:
    """Documents of ids from file contents (``npy``/``bin`` give a single document)."""
    if fmt == "text":
        try:
            return [
                [int(x) for x in line.split()]
                for line in data.decode().splitlines()
                if line.strip()
            ]
        except ValueError as e:
            raise IdsFileError(f"expected whitespace-separated integers: {e}") from None
    if fmt == "json":
        try:
            value = json.loads(data)
        except json.JSONDecodeError as e:
            raise IdsFileError(f"not valid JSON: {e}") from None
        except RecursionError:
            # json recurses once per [ or {: deep nesting passes Python's recursion limit.
            raise IdsFileError("not usable JSON: nested too deeply") from None
        # (type() is int: JSON's true and false are Python bools, which are ints.)
        if isinstance(value, list) and all(type(x) is int for x in value):
            return [value]
        if isinstance(value, list) and all(
            isinstance(d, list) and all(type(x) is int for x in d) for d in value
        ):
            return value
        raise IdsFileError("expected a JSON list of ids or a list of lists of ids")
    if fmt == "npy":
        check_npy_header(data)
        try:
            arr = np.load(io.BytesIO(data), allow_pickle=False)
        except (ValueError, OSError) as e:
            raise IdsFileError(f"not a .npy file: {e}") from None
        return [arr.reshape(-1).tolist()]
    if fmt == "bin":
        size = np.dtype(dtype).itemsize
        if len(data) % size:
            raise IdsFileError(f"{len(data)} bytes is not a whole number of {dtype} ids")
        return [np.frombuffer(data, dtype=dtype).tolist()]
    raise InvalidArgumentError(f"format must be one of {', '.join(FORMATS)}, not {fmt!r}")
