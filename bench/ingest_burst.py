"""A burst of mail into one mailbox: one trace each, and Gmail calls per message (not a test).

N messages are delivered to the Gmail double (served over HTTP, reached through
googleapiclient) while W workers ingest: every watch notification is queued
twice (Pub/Sub delivers at least once), in the order the workers take them. A
run that ends retryable (another delivery is listing, or holds a message) has
its notification queued again after a short wait, as Pub/Sub would redeliver
it. The traces are started, not run (this measures ingestion).

    .venv/bin/python bench/ingest_burst.py [--messages 100,300,1000] [--workers 8]
        [--store sqlite|firestore] [--rate 200] [--delivered-first]

``--store firestore`` starts the Firestore emulator (gcloud SDK needed);
mail arrives ``--rate`` messages a second; ``--delivered-first`` delivers the
whole burst before ingesting starts.
Prints, per burst size: traces, missing, extra, started twice, the Gmail API
calls the double served during ingestion (by method), calls and quota units per
message (units from Google's Gmail API quota table), notifications listed /
deferred / stale, redeliveries, the history records the listings returned
per message (a message listed by two runs counts twice) and seconds; then whether units per message are
flat from the smallest burst to the largest.
"""

from __future__ import annotations

import argparse
import os
import queue
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
from inboxflow.errors import RetryableError
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
REDELIVERY_WAIT_S = 0.05
FLAT = 1.2
"""Units per message of the largest burst may be at most this times the smallest's."""

QUOTA_UNITS = {
    "gmail.users.history.list": 2,
    "gmail.users.messages.get": 5,
    "gmail.users.messages.list": 5,
    "gmail.users.getProfile": 1,
    "gmail.users.watch": 100,
}
"""Quota units per call (https://developers.google.com/gmail/api/reference/quota)."""


def message(n: int) -> bytes:
    """A plain customer question, different for each ``n``."""
    return (
        f"From: Customer {n} <customer{n}@example.com>\r\nTo: {MAILBOX}\r\n"
        f"Subject: Burst question {n}\r\nMessage-ID: <burst-{n}@example.com>\r\n"
        "Date: Thu, 14 Jan 2027 09:12:31 +0000\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n"
        f"Hello, how much are {n} seats on the team plan?\r\n"
    ).encode()


