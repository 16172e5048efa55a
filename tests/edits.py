"""Edits of a parsed JSON document, for the tests that damage or change tokenizer files."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def set_in(*keys: str | int, value: Any) -> Callable[[dict[str, Any]], None]:
    """An edit of a document: the item at ``keys`` becomes ``value``."""

    def edit(doc: dict[str, Any]) -> None:
        node: Any = doc
        for key in keys[:-1]:
            node = node[key]
        node[keys[-1]] = value

    return edit
