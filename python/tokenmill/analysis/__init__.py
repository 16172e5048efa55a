"""Looking at tokenizers: token boundaries, vocabulary summaries, comparisons, and the
failure-mode report (:func:`report`, computed by the modules of :mod:`.failures`)."""

from tokenmill.analysis.failures import Report, report

__all__ = ["Report", "report"]
