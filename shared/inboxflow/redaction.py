"""Keep reviewer tokens out of logs and stored copies.

A review link carries its token in the query (``?t=``): the token is the
reviewer's credential. ``redact_tokens`` rewrites text with every parameter that
may carry one replaced by ``REDACTED`` (the JSON log formatter, the outbox's and
chat webhooks' stored copies use it); ``redact_access_logs`` puts a filter on the
web servers' loggers (werkzeug's, which ``inboxflow serve`` and
``functions-framework --debug`` use, and gunicorn's access log, should one be
configured) that redacts request lines before anything is written.
"""

from __future__ import annotations

import logging
import re
from urllib.parse import unquote_plus

_QUERY_PARAM = re.compile(r"([?&;])([^=&#?\s\"'<>]{0,60})=([^&#\s\"'<>]+)")


_TOKEN_NAMES = frozenset({"t", "token"})


_TOKEN_SHAPED = re.compile(r"[A-Za-z0-9_-]{40,}")
"""A value shaped like a token (``new_token``: 43 URL-safe characters), whatever its name."""


REDACTED = "REDACTED"


def _redact_param(found: re.Match[str]) -> str:
    separator, name, value = found.groups()
    decoded_name, decoded_value = name, value
    for _ in range(3):  # ``%2574`` is ``%74`` is ``t``: every spelling a client may send
        decoded_name, decoded_value = unquote_plus(decoded_name), unquote_plus(decoded_value)
    if decoded_name.strip().lower() in _TOKEN_NAMES or _TOKEN_SHAPED.fullmatch(
        decoded_value.strip()
    ):
        return f"{separator}{name}={REDACTED}"
    return found.group()


def redact_tokens(text: str) -> str:
    """``text`` with every URL parameter that may carry a token redacted (``t=REDACTED``).

    A parameter is redacted when its name, percent-decoded and trimmed, is ``t``
    or ``token`` in any spelling (``%2574=``, ``+t=``, ``T=``: the server refuses
    those, but the request line still carries the token), or when its value has
    the shape of a token (40 or more URL-safe characters). For access logs and
    stored copies of notifications: the token is the reviewer's credential.
    """
    return _QUERY_PARAM.sub(_redact_param, text)


ACCESS_LOGGERS = ("werkzeug", "gunicorn.access", "gunicorn.error")


class RedactTokens(logging.Filter):
    """Rewrites a record's message with every ``t=`` / ``token=`` value redacted."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        redacted = redact_tokens(message)
        if redacted != message:
            record.msg, record.args = redacted, None
        return True


_FILTER = RedactTokens()


def redact_access_logs() -> None:
    """Install the filter on the access loggers (once; safe to call again)."""
    for name in ACCESS_LOGGERS:
        logger = logging.getLogger(name)
        if _FILTER not in logger.filters:
            logger.addFilter(_FILTER)
