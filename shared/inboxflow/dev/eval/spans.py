"""Spans of time as the eval commands take them (``--since 7d``): one parser for all."""

from __future__ import annotations

import re

_DURATION = re.compile(r"^(\d+(?:\.\d+)?)([smhdw])$")
_UNIT_S = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def parse_since(text: str) -> float:
    """Seconds of a duration such as ``7d``, ``12h``, ``30m``, ``2w``.

    Raises:
        ValueError: not a number followed by s, m, h, d or w.
    """
    found = _DURATION.match(text.strip())
    if found is None:
        raise ValueError(f"{text!r} is no duration (e.g. 7d, 12h, 30m)")
    return float(found.group(1)) * _UNIT_S[found.group(2)]
