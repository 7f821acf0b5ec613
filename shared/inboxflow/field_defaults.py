"""Default factories for pydantic fields that are cheap to build.

Pydantic asks each ``default_factory`` for its signature (does it take the
validated data?) every time it builds a validator holding the field. For the
builtin ``list`` that means parsing its text signature (about 0.1 ms, 15 times
a plain function's), and a node's first event builds its state, checkpoint,
step log, email and config validators with dozens of such fields: a few ms of
every cold start (issue 42), and the first builtin asked costs about 2.7 ms more
(``inspect`` compiles its tokenizer). :func:`empty_list` and :func:`empty_dict`
make the same empty list and dict.
"""

from __future__ import annotations

from typing import Any


def empty_list() -> list[Any]:
    """A new empty list: ``Field(default_factory=empty_list)`` instead of ``list``."""
    return []


def empty_dict() -> dict[Any, Any]:
    """A new empty dict: ``Field(default_factory=empty_dict)`` instead of ``dict``."""
    return {}


__all__ = ["empty_dict", "empty_list"]