def run_burst(
    store: CheckpointStore,
    messages: int = 200,
    workers: int = 8,
    delivered_first: bool = False,
    rate: float = 200.0,
) -> dict[str, Any]:
    """Deliver ``messages`` (``rate`` a second) and ingest their notifications with ``workers`` threads.

    Returns:
        ``{messages, notifications, traces, started, started_twice, missing, extra,
        duplicates, listed, listings, deferred, stale, redeliveries, records_listed,
        records_per_message, calls, history_list, calls_per_message,
        units_per_message, seconds}``; ``calls`` counts the Gmail requests served
        during ingestion by method, ``records_listed`` the messages the history
        listings returned (the same message counts once per listing that met it).
    """
    clock = SystemClock()
    bus = InProcessBus(clock=clock)
    settings = Settings(
        home=Path(tempfile.gettempdir()),
        project="bench",
        store="sqlite",
        bus="inprocess",
        tasks="sqlite",
        environ=dict(os.environ),
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
        reader = GoogleApiGmailReader(api_url=double.url, environ=os.environ)
        ingestor = Ingestor(runtime, reader, IngestOptions(backoff_base_s=0.05))
        MailboxRegistry(store).add(MAILBOX, clock.now())
        renew_watches(store, reader, clock, topic=TOPIC)

        def notified(address: str, history_id: int) -> None:
            item = GmailNotification(address, history_id).to_pubsub_message()
            deliveries.put(item)
            deliveries.put(item)  # at least once: every notification twice

        double.on_notify(notified)
        gmail_ids: list[str] = []
        before = double.call_counts()

        def work() -> None:
            while (item := deliveries.get()) is not None:
                redeliver = True
                try:
                    report = ingestor.handle_message(item)
                    redeliver = False
                except IngestIncomplete as exc:
                    report = exc.report  # what it did before giving up counts too
                except RetryableError:
                    report = None
                finally:
                    if redeliver:
                        time.sleep(REDELIVERY_WAIT_S)  # Pub/Sub backs off before redelivering
                        deliveries.put(item)
                    deliveries.task_done()
                with lock:
                    counts["redeliveries"] += redeliver
                    if report is None:
                        continue
                    started.extend(report.started)
                    counts["duplicates"] += report.duplicates
                    counts["records"] += report.listed
                    counts[report.outcome if not redeliver else "incomplete"] += 1
                    counts["listings"] += report.rounds if report.outcome == "ingested" else 0

        began = time.perf_counter()
        if delivered_first:
            gmail_ids = [double.deliver(MAILBOX, message(n)) for n in range(messages)]
        threads = [threading.Thread(target=work) for _ in range(workers)]
        for thread in threads:
            thread.start()
        if not delivered_first:
            for n in range(messages):
                gmail_ids.append(double.deliver(MAILBOX, message(n)))
                time.sleep(1 / rate)
        deliveries.join()
        for _ in threads:
            deliveries.put(None)
        for thread in threads:
            thread.join()
        seconds = time.perf_counter() - began
        calls = double.call_counts() - before
    expected = {message_trace_id(MAILBOX, g) for g in gmail_ids}
    traces = {trace_id for trace_id, _ in store.list("traces")}
    units = sum(QUOTA_UNITS.get(method, 0) * n for method, n in calls.items())
    unknown = sorted(set(calls) - set(QUOTA_UNITS))
    if unknown:
        raise RuntimeError(f"no quota units known for {unknown}: add them to QUOTA_UNITS")
    return {
        "messages": messages,
        "notifications": 2 * messages,
        "traces": len(traces),
        "started": len(started),
        "started_twice": len(started) - len(set(started)),
        "missing": len(expected - traces),
        "extra": len(traces - expected),
        "duplicates": counts["duplicates"],
        "listed": counts["ingested"],
        "incomplete": counts["incomplete"],
        "listings": counts["listings"],
        "deferred": counts["deferred"],
        "stale": counts["stale"],
        "redeliveries": counts["redeliveries"],
        "records_listed": counts["records"],
        "records_per_message": round(counts["records"] / messages, 3),
        "calls": dict(sorted((m.removeprefix("gmail.users."), n) for m, n in calls.items())),
        "history_list": calls["gmail.users.history.list"],
        "calls_per_message": round(sum(calls.values()) / messages, 3),
        "units_per_message": round(units / messages, 3),
        "seconds": round(seconds, 2),
    }


def main(argv: list[str] | None = None) -> int:
    """Run a burst of each size and print its figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", default="100,300,1000", help="burst sizes, comma-separated")
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--store", choices=("sqlite", "firestore"), default="sqlite")
    parser.add_argument("--delivered-first", action="store_true")
    parser.add_argument("--rate", type=float, default=200.0, help="messages delivered a second")
    options = parser.parse_args(argv)
    sizes = [int(size) for size in options.messages.split(",")]
    emulator = None
    if options.store == "firestore":
        import os

        from inboxflow.dev import emulators

        emulator = emulators.start_firestore()
        os.environ.update(emulator.env)
    ok = True
    per_message: list[float] = []
    try:
        for size in sizes:
            store = open_store(options.store)
            try:
                figures = run_burst(
                    store, size, options.workers, options.delivered_first, options.rate
                )
            finally:
                store.close()
            per_message.append(figures["units_per_message"])
            ok &= figures["missing"] == figures["extra"] == figures["started_twice"] == 0
            print(
                f"store {options.store}, {options.workers} workers: "
                + ", ".join(f"{key} {value}" for key, value in figures.items()),
                flush=True,
            )
    finally:
        if emulator is not None:
            emulator.stop()
    flat = max(per_message) <= FLAT * min(per_message)
    print(
        f"quota units per message from {sizes[0]} to {sizes[-1]} messages: "
        + " -> ".join(f"{units:g}" for units in per_message)
        + (" (flat)" if flat else f" (NOT flat: more than {FLAT}x)")
    )
    return 0 if ok and flat else 1


def open_store(kind: str) -> CheckpointStore:
    """A fresh store of ``kind`` for one burst."""
    if kind == "firestore":
        from inboxflow.adapters.firestore_store import FirestoreCheckpointStore

        return FirestoreCheckpointStore.from_env(
            os.environ, project=f"burst-{uuid.uuid4().hex[:8]}"
        )
    from inboxflow.adapters.sqlite_store import SqliteCheckpointStore

    return SqliteCheckpointStore(Path(tempfile.mkdtemp()) / "burst.db")


if __name__ == "__main__":
    sys.exit(main())
