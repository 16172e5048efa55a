"""The inputs of a corpus, found and read the same way by ``tokenmill train``, ``report`` and
``encode-corpus`` (and :func:`tokenmill.train`, :func:`tokenmill.corpus.encode`, the report):

- :mod:`~tokenmill.sources.files`: names, globs and folders -> input files; the bundled
  corpora by name;
- :mod:`~tokenmill.sources.read`: input files -> work items -> documents (text files, ``.jsonl``
  records, Parquet rows, any of them gzipped);
- :mod:`~tokenmill.sources.cut`: the one rule for where a long text may be cut.
"""

from tokenmill.sources.cut import may_cut
from tokenmill.sources.files import InputFile, bundled_corpus, find, input_file
from tokenmill.sources.read import read_text, read_texts

__all__ = [
    "InputFile",
    "bundled_corpus",
    "find",
    "input_file",
    "may_cut",
    "read_text",
    "read_texts",
]
