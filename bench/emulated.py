"""N emails through the emulated production topology (not a test).

Starts the Firestore and Pub/Sub emulators, one functions-framework process
per node of a graph behind push subscriptions (``inboxflow dev``'s topology,
``DevCloud``), with the node functions instrumented by
``bench/emulated_functions.py``, and a chain of as many trivial republishing
functions (the floor). Then alternates rounds on the same processes: N emails
through the graph, N messages through the floor published as the contract
publishes envelopes (ordering key = the trace), and N through the floor
without an ordering key; a first warm-up round is not counted (each
function's first request builds its runtime: cold start is
``bench/cold_start.py``'s).

A hop is measured from the moment the publish that brought it began to the
moment its own publish began (the last hop of a trace: to the handler's end),
split into: publish (the previous hop's publish call), delivery (publish
returned -> handler entered: the emulator's push, HTTP, functions-framework),
lease, node (+ runtime), commit. The floor's hop splits into publish,
delivery and handler. Firestore operations are counted at the RPC layer of
every function's Firestore client and of this process's (the starts, and the
approval decisions that resume paused traces).

    .venv/bin/python bench/emulated.py [--graph pipeline] [--emails 10] [--rounds 3]
        [--concurrency N] [--transactional] [--json out.json]

``--graph`` runs the graph's sample emails (the pipeline: the sample inbox,
bodies padded to ``--body-bytes``), routed as ``inboxflow demo`` routes them;
a trace that pauses for a reviewer is decided by this process (the approval
function's work) with the kind's ``demo_choice`` or else its first choice, and
runs on, up to 5 decisions; a wait for the customer's reply stays waiting.
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
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from firestore_ops import (
    EMBEDDED_RECORDS,
    KINDS,
    OperationCounter,
    count_operations,
    deletes_by_collection,
    exempt_fields,
    index_entries,
    writes_by_collection,
)
from inboxflow.dev import emulators
from inboxflow.dev.devcloud import DevCloud, FunctionServer, start_function
from inboxflow.engine.runtime import Runtime
from inboxflow.graphs import get_graph
from inboxflow.naming import topic_name
from inboxflow.services import build_runtime
from inboxflow.settings import Settings
from inboxflow.workspace import seed_workspace
from runtime import make_emails

HERE = Path(__file__).resolve().parent
FLOOR_GRAPH = "floor"
MAX_DECISIONS = 5
SEGMENTS = ("publish", "delivery", "lease", "node", "commit")
FLOOR_SEGMENTS = ("publish", "delivery", "handler")


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
    if not values:
        return f"  {name:28} (none)"
    return (
        f"  {name:28} p50 {statistics.median(values):8.1f} ms   p90 {_pct(values, 0.9):8.1f} ms"
        f"   (n={len(values)})"
    )


def stored(client: Any) -> dict[str, int]:
    """Documents of the project, their bytes (JSON size of the fields plus the path: an
    approximation of Firestore's own size formula) and their single-field index entries under
    automatic indexing, without and with ``infra/firestore.tf``'s exemptions."""
    totals = dict.fromkeys(
        (
            "docs",
            "bytes",
            "entries",
            "entry_bytes",
            "entries_x",
            "entry_bytes_x",
            "embedded_docs",
            "embedded_bytes",
            "embedded_entry_bytes_x",
        ),
        0,
    )

    by_group: dict[str, list[int]] = {}

    def walk(collections: Any) -> None:
        for collection in collections:
            exempt = exempt_fields(collection.id)
            embedded = collection.id in EMBEDDED_RECORDS
            for ref in collection.list_documents():
                snapshot = ref.get()
                if snapshot.exists:
                    fields = snapshot.to_dict()
                    size = len(ref.path) + 32 + len(json.dumps(fields, default=str))
                    totals["docs"] += 1
                    totals["bytes"] += size
                    count, entry_bytes = index_entries(ref.path, fields)
                    totals["entries"] += count
                    totals["entry_bytes"] += entry_bytes
                    count, entry_bytes = index_entries(ref.path, fields, exempt)
                    totals["entries_x"] += count
                    totals["entry_bytes_x"] += entry_bytes
                    group = by_group.setdefault(collection.id, [0, 0, 0])
                    group[0] += 1
                    group[1] += size
                    group[2] += entry_bytes
                    if embedded:  # the bench's stand-ins (EMBEDDED_RECORDS): not stored deployed
                        totals["embedded_docs"] += 1
                        totals["embedded_bytes"] += size
                        totals["embedded_entry_bytes_x"] += entry_bytes
                walk(ref.collections())

    walk(client.collections())
    totals["by_group"] = by_group  # type: ignore[assignment]
    return totals


# --- what is sent ----------------------------------------------------------------------


def sample_emails(graph: str, count: int, body_bytes: int, tag: str) -> list[tuple[Any, Any]]:
    """``count`` (email, routing decision) pairs for ``graph``: its samples, cycled, each with a
    message id of its own."""
    from inboxflow.config import load_config
    from inboxflow.dev.cli.local import graph_samples
    from inboxflow.graphs import graph_registry
    from inboxflow.mail import Email, load_email_file
    from inboxflow.routing import RouteDecision, route

    registry = graph_registry(os.environ)
    if graph == "pipeline":
        emails = [
            Email.model_validate({**e, "message_id": f"<bench-{tag}-{i}@bench.example>"})
            for i, e in enumerate(make_emails(count, body_bytes))
        ]
        return [(e, RouteDecision("pipeline", None, None, mailbox=e.mailbox)) for e in emails]
    config = load_config(None, graphs=registry, environ=os.environ)
    samples = []
    for path in graph_samples({graph: registry[graph]}):
        email = load_email_file(path)
        decision = route(email, config)
        if decision.graph == graph:
            samples.append((email, decision))
    if not samples:
        raise SystemExit(f"no sample email of graph {graph} routes to it")
    chosen = []
    for index in range(count):
        email, decision = samples[index % len(samples)]
        copy = email.model_copy(update={"message_id": f"<bench-{tag}-{index}@bench.example>"})
        chosen.append((copy, decision))
    return chosen


class Origin:
    """This process's publishes (starts and resumes), recorded like a function's."""

    def __init__(self, runtime: Runtime, records: Path) -> None:
        self.path = records / "origin.jsonl"
        publish = runtime.bus.publish

        def recorded(envelopes: Any) -> None:
            started = time.time()
            publish(envelopes)
            done = time.time()
            with self.path.open("a") as out:
                for e in envelopes:
                    row = {"kind": "origin", "trace_id": e.trace_id, "step": e.step}
                    out.write(json.dumps({**row, "start": started, "end": done}) + "\n")

        runtime.bus.publish = recorded  # type: ignore[method-assign]


def _wait(done: Callable[[], bool], timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while not done():
        if time.monotonic() > deadline:
            raise SystemExit(f"{what} after {timeout_s:.0f}s")
        time.sleep(0.2)


def _stopped(runtime: Runtime, traces: list[str], after: dict[str, int]) -> Callable[[], bool]:
    def done() -> bool:
        for trace_id in traces:
            cp = runtime.store.get_trace(trace_id)
            if cp is None or cp.status == "running" or cp.step <= after.get(trace_id, -1):
                return False
        return True

    return done


def run_graph(
    runtime: Runtime, counter: OperationCounter, emails: list, args: argparse.Namespace
) -> dict[str, Any]:
    """Start ``emails`` (``concurrency`` at a time), run each until it stops, decide pauses."""
    from inboxflow.start import start_email_trace

    traces: list[str] = []
    start_ops = Counter()
    resume_ops = Counter()
    decisions = 0
    started = time.time()
    for first in range(0, len(emails), args.concurrency):
        wave = emails[first : first + args.concurrency]
        before = counter.snapshot()
        ids = [start_email_trace(runtime, email, decision).trace_id for email, decision in wave]
        start_ops.update(counter.since(before))
        traces += ids
        _wait(_stopped(runtime, ids, {}), args.timeout, "traces still running")
        for _ in range(MAX_DECISIONS):
            before = counter.snapshot()
            decided = {t: s for t, s in (_decide(runtime, t) for t in ids) if s is not None}
            resume_ops.update(counter.since(before))
            if not decided:
                break
            decisions += len(decided)
            _wait(_stopped(runtime, list(decided), decided), args.timeout, "resumed traces")
    elapsed = time.time() - started
    checkpoints = [runtime.store.get_trace(t) for t in traces]
    return {
        "traces": traces,
        "checkpoints": [cp.model_dump() for cp in checkpoints if cp is not None],
        "start_ops": dict(start_ops),
        "resume_ops": dict(resume_ops),
        "decisions": decisions,
        "elapsed_s": elapsed,
    }


def _decide(runtime: Runtime, trace_id: str) -> tuple[str, int | None]:
    """Decide the trace's pause, if a reviewer decides it, as its first reviewer: the kind's
    ``demo_choice``, else its first choice; the step it paused at, or None (customer waits
    are left waiting)."""
    service = runtime.ports.approvals
    cp = runtime.store.get_trace(trace_id)
    approval_id = (cp.pause or {}).get("approval_id") if cp is not None else None
    if cp is None or cp.status != "waiting" or not approval_id:
        return trace_id, None
    approval = service.get(str(approval_id))
    kind = service.decisions.kind(approval) if approval else None
    choice = None
    if kind is not None and kind.waits_for == "reviewer":
        choice = kind.demo_choice or kind.choices[0].value
    if approval is None or choice is None or not approval.reviewers:
        return trace_id, None
    service.decisions.decide_as(approval.approval_id, approval.reviewers[0], choice)
    return trace_id, cp.step


def run_floor(
    env: dict[str, str], records: Path, tag: str, emails: int, hops: int, keyed: bool, args: Any
) -> list[str]:
    """``emails`` messages through the ``hops`` floor functions; their ids."""
    from google.cloud import pubsub_v1  # type: ignore[attr-defined]

    options = pubsub_v1.types.PublisherOptions(enable_message_ordering=keyed)
    publisher = pubsub_v1.PublisherClient(publisher_options=options)
    topic = f"projects/{env['GOOGLE_CLOUD_PROJECT']}/topics/{topic_name(FLOOR_GRAPH, 'hop1')}"
    ids = [f"{tag}-{'k' if keyed else 'u'}-{i}" for i in range(emails)]
    try:
        for first in range(0, emails, args.concurrency):
            wave = ids[first : first + args.concurrency]
            rows = []
            for floor_id in wave:
                data = json.dumps({"id": floor_id, "hop": 1, "hops": hops, "keyed": keyed})
                started = time.time()
                kwargs = {"ordering_key": floor_id} if keyed else {}
                publisher.publish(topic, data.encode(), **kwargs).result()
                rows.append(
                    {"kind": "origin", "id": floor_id, "start": started, "end": time.time()}
                )
            with (records / "origin.jsonl").open("a") as out:
                out.writelines(json.dumps(row) + "\n" for row in rows)

            def arrived(wave: list[str] = wave) -> bool:
                done = {r["id"] for r in _records(records) if r["kind"] == "floor" and r["last"]}
                return all(i in done for i in wave)

            _wait(arrived, args.timeout, "floor messages still moving")
    finally:
        publisher.stop()
    return ids


# --- what it measured ------------------------------------------------------------------


def hop_segments(rows: list[dict[str, Any]]) -> tuple[list[dict], list[dict]]:
    """Each hop that ran (the graph's) or arrived (the floor's) with its segments in ms."""
    published: dict[tuple, tuple[float, float]] = {}

    def seen(key: tuple, start: float, end: float) -> None:
        if key not in published or start < published[key][0]:
            published[key] = (start, end)

    for r in rows:
        if r["kind"] == "origin":
            key = (r["trace_id"], r["step"]) if "trace_id" in r else (r["id"], 1)
            seen(key, r["start"], r["end"])
        elif r["kind"] == "node" and r.get("published_steps"):
            for trace_id, step in r["published_steps"]:
                seen((trace_id, step), r["publish_started_at"], r["published_at"])
        elif r["kind"] == "floor" and r.get("publish_started_at"):
            seen((r["id"], r["hop"] + 1), r["publish_started_at"], r["published_at"])
    graph_hops, floor_hops = [], []
    for r in rows:
        if r["kind"] == "node" and r["outcome"] == "ran":
            source = published.get((r["trace_id"], r["step"]))
        elif r["kind"] == "floor":
            source = published.get((r["id"], r["hop"]))
        else:
            continue
        if source is None:
            continue
        end = r.get("publish_started_at") or r["ended_at"]
        hop = {
            **r,
            "hop": (end - source[0]) * 1000,
            "publish": (source[1] - source[0]) * 1000,
            "delivery": (r["arrived_at"] - source[1]) * 1000,
        }
        if r["kind"] == "node":
            hop["lease"] = r.get("lease_ms", 0.0)
            hop["commit"] = r.get("commit_ms", 0.0)
            busy = (end - r["arrived_at"]) * 1000
            hop["node"] = busy - hop["lease"] - hop["commit"]
            graph_hops.append(hop)
        else:
            hop["handler"] = (end - r["arrived_at"]) * 1000
            floor_hops.append(hop)
    return graph_hops, floor_hops


def report(
    rows: list[dict], rounds: list[dict], args: argparse.Namespace, stored_delta: dict[str, int]
) -> dict[str, Any]:
    counted = {t for rnd in rounds for t in rnd["graph"]["traces"]}
    floor_ids = {i for rnd in rounds for i in rnd["floor"] + rnd["keyed"]}
    rows = [r for r in rows if r.get("trace_id", r.get("id")) in counted | floor_ids]
    graph_hops, floor_hops = hop_segments(rows)
    deliveries = [r for r in rows if r["kind"] == "node"]
    ran = [r for r in deliveries if r["outcome"] == "ran"]
    emails = len(counted)
    statuses = Counter(cp["status"] for rnd in rounds for cp in rnd["graph"]["checkpoints"])
    decisions = sum(rnd["graph"]["decisions"] for rnd in rounds)
    print(
        f"{emails} emails through {args.graph} in {len(rounds)} rounds of {args.emails} "
        f"(concurrency {args.concurrency}); {len(ran)} hops ran, "
        f"{len(deliveries) - len(ran)} other deliveries "
        f"{dict(Counter(h['outcome'] for h in deliveries if h['outcome'] != 'ran'))}; "
        f"{decisions} pauses decided; final status {dict(statuses)}; store protocol: "
        f"{'transactions' if args.transactional else 'conditional writes'}"
    )
    floor_u = [h for h in floor_hops if not h["keyed"]]
    floor_k = [h for h in floor_hops if h["keyed"]]
    print("per hop (ms; from the start of the publish that brought it to its own publish):")
    print(_line(f"{args.graph} hop", [h["hop"] for h in graph_hops]))
    for part in SEGMENTS:
        print(_line(f"  {part}", [h[part] for h in graph_hops]))
    for name, hops in (("floor hop, ordering key", floor_k), ("floor hop, no key", floor_u)):
        print(_line(name, [h["hop"] for h in hops]))
        for part in FLOOR_SEGMENTS:
            print(_line(f"  {part}", [h[part] for h in hops]))
    ratios = []
    for rnd in rounds:
        ids = set(rnd["graph"]["traces"])
        ours = [h["hop"] for h in graph_hops if h["trace_id"] in ids]
        keyed = [h["hop"] for h in floor_k if h["id"] in set(rnd["keyed"])]
        plain = [h["hop"] for h in floor_u if h["id"] in set(rnd["floor"])]
        if ours and keyed and plain:
            p50 = statistics.median(ours)
            ratios.append((p50 / statistics.median(keyed), p50 / statistics.median(plain)))
    if ratios:
        print(
            "  p50 per hop / floor's, per round: "
            + ", ".join(f"{k:.2f}x (keyed) {u:.2f}x (no key)" for k, u in ratios)
            + f"; median {statistics.median(r[0] for r in ratios):.2f}x keyed, "
            f"{statistics.median(r[1] for r in ratios):.2f}x no key"
        )
    firsts = {
        r["trace_id"]: r["start"] for r in rows if r["kind"] == "origin" and r.get("step") == 1
    }
    ends: dict[str, float] = defaultdict(float)
    for h in ran:
        ends[h["trace_id"]] = max(ends[h["trace_id"]], h["ended_at"])
    per_email = [(ends[t] - firsts[t]) * 1000 for t in ends if t in firsts]
    print("per email (first publish -> last hop's end, pauses included):")
    print(_line(f"{args.graph} email", per_email))
    floor_firsts = {r["id"]: r["start"] for r in rows if r["kind"] == "origin" and "id" in r}
    for name, hops in (("floor email, keyed", floor_k), ("floor email, no key", floor_u)):
        print(
            _line(name, [(h["ended_at"] - floor_firsts[h["id"]]) * 1000 for h in hops if h["last"]])
        )

    print("Firestore operations per hop that ran (median / mean), counted at the RPC layer:")
    by_node: dict[str, list[dict[str, int]]] = defaultdict(list)
    for h in ran:
        by_node[h["node"]].append(h["ops"])
    print(f"  {'node':18}" + "".join(f"{k:>14}" for k in KINDS))
    for node, ops in [*by_node.items(), ("(every hop)", [h["ops"] for h in ran])]:
        cells = "".join(
            f"{statistics.median(o[k] for o in ops):>7.0f} / {statistics.mean(o[k] for o in ops):4.1f}"
            for k in KINDS
        )
        print(f"  {node:18}{cells}")
    total: Counter[str] = Counter()
    for h in deliveries:
        total.update(h["ops"])
    resumes: Counter[str] = Counter()
    for rnd in rounds:
        total.update(rnd["graph"]["start_ops"])
        resumes.update(rnd["graph"]["resume_ops"])
    total.update(resumes)
    per_email_ops = {k: total[k] / emails for k in KINDS}
    print(
        "per email (every delivery, the start and the decisions): "
        + ", ".join(f"{k} {v:.1f}" for k, v in per_email_ops.items())
    )
    if decisions:
        print(
            "  of which the decisions (approval function, this process): "
            + ", ".join(f"{k} {resumes[k] / emails:.1f}" for k in KINDS)
        )
    by_collection = {c: n / emails for c, n in writes_by_collection(dict(total)).items()}
    print(
        "  writes by collection: "
        + ", ".join(
            f"{c} {n:.1f}" + (" (embedded adapter)" if c.split("/")[0] in EMBEDDED_RECORDS else "")
            for c, n in by_collection.items()
        )
    )
    print(
        f"stored per email: {stored_delta['docs'] / emails:.1f} documents, "
        f"{stored_delta['bytes'] / emails / 1024:.1f} KB (JSON size); single-field index entries: "
        f"{stored_delta['entries'] / emails:.0f} ({stored_delta['entry_bytes'] / emails / 1024:.1f} KB)"
        f" under automatic indexing, {stored_delta['entries_x'] / emails:.0f} "
        f"({stored_delta['entry_bytes_x'] / emails / 1024:.1f} KB) with infra/'s exemptions"
    )
    groups = sorted(stored_delta["by_group"].items(), key=lambda item: -item[1][1] - item[1][2])  # type: ignore[union-attr]
    print(
        "  stored by collection group (documents, KB, index KB with infra/'s exemptions): "
        + ", ".join(
            f"{name} {d / emails:.1f} / {b / emails / 1024:.1f} / {i / emails / 1024:.1f}"
            for name, (d, b, i) in groups
            if d
        )
    )
    origin = [r for r in rows if r["kind"] == "origin" and "trace_id" in r]
    published = sum(h.get("published", 0) for h in deliveries) + len(origin)
    published_bytes = sum(h.get("published_bytes", 0) for h in deliveries)
    return {
        "graph": args.graph,
        "emails": emails,
        "transactional": args.transactional,
        "firestore_per_email": per_email_ops,
        "firestore_decisions_per_email": {k: resumes[k] / emails for k in KINDS},
        "firestore_writes_by_collection_per_email": by_collection,
        "firestore_deletes_by_collection_per_email": {
            c: n / emails for c, n in deletes_by_collection(dict(total)).items()
        },
        "decisions_per_email": decisions / emails,
        "final_status": dict(statuses),
        "hops_per_email": len(ran) / emails,
        "deliveries_per_email": len(deliveries) / emails,
        "messages_per_email": published / emails,
        "message_bytes_mean": published_bytes / max(1, published - len(origin)),
        "handler_ms_p50": statistics.median(h["handler_ms"] for h in ran),
        "hop_ms_p50": statistics.median(h["hop"] for h in graph_hops),
        "floor_hop_ms_p50": statistics.median(h["hop"] for h in floor_k),
        "floor_unkeyed_hop_ms_p50": statistics.median(h["hop"] for h in floor_u),
        "segments_ms_p50": {p: statistics.median(h[p] for h in graph_hops) for p in SEGMENTS},
        "stored_bytes_per_email": stored_delta["bytes"] / emails,
        "stored_docs_per_email": stored_delta["docs"] / emails,
        "index_entries_per_email": stored_delta["entries"] / emails,
        "index_bytes_per_email": stored_delta["entry_bytes"] / emails,
        "index_entries_exempt_per_email": stored_delta["entries_x"] / emails,
        "index_bytes_exempt_per_email": stored_delta["entry_bytes_x"] / emails,
        "stored_by_group_per_email": {
            name: {"docs": d / emails, "bytes": b / emails, "index_bytes_exempt": i / emails}
            for name, (d, b, i) in stored_delta["by_group"].items()  # type: ignore[union-attr]
            if d
        },
        "embedded_stored_docs_per_email": stored_delta["embedded_docs"] / emails,
        "embedded_stored_bytes_per_email": stored_delta["embedded_bytes"] / emails,
        "embedded_index_bytes_exempt_per_email": stored_delta["embedded_entry_bytes_x"] / emails,
        "node_handler_ms_p50": {
            node: statistics.median(h["handler_ms"] for h in ran if h["node"] == node)
            for node in by_node
        },
        "node_hops_per_email": {
            node: sum(1 for h in deliveries if h["node"] == node) / emails for node in by_node
        },
    }


# --- the run ---------------------------------------------------------------------------


def start_floor(env: dict[str, str], hops: int) -> list[FunctionServer]:
    """``hops`` floor functions behind push subscriptions, as ``DevCloud`` sets up nodes."""
    from inboxflow.adapters.pubsub_bus import PubSubAdmin

    pairs = [(FLOOR_GRAPH, f"hop{i}") for i in range(1, hops + 1)]
    servers = [start_function(f"{g}.{n}", env, target="floor_hop") for g, n in pairs]
    admin = PubSubAdmin(env["GOOGLE_CLOUD_PROJECT"])
    try:
        admin.ensure_topics(
            pairs,
            {s.node_id: s.url for s in servers},
            minimum_backoff_s=1.0,
            maximum_backoff_s=10.0,
        )
    finally:
        admin.close()
    return servers


def run(args: argparse.Namespace, env: dict[str, str], records: Path) -> dict[str, Any]:
    os.environ.update(env)
    hops = len(get_graph(args.graph, os.environ).nodes)
    with DevCloud(env["GOOGLE_CLOUD_PROJECT"], dict(env)) as cloud:
        cloud.start([get_graph(args.graph, os.environ)])
        floor = start_floor(env, hops)
        try:
            runtime = build_runtime(Settings.from_env(os.environ))
            seed_workspace(runtime.store, runtime.clock.now())
            counter = count_operations(runtime.store)  # type: ignore[arg-type]
            Origin(runtime, records)
            rounds: list[dict[str, Any]] = []
            stored_before: dict[str, int] = {}
            for index in range(args.rounds + 1):  # round 0 warms every function up
                if index == 1:
                    stored_before = stored(runtime.store.client)  # type: ignore[attr-defined]
                tag = f"{uuid.uuid4().hex[:6]}-{index}"
                emails = sample_emails(args.graph, args.emails, args.body_bytes, tag)
                order = ["graph", "keyed", "floor"]
                if index % 2:
                    order.reverse()  # alternate who runs first on a loaded machine
                rnd: dict[str, Any] = {}
                for what in order:
                    if what == "graph":
                        rnd["graph"] = run_graph(runtime, counter, emails, args)
                    else:
                        keyed = what == "keyed"
                        rnd[what] = run_floor(env, records, tag, args.emails, hops, keyed, args)
                if index:
                    rounds.append(rnd)
                print(
                    f"round {index}{' (warm-up)' if not index else ''}: "
                    f"{rnd['graph']['elapsed_s']:.1f} s, load {os.getloadavg()[0]:.1f}",
                    file=sys.stderr,
                )
            time.sleep(1.0)  # the last handlers' records
            stored_after = stored(runtime.store.client)  # type: ignore[attr-defined]
            runtime.bus.close()
        finally:
            for server in floor:
                server.stop()
    groups_after = stored_after.pop("by_group")
    groups_before = stored_before.pop("by_group", {})
    delta = {key: stored_after[key] - stored_before[key] for key in stored_after}
    delta["by_group"] = {  # type: ignore[assignment]
        name: [a - b for a, b in zip(counts, groups_before.get(name, [0, 0, 0]), strict=True)]
        for name, counts in groups_after.items()
    }
    print(f"uptime: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return report(_records(records), rounds, args, delta)


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--graph", default="pipeline")
    parser.add_argument("--emails", type=int, default=10, help="emails per round")
    parser.add_argument("--rounds", type=int, default=3, help="counted rounds (after a warm-up)")
    parser.add_argument("--concurrency", type=int, help="emails in flight (default: all)")
    parser.add_argument("--body-bytes", type=int, default=2048)
    parser.add_argument("--timeout", type=float, default=300)
    parser.add_argument("--transactional", action="store_true")
    parser.add_argument("--json", type=Path, help="write the measured figures here")
    parser.add_argument("--records", type=Path, help="keep the raw records in this folder")
    args = parser.parse_args()
    args.concurrency = args.concurrency or args.emails
    get_graph(args.graph, os.environ)  # an unknown graph fails here, before the emulators start

    firestore = emulators.start_firestore()
    pubsub = emulators.start_pubsub()
    try:
        with tempfile.TemporaryDirectory() as folder:
            records = args.records or Path(folder)
            records.mkdir(parents=True, exist_ok=True)
            env = {
                "GOOGLE_CLOUD_PROJECT": f"bench-{uuid.uuid4().hex[:10]}",
                "INBOXFLOW_STORE": "firestore",
                "INBOXFLOW_BUS": "pubsub",
                "INBOXFLOW_HOME": folder,
                "INBOXFLOW_FUNCTIONS_SOURCE": str(HERE / "emulated_functions.py"),
                "INBOXFLOW_BENCH_RECORDS": str(records),
                "INBOXFLOW_BENCH_TRANSACTIONAL": "1" if args.transactional else "0",
                "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")]),
                **firestore.env,
                **pubsub.env,
            }
            figures = run(args, env, records)
    finally:
        pubsub.stop()
        firestore.stop()
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n")
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
