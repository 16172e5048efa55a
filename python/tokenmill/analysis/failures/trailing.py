"""Section 5, trailing space: what ending a prompt with a space does to the last tokens.

Words carry their leading space (" Oh" is one token), so a prompt ending in " " leaves the
model a lone " " token that it rarely saw in training, and the natural next token " Oh" can
no longer follow: it would have to write "Oh" without the space.

>>> import tokenmill
>>> rows = compute(tokenmill.load("gpt2"))["examples"]
>>> rows[0]["natural"], rows[0]["trailing_space"]
([' said', ' Oh'], [' said', ' ', 'Oh'])
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tokenmill.analysis.failures.encoded import Encoded, shown

if TYPE_CHECKING:
    from tokenmill.tokenizer import Tokenizer

# (prompt, the word that naturally follows it)
PROMPTS = (
    ("I looked up and said", " Oh"),
    ("Once upon a", " time"),
    ("The capital of France is", " Paris"),
    ("Elementary, my dear", " Watson"),
)


def compute(tok: Tokenizer, encoded: Encoded | None = None) -> dict[str, Any]:
    """For each prompt: the last tokens of prompt + word, and of prompt + " " then the word
    typed without its space (same text, different tokens); how often a lone space token
    occurs in the corpus."""
    examples = []
    for prompt, word in PROMPTS:
        natural = tok.encode_ordinary(prompt + word)
        spaced = tok.encode_ordinary(prompt + " ")
        typed = spaced + tok.encode_ordinary(word.lstrip(" "))
        keep = len(tok.encode_ordinary(prompt)) - 1  # from the prompt's last token on
        examples.append(
            {
                "prompt": prompt,
                "word": word,
                "natural": shown(tok, natural[keep:]),
                "trailing_space": shown(tok, typed[keep:]),
                "prompt_with_space_ends": shown(tok, spaced[keep:]),
                "tokens": [len(natural), len(typed)],
                "same_ids": natural == typed,
            }
        )
    out: dict[str, Any] = {"examples": examples}
    if encoded is not None:
        space = tok.rank(b" ")
        n = int(encoded.counts[space]) if space is not None else 0
        out["lone_space_tokens"] = n
        out["lone_space_share"] = n / encoded.total if encoded.total else 0.0
        pairs = []
        for _, word in PROMPTS:
            with_space, without = tok.rank(word.encode()), tok.rank(word[1:].encode())
            pairs.append(
                {
                    "word": word,
                    "with_space": int(encoded.counts[with_space])
                    if with_space is not None
                    else None,
                    "without_space": int(encoded.counts[without]) if without is not None else None,
                }
            )
        out["word_counts"] = pairs
    return out
