"""The name ``tests/test_bad_files.py``, ``tests/test_formats.py`` and
``benchmarks/bench_playground.py`` import the bundled corpora by: they live in
:mod:`tokenmill.sources.files`, and ``tokenmill train`` in :mod:`tokenmill.cli.train`. Remove
this module once those files import :func:`tokenmill.sources.bundled_corpus`."""

from tokenmill.sources.files import bundled_corpus

__all__ = ["bundled_corpus"]
