"""Gmail ingestion (ARCHITECTURE section 5): watch notifications to traces.

- ``notification``: decoding ``{emailAddress, historyId}`` Pub/Sub messages.
- ``gmail_reader``: the Gmail port; ``gmail_api`` its client-library adapter,
  ``memory_gmail`` an in-memory fake.
- ``mailboxes``: the mailbox registry and its forward-only history cursor.
- ``claims``, ``threads``: per-message claims and the thread resolver.
- ``ingest``: the ``Ingestor``; ``watch``: watch renewal; ``entry``: the
  deployed functions' code.

Nothing here imports a Google client library at import time.
"""
