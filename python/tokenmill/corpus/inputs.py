"""The two names ``benchmarks/bench_corpus.py`` imports from here. Finding and planning
corpus inputs live in :mod:`tokenmill.sources`; remove this module once the benchmark imports
them from there."""

from __future__ import annotations

from tokenmill.sources.files import InputFile, find
from tokenmill.sources.read import Plan
from tokenmill.sources.read import plan_items as _plan_items


def find_inputs(inputs: object) -> list[InputFile]:
    """:func:`tokenmill.sources.files.find`."""
    return find(inputs)  # type: ignore[arg-type]


def plan_items(files: list[InputFile], item_bytes: int, pattern: str | None) -> Plan:
    """:func:`tokenmill.sources.read.plan_items`, texts cut when ``pattern`` is named."""
    return _plan_items(files, item_bytes, pattern is not None)
