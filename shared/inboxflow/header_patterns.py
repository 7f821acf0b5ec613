"""``header_match`` patterns: compiled by RE2, matched in linear time on a capped value.

Header values come from the sender (up to 16,000 characters each), so a
pattern must not be able to backtrack: ``^(a+)+$`` took Python's ``re`` more
than eight minutes on a 35-character subject. RE2 (``google-re2``, the
maintained binding of Google's library) matches in time linear in the text
and refuses, at load time, what it cannot do that way: backreferences
(``\\1``), look-around (``(?=``, ``(?<=``), ``\\Z`` (write ``\\z``), ``(?x)`` and
``\\uXXXX`` (write ``\\x{XXXX}``). ``\\d``, ``\\w``, ``\\s`` and ``\\b`` are ASCII in
RE2 (``\\pL``, ``\\p{Nd}`` for Unicode classes). The binding is imported only
when a config has a ``header_match``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

MAX_MATCHED_CHARS = 2000
"""The longest header value a pattern is run on; a longer one matches no pattern (a cut value
would let padding defeat an anchored pattern such as ``^[12]$``)."""


class UnsupportedPattern(ValueError):
    """A pattern RE2 refuses; the message is one line saying why."""


@dataclass(frozen=True)
class HeaderPattern:
    """One compiled ``header_match`` pattern.

    Attributes:
        pattern: the pattern as written in the config.
        compiled: the RE2 regexp.
    """

    pattern: str
    compiled: Any

    def search(self, value: str) -> bool:
        """Whether the pattern occurs in ``value``; False for a value over :data:`MAX_MATCHED_CHARS`."""
        if len(value) > MAX_MATCHED_CHARS:
            return False
        return self.compiled.search(value) is not None


def compile_header_pattern(pattern: str) -> HeaderPattern:
    """``pattern`` compiled by RE2 (searched anywhere in the value, like ``re.search``).

    Raises:
        UnsupportedPattern: a syntax error, or a construct RE2 does not run in linear time.
    """
    import re2

    options = re2.Options()
    options.log_errors = False  # the error comes back as our one-line ConfigError instead
    try:
        compiled = re2.compile(pattern, options)
    except re2.error as exc:
        reason = exc.args[0] if exc.args else "invalid pattern"
        if isinstance(reason, bytes):
            reason = reason.decode("utf-8", "replace")
        raise UnsupportedPattern(
            f"RE2 refuses it ({reason}; routing runs patterns in linear time: "
            "no backreferences, look-around or \\Z)"
        ) from None
    return HeaderPattern(pattern, compiled)
