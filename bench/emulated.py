"""N emails through the emulated production topology (not a test).

Starts the Firestore and Pub/Sub emulators, one functions-framework process
per pipeline node behind push subscriptions (``inboxflow dev``'s topology,
``DevCloud``), with the node functions instrumented by
``bench/emulated_functions.py``; then a chain of as many trivial
republishing functions (the floor). Prints, for both, p50/p90 per hop
(envelope published -> pushed -> lease -> node -> commit -> next published)
and per email, and for the pipeline the Firestore operations per hop and per
email, counted at the RPC layer of each function's Firestore client.

    .venv/bin/python bench/emulated.py [--emails 10] [--transactional] [--json out.json]

``--transactional`` runs the step protocol as the port does (lease and commit
transactions): the figures before the Firestore adapter's conditional writes.
``--json`` writes the measured operations per email for ``bench/cost.py``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
import uuid
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from firestore_ops import KINDS, count_operations
from inboxflow.dev import emulators
from inboxflow.dev.devcloud import DevCloud, start_function
from inboxflow.graphs import get_graph
from inboxflow.naming import topic_name
from inboxflow.services import build_runtime
from inboxflow.settings import Settings
from inboxflow.workspace import seed_workspace
from runtime import make_emails

HERE = Path(__file__).resolve().parent
FLOOR_GRAPH = "floor"


def _records(folder: Path) -> list[dict[str, Any]]:
    rows = []
    for path in folder.glob("*.jsonl"):
        rows.extend(json.loads(line) for line in path.read_text().splitlines() if line)
    return rows


def _pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _line(name: str, values: list[float]) -> str:
    return (
        f"  {name:28} p50 {statistics.median(values):8.1f} ms   p90 {_pct(values, 0.9):8.1f} ms"
        f"   (n={len(values)})"
    )


def stored(client: Any) -> tuple[int, int]:
    """Documents of the project and their bytes: JSON size of the fields plus the path (an
    approximation of Firestore's own size formula; index entries not included)."""

    def walk(collections: Any) -> tuple[int, int]:
        docs = size = 0
        for collection in collections:
            for ref in collection.list_documents():
                snapshot = ref.get()
                if snapshot.exists:
                    docs += 1
                    size += len(ref.path) + 32
                    size += len(json.dumps(snapshot.to_dict(), default=str).encode())
                more = walk(ref.collections())
                docs, size = docs + more[0], size + more[1]
        return docs, size

    return walk(client.collections())


def run_pipeline(args: argparse.Namespace, env: dict[str, str], records: Path) -> dict[str, Any]:
    """N emails through the pipeline's functions; the records and operations they produced."""
    os.environ.update(env)
    with DevCloud(env["GOOGLE_CLOUD_PROJECT"], dict(env)) as cloud:
        cloud.start([get_graph(args.graph)])
        runtime = build_runtime(Settings.from_env())
        seed_workspace(runtime.store, runtime.clock.now())
        stored_before = stored(runtime.store.client)  # type: ignore[attr-defined]
        counter = count_operations(runtime.store)  # type: ignore[arg-type]
        emails = make_emails(args.emails, args.body_bytes)
        started = time.time()
        traces = [runtime.start(args.graph, {"email": email}) for email in emails]
        start_ops = counter.snapshot()
        deadline = time.monotonic() + args.timeout
        while time.monotonic() < deadline:
            checkpoints = [runtime.store.get_trace(t) for t in traces]
            if all(cp is not None and cp.status != "running" for cp in checkpoints):
                break
            time.sleep(0.5)
        else:
            raise SystemExit(f"traces still running after {args.timeout}s")
        elapsed = time.time() - started
        time.sleep(1.0)  # the last handlers' records
        stored_after = stored(runtime.store.client)  # type: ignore[attr-defined]
        runtime.bus.close()
    hops = [r for r in _records(records) if r["kind"] == "node"]
    return {
        "checkpoints": [cp.model_dump() for cp in checkpoints if cp is not None],
        "hops": hops,
        "start_ops": start_ops,
        "elapsed_s": elapsed,
        "stored_docs": stored_after[0] - stored_before[0],
        "stored_bytes": stored_after[1] - stored_before[1],
    }


def run_floor(args: argparse.Namespace, env: dict[str, str], records: Path, hops: int) -> list:
    """N messages through ``hops`` trivial republishing functions."""
    from google.cloud import pubsub_v1  # type: ignore[attr-defined]

    from inboxflow.adapters.pubsub_bus import PubSubAdmin

    os.environ.update(env)
    project = env["GOOGLE_CLOUD_PROJECT"]
    pairs = [(FLOOR_GRAPH, f"hop{i}") for i in range(1, hops + 1)]
    servers = [start_function(f"{g}.{n}", env, target="floor_hop") for g, n in pairs]
    try:
        admin = PubSubAdmin(project)
        try:
            admin.ensure_topics(
                pairs,
                {s.node_id: s.url for s in servers},
                minimum_backoff_s=1.0,
                maximum_backoff_s=10.0,
            )
        finally:
            admin.close()
        publisher = pubsub_v1.PublisherClient()
        topic = f"projects/{project}/topics/{topic_name(FLOOR_GRAPH, 'hop1')}"
        for index in range(args.emails):
            now = time.time()
            data = {"id": index, "hop": 1, "hops": hops, "sent_at": now, "first_sent_at": now}
            publisher.publish(topic, json.dumps(data).encode()).result()
        deadline = time.monotonic() + args.timeout
        while time.monotonic() < deadline:
            done = [r for r in _records(records) if r["kind"] == "floor" and r["last"]]
            if len({r["id"] for r in done}) >= args.emails:
                break
            time.sleep(0.5)
        else:
            raise SystemExit(f"floor messages still moving after {args.timeout}s")
    finally:
        for server in servers:
            server.stop()
    return [r for r in _records(records) if r["kind"] == "floor"]


def report(pipeline: dict[str, Any], floor: list[dict[str, Any]], args: argparse.Namespace) -> dict:
    hops = pipeline["hops"]
    ran = [h for h in hops if h["outcome"] == "ran"]
    emails = len(pipeline["checkpoints"])
    print(
        f"{emails} emails through {args.graph} ({len(ran)} hops ran, "
        f"{len(hops) - len(ran)} other deliveries: "
        f"{dict(Counter(h['outcome'] for h in hops if h['outcome'] != 'ran'))}); "
        f"store protocol: {'transactions' if args.transactional else 'conditional writes'}"
    )
    print("per hop (ms from the envelope's publication):")
    print(_line("pipeline hop", [h["hop_ms"] for h in ran]))
    for part in ("push_ms", "lease_ms", "commit_ms", "publish_ms", "handler_ms"):
        print(_line(f"  {part.removesuffix('_ms')}", [h.get(part, 0.0) for h in ran]))
    node_ms = [
        h["handler_ms"] - h.get("lease_ms", 0) - h.get("commit_ms", 0) - h.get("publish_ms", 0)
        for h in ran
    ]
    print(_line("  node (+ runtime)", node_ms))
    floor_hops = [r["hop_ms"] for r in floor]
    print(_line("floor hop", floor_hops))
    print(_line("  push", [r["push_ms"] for r in floor]))
    ratio = statistics.median([h["hop_ms"] for h in ran]) / statistics.median(floor_hops)
    print(f"  pipeline / floor p50 per hop: {ratio:.2f}x")
    per_email = [(cp["updated_at"] - cp["created_at"]) * 1000 for cp in pipeline["checkpoints"]]
    print("per email:")
    print(_line("pipeline email", per_email))
    floor_emails = [(r["done_at"] - r["first_sent_at"]) * 1000 for r in floor if r["last"]]
    print(_line("floor email", floor_emails))

    print("Firestore operations per hop that ran (median / mean), counted at the RPC layer:")
    by_node: dict[str, list[dict[str, int]]] = defaultdict(list)
    for h in ran:
        by_node[h["node"]].append(h["ops"])
    print(f"  {'node':16}" + "".join(f"{k:>14}" for k in KINDS))
    for node, ops in [*by_node.items(), ("(every hop)", [h["ops"] for h in ran])]:
        cells = "".join(
            f"{statistics.median(o[k] for o in ops):>7.0f} / {statistics.mean(o[k] for o in ops):4.1f}"
            for k in KINDS
        )
        print(f"  {node:16}{cells}")
    total = Counter()
    for h in hops:
        total.update(h["ops"])
    total.update(pipeline["start_ops"])
    per_email_ops = {k: total[k] / emails for k in KINDS}
    print(
        "per email (every delivery + the start): "
        + ", ".join(f"{k} {v:.1f}" for k, v in per_email_ops.items())
    )
    print(
        f"stored per email: {pipeline['stored_docs'] / emails:.1f} documents, "
        f"{pipeline['stored_bytes'] / emails / 1024:.1f} KB (JSON size)"
    )
    published = sum(h.get("published", 0) for h in hops) + emails
    published_bytes = sum(h.get("published_bytes", 0) for h in hops)
    return {
        "graph": args.graph,
        "emails": emails,
        "transactional": args.transactional,
        "firestore_per_email": per_email_ops,
        "hops_per_email": len(ran) / emails,
        "deliveries_per_email": len(hops) / emails,
        "messages_per_email": published / emails,
        "message_bytes_mean": published_bytes / max(1, published - emails),
        "handler_ms_p50": statistics.median(h["handler_ms"] for h in ran),
        "hop_ms_p50": statistics.median(h["hop_ms"] for h in ran),
        "floor_hop_ms_p50": statistics.median(floor_hops),
        "stored_bytes_per_email": pipeline["stored_bytes"] / emails,
        "stored_docs_per_email": pipeline["stored_docs"] / emails,
        "node_handler_ms_p50": {
            node: statistics.median(h["handler_ms"] for h in ran if h["node"] == node)
            for node in by_node
        },
        "node_hops_per_email": {
            node: sum(1 for h in hops if h["node"] == node) / emails for node in by_node
        },
    }


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--emails", type=int, default=10)
    parser.add_argument("--graph", default="pipeline")
    parser.add_argument("--body-bytes", type=int, default=2048)
    parser.add_argument("--timeout", type=float, default=300)
    parser.add_argument("--transactional", action="store_true")
    parser.add_argument("--json", type=Path, help="write the measured figures here")
    args = parser.parse_args()

    firestore = emulators.start_firestore()
    pubsub = emulators.start_pubsub()
    try:
        with tempfile.TemporaryDirectory() as folder:
            records = Path(folder)
            env = {
                "GOOGLE_CLOUD_PROJECT": f"bench-{uuid.uuid4().hex[:10]}",
                "INBOXFLOW_STORE": "firestore",
                "INBOXFLOW_BUS": "pubsub",
                "INBOXFLOW_HOME": folder,
                "INBOXFLOW_FUNCTIONS_SOURCE": str(HERE / "emulated_functions.py"),
                "INBOXFLOW_BENCH_RECORDS": folder,
                "INBOXFLOW_BENCH_TRANSACTIONAL": "1" if args.transactional else "0",
                "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")]),
                **firestore.env,
                **pubsub.env,
            }
            pipeline = run_pipeline(args, env, records)
            nodes = len(get_graph(args.graph).nodes)
            floor = run_floor(args, env, records, hops=nodes)
            figures = report(pipeline, floor, args)
    finally:
        pubsub.stop()
        firestore.stop()
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n")
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
