"""The reviewer's inbox at scale: the first page and the list API over 2,000 pending approvals
across 20 reviewers (not a test).

Seeds ``--approvals`` pending approvals (default 2,000) of the built-in graphs' reviewer
pause kinds, spread over ``--reviewers`` reviewers (default 20: 100 each, a tenth of them
shared with a second reviewer, a tenth escalated), then signs each reviewer in through
the real sign-in (``POST /inbox/sign-in``) and times, through the approval function's
own handler (``approvals.app.handle_http`` in a Flask test client, as ``inboxflow
serve`` serves it):

- ``GET /inbox``: the first page (50 items) rendered as HTML;
- ``GET /api/inbox``: the same list as JSON;

``--rounds`` times per reviewer (median, p95, max). It also counts what one request
reads (the first round of each reviewer): on the embedded default ``reads`` are the
documents the store returns to ``get`` and ``list``, ``queries``/``aggregations`` the
``list``/``count`` calls (a ``count`` that lists internally shows up in ``reads``); on
the Firestore emulator ``reads`` are the documents read at the RPC layer
(``bench/firestore_ops.py``) and ``aggregation_reads`` what the ``count`` queries are
billed (one read per 1,000 index entries counted, at least one each).

    .venv/bin/python bench/inbox.py                 # embedded default (SQLite)
    .venv/bin/python bench/inbox.py --firestore     # and the Firestore emulator
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from inboxflow.adapters.notifiers import OutboxNotifier
from inboxflow.approvals.app import handle_http
from inboxflow.approvals.service import ApprovalService
from inboxflow.approvals.settings import ApprovalConfig
from inboxflow.clock import SystemClock
from inboxflow.engine.waits import Approval, approval_path
from inboxflow.graphs import graph_registry
from inboxflow.lazy import Lazy
from inboxflow.ports.documents import DocumentStore
from inboxflow.ports.tasks import TaskQueue

BASE_URL = "http://127.0.0.1:8088"
PAGE_ITEMS = 50


def reviewer_kinds() -> list[tuple[str, str]]:
    """``(graph, kind)`` of every pause kind a reviewer decides, in the built-in graphs."""
    return sorted(
        (graph.name, kind.name)
        for graph in graph_registry().values()
        for kind in graph.pause_kinds.values()
        if kind.waits_for == "reviewer"
    )


def seed(store: DocumentStore, approvals: int, reviewers: list[str], rng: random.Random) -> None:
    """``approvals`` pending approvals, round-robin over ``reviewers`` and the reviewer kinds."""
    kinds = reviewer_kinds()
    now = time.time()
    for n in range(approvals):
        owner = reviewers[n % len(reviewers)]
        graph, kind = kinds[(n // len(reviewers)) % len(kinds)]  # each reviewer gets every kind
        other = reviewers[(n + 7) % len(reviewers)]
        deadline = now + rng.uniform(-3600, 3 * 86400)  # some overdue
        approval = Approval(
            approval_id=f"bench{n:05d}-4",
            trace_id=f"bench{n:05d}",
            graph=graph,
            step=4,
            resume_node="review",
            kind=kind,
            payload={"draft": f"Thanks for your note {n}; we are looking into it."},
            payload_hash="0" * 64,
            reviewers=[owner, other] if n % 10 == 0 else [owner],
            escalate_to=[other] if n % 10 == 5 else [],
            context={
                "sender": f"Customer {n} <customer{n}@example.com>",
                "subject": f"Question {n} about my account",
                "mailbox": f"desk{n % 3}@brightlane.io",
            },
            deadline=deadline,
            window_s=86400,
            created_at=now - rng.uniform(0, 86400),
            expire_at=now + 30 * 86400,
        )
        store.set(approval_path(approval.approval_id), approval.model_dump())


class StoreReads:
    """Counts what the embedded store returns: documents of ``get`` and ``list``, ``count``
    queries (per thread, like ``firestore_ops.OperationCounter``)."""

    def __init__(self, store: Any) -> None:
        self._counts: dict[int, Counter[str]] = {}
        self._lock = threading.Lock()
        for name in ("get", "list", "count"):
            setattr(store, name, self._counted(name, getattr(store, name)))

    def _add(self, **kinds: int) -> None:
        with self._lock:
            self._counts.setdefault(threading.get_ident(), Counter()).update(kinds)

    def _counted(self, name: str, method: Callable[..., Any]) -> Callable[..., Any]:
        def counted(*args: Any, **kwargs: Any) -> Any:
            result = method(*args, **kwargs)
            if name == "get":
                self._add(reads=1)
            elif name == "list":
                self._add(reads=max(1, len(result)), queries=1)
            else:
                self._add(aggregations=1)
            return result

        return counted

    def snapshot(self) -> dict[str, int]:
        with self._lock:
            return dict(self._counts.get(threading.get_ident(), Counter()))


class FirestoreReads:
    """Firestore's billed reads of this thread's requests: documents (``firestore_ops``) and
    aggregation queries (one read per 1,000 index entries counted, at least one)."""

    def __init__(self, store: Any) -> None:
        from firestore_ops import count_operations

        self.operations = count_operations(store)
        self._aggregations: dict[int, Counter[str]] = {}
        self._lock = threading.Lock()
        api = store.client._firestore_api
        original = api.run_aggregation_query

        def counted(*args: Any, **kwargs: Any) -> Any:
            responses = list(original(*args, **kwargs))
            total = 0
            for response in responses:
                for value in response.result.aggregate_fields.values():
                    total += int(value.integer_value)
            with self._lock:
                self._aggregations.setdefault(threading.get_ident(), Counter()).update(
                    aggregations=1, aggregation_reads=max(1, -(-total // 1000))
                )
            return iter(responses)

        api.run_aggregation_query = counted

    def snapshot(self) -> dict[str, int]:
        counts = self.operations.snapshot()
        with self._lock:
            counts.update(self._aggregations.get(threading.get_ident(), Counter()))
        return counts


def _since(after: dict[str, int], before: dict[str, int]) -> dict[str, int]:
    return {k: after.get(k, 0) - before.get(k, 0) for k in set(after) | set(before)}


def _no_tasks() -> TaskQueue:
    raise RuntimeError("the inbox bench schedules no deadline")


def measure(
    label: str, store: Any, reads: Any, reviewers: list[str], rounds: int
) -> dict[str, Any]:
    """Sign each reviewer in, then time their first page and their list API."""
    from flask import Flask, request

    service = ApprovalService(
        store=store,
        tasks=Lazy(_no_tasks),
        notifier=OutboxNotifier(store),
        resume=lambda trace_id, decision: None,
        clock=SystemClock(),
        config=ApprovalConfig(base_url=BASE_URL),
        graphs=graph_registry(),
    )
    app = Flask("inbox-bench")

    @app.route("/", defaults={"path": ""}, methods=["GET", "POST"])
    @app.route("/<path:path>", methods=["GET", "POST"])
    def serve(path: str) -> Any:
        return handle_http(request, service)

    timings: dict[str, list[float]] = {"page": [], "api": []}
    per_request: dict[str, list[dict[str, int]]] = {"page": [], "api": []}
    items: dict[str, set[int]] = {"page": set(), "api": set()}
    for reviewer in reviewers:
        client = app.test_client()
        link = service.sign_ins.issue(reviewer)
        token = link.split("token=", 1)[1]
        signed = client.post(
            "/inbox/sign-in", base_url=BASE_URL, data={"token": token}, headers=_same_origin()
        )
        assert signed.status_code in (302, 303), (signed.status_code, signed.data[:300])
        for n in range(rounds):
            for what, path in (("page", "/inbox"), ("api", "/api/inbox")):
                before = reads.snapshot()
                started = time.perf_counter()
                response = client.get(path, base_url=BASE_URL)
                body = response.get_data()
                elapsed = time.perf_counter() - started
                assert response.status_code == 200, (what, response.status_code, body[:300])
                timings[what].append(elapsed)
                if n == 0:
                    per_request[what].append(_since(reads.snapshot(), before))
                    items[what].add(_items(what, response))
    return {"label": label, "timings": timings, "reads": per_request, "items": items}


def _same_origin() -> dict[str, str]:
    return {"Sec-Fetch-Site": "same-origin", "Origin": BASE_URL}


def _items(what: str, response: Any) -> int:
    if what == "api":
        data = response.get_json()
        listed = data.get("items") if isinstance(data, dict) else data
        return len(listed or [])
    return response.get_data(as_text=True).count("data-item ")


def report(result: dict[str, Any]) -> None:
    print(f"\n{result['label']}")
    for what, name in (("page", "GET /inbox (first page, HTML)"), ("api", "GET /api/inbox (JSON)")):
        values = sorted(result["timings"][what])
        p95 = values[min(len(values) - 1, round(0.95 * (len(values) - 1)))]
        print(
            f"  {name:32} median {statistics.median(values) * 1000:7.1f} ms   "
            f"p95 {p95 * 1000:7.1f} ms   max {values[-1] * 1000:7.1f} ms   "
            f"({len(values)} requests; items per page: "
            f"{', '.join(str(i) for i in sorted(result['items'][what]))})"
        )
        rows = result["reads"][what]
        kinds = sorted({k for row in rows for k, v in row.items() if v})
        summary = ", ".join(
            f"{kind} {statistics.median(row.get(kind, 0) for row in rows):g}" for kind in kinds
        )
        print(f"  {'':32} per request (median over reviewers): {summary}")


@contextmanager
def firestore_store() -> Iterator[Any]:
    from inboxflow.adapters.firestore_store import FirestoreCheckpointStore
    from inboxflow.dev import emulators

    with emulators.start_firestore() as emulator:
        os.environ.update(emulator.env)
        store = FirestoreCheckpointStore.from_env(
            os.environ, project=f"inbox-bench-{uuid.uuid4().hex[:8]}"
        )
        try:
            yield store
        finally:
            store.close()


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--approvals", type=int, default=2000)
    parser.add_argument("--reviewers", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=5, help="requests per reviewer and route")
    parser.add_argument("--firestore", action="store_true", help="also on the Firestore emulator")
    args = parser.parse_args()
    reviewers = [f"reviewer{i:02d}@brightlane.io" for i in range(args.reviewers)]
    print(
        f"{args.approvals} pending approvals across {len(reviewers)} reviewers, "
        f"{len(reviewer_kinds())} reviewer pause kinds; {args.rounds} rounds per reviewer"
    )
    from inboxflow.adapters.sqlite_store import SqliteCheckpointStore

    with tempfile.TemporaryDirectory() as folder:
        store = SqliteCheckpointStore(Path(folder) / "inboxflow.db")
        started = time.perf_counter()
        seed(store, args.approvals, reviewers, random.Random(31))
        print(f"seeded the embedded store in {time.perf_counter() - started:.1f} s")
        reads = StoreReads(store)
        report(measure("embedded default (SQLite)", store, reads, reviewers, args.rounds))
        store.close()
    if args.firestore:
        with firestore_store() as store:
            started = time.perf_counter()
            seed(store, args.approvals, reviewers, random.Random(31))
            print(f"\nseeded the Firestore emulator in {time.perf_counter() - started:.1f} s")
            reads = FirestoreReads(store)
            report(measure("Firestore emulator", store, reads, reviewers, args.rounds))
    print(f"\nuptime: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
