"""Latency of the embedded vector index and the offline embedder (not a test).

Fills a ``SqliteVectorIndex`` with N random 768-d vectors and times
``nearest(limit=5)`` (exact cosine search in Python), cold (first query,
loads the collection) and warm (median of repeated queries); also the
upsert rate, the cost of an upsert followed by a query (the loaded copy is
updated in place), a query with a ``where`` filter, and the offline
embedder on an email-sized text.

``--firestore`` instead starts the Firestore emulator, fills a
``FirestoreVectorIndex`` with knowledge-base-like chunks and compares
``nearest`` returning whole documents with ``nearest(fields=KB_HIT_FIELDS)``
(a projection: the vectors stay on the server): the client's CPU time per
query (this process, gRPC threads included; the emulator is another process)
and the wall time.

    .venv/bin/python bench/vector_search.py [--sizes 1000 10000] [--queries 20]
    .venv/bin/python bench/vector_search.py --firestore [--sizes 300] [--queries 200]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from inboxflow.adapters.offline_embedder import OfflineEmbedder
from inboxflow.adapters.sqlite_vectors import SqliteVectorIndex
from inboxflow.knowledge import KB_HIT_FIELDS
from inboxflow.mail import load_email_file, sample_inbox_dir
from inboxflow.ports.embeddings import EMBEDDING_DIMENSIONS
from inboxflow.ports.vectors import VectorDocument, VectorIndex


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:8.2f} ms"


def bench_size(folder: Path, size: int, queries: int, rng: random.Random) -> None:
    path = folder / f"bench-{size}.sqlite"
    index = SqliteVectorIndex(path)
    docs = [
        VectorDocument(
            f"doc-{i:06d}",
            [rng.gauss(0, 1) for _ in range(EMBEDDING_DIMENSIONS)],
            {"category": rng.choice(["inquiry", "complaint", "follow_up"]), "i": i},
        )
        for i in range(size)
    ]
    started = time.perf_counter()
    index.upsert_many("bench", docs)
    upsert_s = time.perf_counter() - started
    index.close()

    index = SqliteVectorIndex(path)  # a fresh process: nothing loaded yet
    query = [rng.gauss(0, 1) for _ in range(EMBEDDING_DIMENSIONS)]
    started = time.perf_counter()
    index.nearest("bench", query, limit=5)
    cold_s = time.perf_counter() - started
    warm = []
    for _ in range(queries):
        query = [rng.gauss(0, 1) for _ in range(EMBEDDING_DIMENSIONS)]
        started = time.perf_counter()
        index.nearest("bench", query, limit=5)
        warm.append(time.perf_counter() - started)
    after_write = []
    for n in range(max(3, queries // 4)):
        started = time.perf_counter()
        index.upsert("bench", f"new-{n}", query, {"category": "inquiry"})
        index.nearest("bench", query, limit=5)
        after_write.append(time.perf_counter() - started)
    filtered = []
    for _ in range(max(3, queries // 4)):
        started = time.perf_counter()
        index.nearest("bench", query, limit=5, where=[("category", "==", "complaint")])
        filtered.append(time.perf_counter() - started)
    index.close()
    print(
        f"{size:>7} vectors | nearest warm {_ms(statistics.median(warm))} "
        f"(p90 {_ms(sorted(warm)[int(len(warm) * 0.9) - 1])}) | cold {_ms(cold_s)} | "
        f"upsert+nearest {_ms(statistics.median(after_write))} | "
        f"where 1/3 {_ms(statistics.median(filtered))} | "
        f"bulk upsert {size / upsert_s:,.0f}/s"
    )


def bench_embedder(repeats: int = 50) -> None:
    embedder = OfflineEmbedder()
    emails = [load_email_file(p) for p in sorted(sample_inbox_dir().iterdir())]
    texts = [f"{e.subject}\n{e.body_text}" for e in emails]
    started = time.perf_counter()
    for _ in range(repeats):
        embedder.embed(texts)
    per_text = (time.perf_counter() - started) / (repeats * len(texts))
    chars = statistics.mean(len(t) for t in texts)
    print(f"offline embedder: {_ms(per_text)} per email ({chars:.0f} chars on average)")


def _chunk(i: int, rng: random.Random) -> VectorDocument:
    """A document shaped like a knowledge-base chunk (``knowledge.py``)."""
    return VectorDocument(
        f"doc-{i:04d}.md#{i % 7:03d}",
        [rng.gauss(0, 1) for _ in range(EMBEDDING_DIMENSIONS)],
        {
            "source": f"doc-{i:04d}.md",
            "title": f"Document {i}",
            "section": f"Section {i % 7}",
            "text": " ".join(
                rng.choice(["refund", "export", "plan", "invoice"]) for _ in range(130)
            ),
            "position": i % 7,
            "category": rng.choice(["billing", "technical", "general"]),
            "embedder": "offline-hash-v1",
            "added_at": 1_760_000_000.0 + i,
        },
    )


def _per_query(
    index: VectorIndex, queries: list[list[float]], fields: Sequence[str] | None
) -> tuple[float, float]:
    """Median wall seconds and mean client CPU seconds of ``nearest`` over ``queries``."""
    wall = []
    mine = [("embedder", "==", "offline-hash-v1")]
    cpu_started = time.process_time()
    for query in queries:
        started = time.perf_counter()
        index.nearest("bench", query, limit=5, where=mine, fields=fields)
        wall.append(time.perf_counter() - started)
    return statistics.median(wall), (time.process_time() - cpu_started) / len(queries)


def bench_firestore(size: int, queries: int, rng: random.Random) -> None:
    """Whole documents against a projection onto ``KB_HIT_FIELDS``, on the emulator."""
    from inboxflow.adapters.firestore_vectors import FirestoreVectorIndex
    from inboxflow.dev import emulators

    with emulators.start_firestore() as emulator:
        os.environ.update(emulator.env)
        index = FirestoreVectorIndex(project=emulators.DEFAULT_PROJECT)
        index.upsert_many("bench", [_chunk(i, rng) for i in range(size)])
        sample = [[rng.gauss(0, 1) for _ in range(EMBEDDING_DIMENSIONS)] for _ in range(queries)]
        _per_query(index, sample[:10], None)  # warm the channel
        for _ in range(2):  # alternate, so drift in the machine's load hits both alike
            for label, fields in (
                ("whole documents", None),
                ("fields=KB_HIT_FIELDS", KB_HIT_FIELDS),
            ):
                wall, cpu = _per_query(index, sample, fields)
                print(
                    f"{size:>5} chunks | {label:<21} | "
                    f"client CPU {_ms(cpu)}/query | wall {_ms(wall)} (median)"
                )
        index.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=None)
    parser.add_argument("--queries", type=int, default=None)
    parser.add_argument(
        "--firestore", action="store_true", help="FirestoreVectorIndex on the emulator"
    )
    args = parser.parse_args()
    rng = random.Random(42)
    if args.firestore:
        print(f"FirestoreVectorIndex on the emulator, {EMBEDDING_DIMENSIONS} dimensions, limit 5")
        for size in args.sizes or [300]:
            bench_firestore(size, args.queries or 200, rng)
        return
    args.sizes = args.sizes or [1000, 10000]
    args.queries = args.queries or 20
    print(f"SqliteVectorIndex, {EMBEDDING_DIMENSIONS} dimensions, limit 5, exact cosine search")
    with tempfile.TemporaryDirectory() as folder:
        for size in args.sizes:
            bench_size(Path(folder), size, args.queries, rng)
    bench_embedder()


if __name__ == "__main__":
    main()
