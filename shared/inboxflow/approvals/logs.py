"""Keep reviewer tokens out of access logs.

A review link carries its token in the query (``?t=``); the web servers that
serve the approval function log request lines. ``redact_access_logs`` puts a
filter on their loggers (werkzeug's, which ``inboxflow serve`` and
``functions-framework --debug`` use, and gunicorn's access log, should one be
configured) that replaces the token by ``REDACTED`` before anything is written.
"""

from __future__ import annotations

import logging

from .records import redact_tokens

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
