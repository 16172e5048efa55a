"""Vocabulary file formats: tiktoken rank files, GPT-2 encoder.json + vocab.bpe, and more."""
