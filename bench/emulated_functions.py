"""Entry points ``bench/emulated.py`` serves with functions-framework (not a test, not deployed).

- ``run_node``: ``functions/main.py``'s node function, instrumented: every
  delivery appends one JSON line (node, outcome, milliseconds from the
  envelope's publication to the end of the handler and their split, Firestore
  operations counted at the RPC layer, bytes published) to
  ``$INBOXFLOW_BENCH_RECORDS/<pid>.jsonl``.
- ``floor_hop``: the floor, a trivial function that republishes what it
  receives to the next hop's topic, recording the same way; with
  ``"keyed": true`` in the message it publishes with an ordering key (the
  trace's id), as the contract has every envelope published.

Each record carries wall-clock times (``arrived_at``: the handler began;
``publish_started_at`` / ``published_at``: this hop's publish call began and
returned; ``ended_at``) and the ``(trace, step)`` of what it published, so
``bench/emulated.py`` can join a hop with the publish that brought it.

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


_split: dict[int, dict[str, Any]] = {}
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


def message_bytes(envelope: Any) -> int:
    """An envelope's data volume as Pub/Sub bills it: body, attributes' keys and values,
    20 bytes of timestamp, the message id (about 16 bytes)."""
    attributes = envelope.attributes()
    return len(envelope.to_bytes()) + sum(len(k) + len(v) for k, v in attributes.items()) + 36


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
        if not envelopes:
            return publish(envelopes)
        _add("published", len(envelopes))
        _add("published_bytes", sum(message_bytes(e) for e in envelopes))
        split = _split.setdefault(threading.get_ident(), {})
        split.setdefault("publish_started_at", time.time())  # type: ignore[arg-type]
        publish(envelopes)
        split["published_at"] = time.time()
        split.setdefault("published_steps", [])  # type: ignore[arg-type]
        split["published_steps"] += [[e.trace_id, e.step] for e in envelopes]  # type: ignore[operator]

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
                "arrived_at": arrived,
                "ended_at": time.time(),
                "handler_ms": handler_ms,
                **parts,
                "ops": counter.since(before),
            }
        )


def _floor_publisher(keyed: bool) -> Any:
    """The floor's publisher: a default client, with message ordering when ``keyed``."""
    name = "keyed_publisher" if keyed else "publisher"
    with _lock:
        if name not in _state:
            from google.cloud import pubsub_v1  # type: ignore[attr-defined]

            options = pubsub_v1.types.PublisherOptions(enable_message_ordering=keyed)
            _state[name] = pubsub_v1.PublisherClient(publisher_options=options)
    return _state[name]


@functions_framework.cloud_event
def floor_hop(cloud_event: CloudEvent) -> None:
    """Republish the message to the next hop's topic (the floor: no store, no runtime)."""
    arrived = time.time()
    message = cloud_event.data["message"]
    payload = json.loads(base64.b64decode(message["data"]))
    hop, hops, keyed = int(payload["hop"]), int(payload["hops"]), bool(payload.get("keyed"))
    publisher = _floor_publisher(keyed)
    started = time.perf_counter()
    publish_started_at = published_at = None
    if hop < hops:
        project = os.environ["GOOGLE_CLOUD_PROJECT"]
        topic = f"projects/{project}/topics/{topic_name(FLOOR_GRAPH, f'hop{hop + 1}')}"
        data = json.dumps({**payload, "hop": hop + 1}).encode()
        publish_started_at = time.time()
        if keyed:
            publisher.publish(topic, data, ordering_key=str(payload["id"])).result()
        else:
            publisher.publish(topic, data).result()
        published_at = time.time()
    _record(
        {
            "kind": "floor",
            "id": payload["id"],
            "keyed": keyed,
            "hop": hop,
            "last": hop == hops,
            "arrived_at": arrived,
            "publish_started_at": publish_started_at,
            "published_at": published_at,
            "handler_ms": (time.perf_counter() - started) * 1000,
            "ended_at": time.time(),
        }
    )
