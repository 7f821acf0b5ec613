"""Email: the model the graphs see, and how mail becomes it.

- ``model``: ``Email``, ``Address``, ``Attachment``, ``CalendarInvite``,
  ``ForwardedMessage``, ``EmailParseError``.
- ``loaders``: ``.eml``/``.json`` files, JSON objects, Gmail's raw messages;
  the bundled sample inbox.
- ``mime`` (the parse, size caps) and ``walk`` (the MIME tree), with
  ``headers`` (decoding, addresses, dates, ids, ``TRACE_HEADER``),
  ``charsets`` and ``calendar_parts``; ``html_text`` (HTML to inert text).
- ``quoting``: ``Re:`` subjects, quoted replies and signatures;
  ``prompt``: the email as prompt input.
- ``loop_guard``: mail we never answer and addresses we never write to (RFC 3834).
- ``forwarded``: the message a forward carries (its writer, date, subject, text).

The public model API is re-exported here. The rest (the MIME parser, the
loaders, headers, HTML and prompt helpers) is imported on first use, so a node
that only reads an ``Email`` from its state does not pay for it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .model import (
    MODEL_BODY_LIMIT,
    Address,
    Attachment,
    CalendarInvite,
    Email,
    EmailParseError,
    ForwardedMessage,
)
from .quoting import bare_subject, reply_subject, strip_quoted

if TYPE_CHECKING:
    from .headers import TRACE_HEADER
    from .html_text import html_to_text
    from .loaders import (
        email_from_eml,
        email_from_json,
        load_email_file,
        sample_inbox_dir,
        sample_inbox_paths,
    )
    from .mime import parse_message
    from .prompt import neutralise_markers, prompt_fields
else:
    _LAZY = {
        "TRACE_HEADER": "headers",
        "html_to_text": "html_text",
        "email_from_eml": "loaders",
        "email_from_json": "loaders",
        "load_email_file": "loaders",
        "sample_inbox_dir": "loaders",
        "sample_inbox_paths": "loaders",
        "parse_message": "mime",
        "neutralise_markers": "prompt",
        "prompt_fields": "prompt",
    }

    def __getattr__(name: str) -> Any:
        """Import the rest of the package's API on first use: a node function that only
        validates an ``Email`` in its state pays for the model and nothing else."""
        module = _LAZY.get(name)
        if module is None:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
        globals()[name] = value
        return value


__all__ = [
    "MODEL_BODY_LIMIT",
    "TRACE_HEADER",
    "Address",
    "Attachment",
    "CalendarInvite",
    "Email",
    "EmailParseError",
    "ForwardedMessage",
    "bare_subject",
    "email_from_eml",
    "email_from_json",
    "html_to_text",
    "load_email_file",
    "neutralise_markers",
    "parse_message",
    "prompt_fields",
    "reply_subject",
    "sample_inbox_dir",
    "sample_inbox_paths",
    "strip_quoted",
]
