"""A burst of mail into one mailbox: every message exactly one trace, none missed (not a test).

N messages are delivered to the Gmail double (served over HTTP, reached through
googleapiclient); every watch notification is queued twice (Pub/Sub delivers
at least once) and the queue is shuffled (in any order); W workers ingest them
at once. A run that meets messages another run is handling ends retryable and
its notification is queued again, as Pub/Sub would redeliver it. The traces are
started, not run (this measures ingestion).

    .venv/bin/python bench/ingest_burst.py [--messages 200] [--workers 8] [--store sqlite|firestore]

``--store firestore`` starts the Firestore emulator (gcloud SDK needed).
Prints messages, traces, duplicates (messages met again after their claim was
done), stale notifications, redeliveries and seconds.
"""

from __future__ import annotations

import argparse
import queue
import random
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

from inboxflow.adapters.google_gmail_reader import GoogleApiGmailReader
from inboxflow.adapters.inprocess_bus import InProcessBus
from inboxflow.adapters.offline_llm import OfflineModel
from inboxflow.adapters.store_workspace import StoreWorkspace
from inboxflow.clock import SystemClock
from inboxflow.dev.doubles.google_api import GoogleApiDouble
from inboxflow.ingest.claims import message_trace_id
from inboxflow.ingest.mailboxes import MailboxRegistry
from inboxflow.ingest.notification import GmailNotification
from inboxflow.ingest.sync import IngestIncomplete, IngestOptions, Ingestor
from inboxflow.ingest.watch import renew_watches
from inboxflow.ports.checkpoint import CheckpointStore
from inboxflow.services import build_runtime
from inboxflow.settings import Settings

MAILBOX = "maya.chen@brightlane.io"
TOPIC = "projects/inboxflow-local/topics/inboxflow-gmail"


def message(n: int) -> bytes:
    """A plain customer question, different for each ``n``."""
    return (
        f"From: Customer {n} <customer{n}@example.com>\r\nTo: {MAILBOX}\r\n"
        f"Subject: Burst question {n}\r\nMessage-ID: <burst-{n}@example.com>\r\n"
        "Date: Thu, 14 Jan 2027 09:12:31 +0000\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n"
        f"Hello, how much are {n} seats on the team plan?\r\n"
    ).encode()


def run_burst(
    store: CheckpointStore, messages: int = 200, workers: int = 8, seed: int = 5
) -> dict[str, Any]:
    """Deliver ``messages`` and ingest their notifications with ``workers`` threads.

    Returns:
        ``{messages, traces, missing, extra, duplicates, stale, redeliveries,
        notifications, started, seconds}``.
    """
    clock = SystemClock()
    bus = InProcessBus(clock=clock)
    settings = Settings(
        home=Path(tempfile.gettempdir()),
        project="bench",
        store="sqlite",
        bus="inprocess",
        tasks="sqlite",
    )
    runtime = build_runtime(
        settings,
        clock,
        store=store,
        bus=bus,
        llm=OfflineModel(),
        workspace=StoreWorkspace(store, clock),
    )
    deliveries: queue.Queue[dict[str, Any] | None] = queue.Queue()
    counts: Counter[str] = Counter()
    started: list[str] = []
    lock = threading.Lock()
    with GoogleApiDouble() as double:
        reader = GoogleApiGmailReader(api_url=double.url)
        ingestor = Ingestor(runtime, reader, IngestOptions(backoff_base_s=0.05))
        MailboxRegistry(store).add(MAILBOX, clock.now())
        renew_watches(store, reader, clock, topic=TOPIC)
        notifications: list[dict[str, Any]] = []
        double.on_notify(
            lambda address, history_id: notifications.append(
                GmailNotification(address, history_id).to_pubsub_message()
            )
        )
        gmail_ids = [double.deliver(MAILBOX, message(n)) for n in range(messages)]
        burst = notifications * 2
        random.Random(seed).shuffle(burst)
        for item in burst:
            deliveries.put(item)

        def work() -> None:
            while True:
                item = deliveries.get()
                if item is None:
                    return
                try:
                    report = ingestor.handle_message(item)
                except IngestIncomplete as exc:
                    report = exc.report
                    with lock:
                        counts["redeliveries"] += 1
                    deliveries.put(item)
                finally:
                    deliveries.task_done()
                with lock:
                    started.extend(report.started)
                    counts["duplicates"] += report.duplicates
                    counts["stale"] += report.outcome == "stale"

        began = time.perf_counter()
        threads = [threading.Thread(target=work) for _ in range(workers)]
        for thread in threads:
            thread.start()
        deliveries.join()
        for _ in threads:
            deliveries.put(None)
        for thread in threads:
            thread.join()
        seconds = time.perf_counter() - began
    expected = {message_trace_id(MAILBOX, g) for g in gmail_ids}
    traces = {trace_id for trace_id, _ in store.list("traces")}
    return {
        "messages": messages,
        "notifications": len(burst),
        "traces": len(traces),
        "started": len(started),
        "started_twice": len(started) - len(set(started)),
        "missing": len(expected - traces),
        "extra": len(traces - expected),
        "duplicates": counts["duplicates"],
        "stale": counts["stale"],
        "redeliveries": counts["redeliveries"],
        "seconds": round(seconds, 2),
    }


def main(argv: list[str] | None = None) -> int:
    """Run the burst and print its figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=200)
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--store", choices=("sqlite", "firestore"), default="sqlite")
    options = parser.parse_args(argv)
    emulator = None
    if options.store == "firestore":
        import os

        from inboxflow.adapters.firestore_store import FirestoreCheckpointStore
        from inboxflow.dev import emulators

        emulator = emulators.start_firestore()
        os.environ.update(emulator.env)
        store: CheckpointStore = FirestoreCheckpointStore(project=f"burst-{uuid.uuid4().hex[:8]}")
    else:
        from inboxflow.adapters.sqlite_store import SqliteCheckpointStore

        store = SqliteCheckpointStore(Path(tempfile.mkdtemp()) / "burst.db")
    try:
        figures = run_burst(store, options.messages, options.workers)
    finally:
        store.close()
        if emulator is not None:
            emulator.stop()
    print(
        f"store {options.store}, {options.workers} workers: "
        + ", ".join(f"{key} {value}" for key, value in figures.items())
    )
    return 0 if figures["missing"] == figures["extra"] == figures["started_twice"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
