"""Gmail ingestion (docs/architecture.md §7): watch notifications to traces.

- ``notification``: decoding ``{emailAddress, historyId}`` Pub/Sub messages.
- Gmail is reached through the ``GmailReader`` port (``ports/gmail_reader.py``;
  adapters ``GoogleApiGmailReader`` and ``InMemoryGmailReader`` in ``adapters/``).
- ``mailboxes``: the mailbox registry and its forward-only history cursor.
- ``claims``, ``threads``: per-message claims and the thread resolver.
- ``sync``: the ``Ingestor`` (notification, history listing, cursor, claims);
  ``dispatch``: start, resume or queue a trace for a claimed message;
  ``report``, ``failures``: what a notification did and what was refused;
  ``watch``: watch renewal; ``entry``: the deployed functions' code.

Nothing here imports a Google client library at import time.
"""
