"""Which instruction set tokenmill's hot loops run.

The scanners and the merge are compiled in one copy per level of x86_64 (``portable``,
``avx2``, ``avx512``, ``avx512vbmi``) and the highest the CPU has runs; their ids are equal
(the tests run each copy against tiktoken's). The environment variable ``TOKENMILL_ISA`` set
to a level's name before tokenmill is imported runs that level instead: a debugging aid, and
how the tests reach every copy on one machine. A name this CPU cannot run fails the import
with :class:`~tokenmill.UnsupportedIsaError`.

>>> import tokenmill
>>> tokenmill.isa() in tokenmill.supported_isas()
True
>>> tokenmill.supported_isas()[0]
'portable'
"""

from __future__ import annotations

from tokenmill import _core


def isa() -> str:
    """The instruction set the hot loops run: ``portable``, ``avx2``, ``avx512`` or
    ``avx512vbmi`` (the highest this CPU has, or ``TOKENMILL_ISA``'s)."""
    return _core.isa()


def supported_isas() -> list[str]:
    """The instruction sets this CPU can run, lowest first: the names ``TOKENMILL_ISA`` takes."""
    return _core.supported_isas()
