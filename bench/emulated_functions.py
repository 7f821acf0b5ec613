"""Entry points ``bench/emulated.py`` serves with functions-framework (not a test, not deployed).

- ``run_node``: ``functions/main.py``'s node function, instrumented: every
  delivery appends one JSON line (node, outcome, milliseconds from the
  envelope's publication to the end of the handler and their split, Firestore
  operations counted at the RPC layer, bytes published) to
  ``$INBOXFLOW_BENCH_RECORDS/<pid>.jsonl``.
- ``floor_hop``: the floor, a trivial function that republishes what it
  receives to the next hop's topic, recording the same way.

With ``INBOXFLOW_BENCH_TRANSACTIONAL=1`` the store runs the step protocol as
the port does (a lease transaction and a commit transaction): the figures
before the Firestore adapter's conditional writes.
"""

from __future__ import annotations

import base64
import json
import os
import sys
import threading
import time
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import functions_framework
from cloudevents.http import CloudEvent

sys.path.insert(0, str(Path(__file__).resolve().parent))

from firestore_ops import OperationCounter, count_operations
from inboxflow import entry
from inboxflow.envelope import decode_pubsub_message
from inboxflow.naming import topic_name
from inboxflow.ports.checkpoint import CheckpointStore

FLOOR_GRAPH = "floor"
_state: dict[str, Any] = {}
_lock = threading.Lock()


def _record(record: dict[str, Any]) -> None:
    folder = Path(os.environ["INBOXFLOW_BENCH_RECORDS"])
    with (folder / f"{os.getpid()}.jsonl").open("a") as out:
        out.write(json.dumps(record) + "\n")


_split: dict[int, dict[str, float]] = {}
"""Per thread (a function serves concurrent requests in threads): milliseconds by part,
envelopes and bytes published."""


def _add(name: str, amount: float) -> None:
    split = _split.setdefault(threading.get_ident(), {})
    split[name] = split.get(name, 0.0) + amount


def _timed(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    def timed(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            _add(name, (time.perf_counter() - started) * 1000)

    return timed


def _instrumented() -> OperationCounter:
    with _lock:  # concurrent first requests must instrument once
        if "counter" not in _state:
            _instrument()
    return _state["counter"]  # type: ignore[no-any-return]


def _instrument() -> None:
    rt = entry.runtime()
    store = rt.store
    if os.environ.get("INBOXFLOW_BENCH_TRANSACTIONAL") == "1":
        for name in ("take_lease", "commit_step", "release_lease"):
            setattr(store, name, types.MethodType(getattr(CheckpointStore, name), store))
    publish = rt.bus.publish

    def counted_publish(envelopes: Any) -> None:
        _add("published", len(envelopes))
        _add("published_bytes", sum(len(e.model_dump_json(exclude_none=True)) for e in envelopes))
        publish(envelopes)

    store.take_lease = _timed("lease_ms", store.take_lease)
    store.commit_step = _timed("commit_ms", store.commit_step)
    rt.bus.publish = _timed("publish_ms", counted_publish)
    _state["counter"] = count_operations(store)


@functions_framework.cloud_event
def run_node(cloud_event: CloudEvent) -> None:
    """``functions/main.py``'s ``run_node``, recording one line per delivery."""
    arrived = time.time()
    counter = _instrumented()
    message = cloud_event.data.get("message", cloud_event.data)
    envelope = decode_pubsub_message(message)
    before = counter.snapshot()
    _split[threading.get_ident()] = {}
    started = time.perf_counter()
    outcome = "error"
    try:
        outcome = entry.handle_cloud_event(cloud_event.data)
    finally:
        handler_ms = (time.perf_counter() - started) * 1000
        parts = _split.pop(threading.get_ident(), {})
        _record(
            {
                "kind": "node",
                "graph": envelope.graph,
                "node": envelope.node,
                "trace_id": envelope.trace_id,
                "step": envelope.step,
                "outcome": outcome,
                "push_ms": (arrived - envelope.sent_at) * 1000,
                "hop_ms": (time.time() - envelope.sent_at) * 1000,
                "handler_ms": handler_ms,
                **parts,
                "ops": counter.since(before),
            }
        )


@functions_framework.cloud_event
def floor_hop(cloud_event: CloudEvent) -> None:
    """Republish the message to the next hop's topic (the floor: no store, no runtime)."""
    arrived = time.time()
    message = cloud_event.data["message"]
    payload = json.loads(base64.b64decode(message["data"]))
    hop, hops = int(payload["hop"]), int(payload["hops"])
    if "publisher" not in _state:
        from google.cloud import pubsub_v1  # type: ignore[attr-defined]

        _state["publisher"] = pubsub_v1.PublisherClient()
    started = time.perf_counter()
    if hop < hops:
        project = os.environ["GOOGLE_CLOUD_PROJECT"]
        topic = f"projects/{project}/topics/{topic_name(FLOOR_GRAPH, f'hop{hop + 1}')}"
        data = {**payload, "hop": hop + 1, "sent_at": time.time()}
        _state["publisher"].publish(topic, json.dumps(data).encode()).result()
    _record(
        {
            "kind": "floor",
            "id": payload["id"],
            "hop": hop,
            "last": hop == hops,
            "push_ms": (arrived - payload["sent_at"]) * 1000,
            "hop_ms": (time.time() - payload["sent_at"]) * 1000,
            "handler_ms": (time.perf_counter() - started) * 1000,
            "first_sent_at": payload["first_sent_at"],
            "done_at": time.time(),
        }
    )
