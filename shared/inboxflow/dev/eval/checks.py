"""Does an outcome field match a case's label? (The rules are in ``docs/evaluating.md``.)

For a field whose value is one thing (a category, a status, a number):
a value must be equal (text case-insensitively), a list is any of its items,
a comparison holds for the number. For a field whose value is a list (``sent``,
``tools``, ``asked``...): a list is the same items in any order (``[]``:
none), a list of lists is any of those, one value must be among the items, and
a comparison holds for the number of items.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .cases import Comparison


@dataclass(frozen=True)
class FieldCheck:
    """One label against the outcome.

    Attributes:
        field: the outcome field.
        expected: the label as written (a comparison as its string).
        actual: the outcome's value.
        ok: whether they match.
    """

    field: str
    expected: Any
    actual: Any
    ok: bool


def check(field: str, expected: Any, actual: Any) -> FieldCheck:
    """Compare one label with the outcome's value."""
    return FieldCheck(field, written(expected), actual, matches(expected, actual))


def written(expected: Any) -> Any:
    """A label as JSON can hold it (comparisons as their string)."""
    if isinstance(expected, Comparison):
        return str(expected)
    if isinstance(expected, list):
        return [written(item) for item in expected]
    return expected


def matches(expected: Any, actual: Any) -> bool:
    """Whether the outcome value ``actual`` satisfies the label ``expected``."""
    if isinstance(actual, list):
        if isinstance(expected, Comparison):
            return expected.holds(len(actual))
        if isinstance(expected, list):
            if expected and all(isinstance(item, list) for item in expected):
                return any(_same_items(item, actual) for item in expected)
            return _same_items(expected, actual)
        return any(_equal(expected, item) for item in actual)
    if isinstance(expected, Comparison):
        return _number(actual) and expected.holds(float(actual))
    if isinstance(expected, list):
        return any(matches(item, actual) for item in expected)
    return _equal(expected, actual)


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _equal(expected: Any, actual: Any) -> bool:
    if isinstance(expected, str) and isinstance(actual, str):
        return expected.strip().casefold() == actual.strip().casefold()
    if isinstance(expected, bool) or isinstance(actual, bool):
        return type(expected) is type(actual) and expected == actual
    if _number(expected) and _number(actual):
        return abs(float(expected) - float(actual)) < 1e-9
    return bool(expected == actual)


def _same_items(expected: list[Any], actual: list[Any]) -> bool:
    def key(value: Any) -> str:
        return value.strip().casefold() if isinstance(value, str) else repr(value)

    return {key(item) for item in expected} == {key(item) for item in actual}
