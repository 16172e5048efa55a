"""Looking at tokenizers: token boundaries, vocabulary summaries, comparisons."""
