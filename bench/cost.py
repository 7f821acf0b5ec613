"""Dollars per 1,000 emails from measured operations (not a test).

Reads what ``bench/emulated.py --json FILE`` measured (Firestore reads,
writes and transactions per email counted at the RPC layer, messages and
their size, each node's handler latency, stored bytes) and prices it with
the list prices below, for one graph per file:

    .venv/bin/python bench/emulated.py --emails 20 --json /tmp/pipeline.json
    .venv/bin/python bench/cost.py /tmp/pipeline.json [more.json ...]

What is priced, per email:
- Firestore: document reads and writes as counted; one TTL delete per
  document the email left behind (traces, steps, effects expire); storage
  of its bytes for the retention period (30 days).
- Pub/Sub: each message published and each push delivery, at least 1 KB each.
- Functions (Cloud Run functions, request-based billing, Tier 1 region): one
  request per delivery; vCPU-seconds and GiB-seconds of each node's measured
  handler time rounded up to 100 ms, at the vCPU Cloud Run gives the node's
  declared memory.
- LLM tokens: priced separately (the offline model spends none; with Gemini,
  ``llm_calls`` of the step logs carry the token counts).

The table below is Google's published list prices as of ``PRICES_AS_OF``;
re-check them before quoting a figure (cloud.google.com/firestore/pricing,
/pubsub/pricing, /run/pricing, ai.google.dev/pricing).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any

PRICES_AS_OF = "2025-06 list prices (us-central1 / Tier 1), table written 2026-11-22"
PRICES: dict[str, float] = {
    # Firestore (Standard edition, regional us-central1), USD
    "firestore_read": 0.03 / 100_000,
    "firestore_write": 0.09 / 100_000,
    "firestore_delete": 0.01 / 100_000,
    "firestore_gib_month": 0.15,
    # Pub/Sub message delivery: USD per TiB of throughput (publish and subscribe),
    # at least 1,000 bytes per message
    "pubsub_tib": 40.0,
    "pubsub_min_bytes": 1000,
    # Cloud Run functions, request-based billing, Tier 1
    "run_vcpu_second": 0.000024,
    "run_gib_second": 0.0000025,
    "run_request": 0.40 / 1_000_000,
    "run_billing_granularity_s": 0.1,
    # Gemini 2.5 Flash, USD per token (paid tier), for --llm-tokens
    "llm_input_token": 0.30 / 1_000_000,
    "llm_output_token": 2.50 / 1_000_000,
}
RETENTION_DAYS = 30
GOAL_PER_1000 = 0.05

# Cloud Run functions: the vCPU that comes with a memory size (gen2 defaults).
VCPU_FOR_MEMORY_MB = ((128, 0.083), (256, 0.167), (512, 0.333), (1024, 0.583), (2048, 1.0))


def vcpu_for(memory_mb: int) -> float:
    """The vCPU Cloud Run functions allocate with ``memory_mb`` of memory."""
    for limit, vcpu in VCPU_FOR_MEMORY_MB:
        if memory_mb <= limit:
            return vcpu
    return 2.0


def billed_seconds(ms: float) -> float:
    """Request time as billed: rounded up to 100 ms."""
    step = PRICES["run_billing_granularity_s"]
    return math.ceil(ms / 1000 / step) * step


def node_memory(graph: str) -> dict[str, int]:
    """Each node's declared memory (MB), from the graph declaration."""
    from inboxflow.graphs import get_graph

    return {name: node.memory_mb for name, node in get_graph(graph).nodes.items()}


def cost_per_email(
    figures: dict[str, Any], llm_tokens: tuple[int, int] = (0, 0), handler_ms: float | None = None
) -> dict:
    """USD per email by item; ``handler_ms`` prices every hop at that time instead of measured."""
    ops = figures["firestore_per_email"]
    memory = node_memory(figures["graph"])
    compute = vcpu = gib = 0.0
    for node, per_email in figures["node_hops_per_email"].items():
        measured = figures["node_handler_ms_p50"][node]
        seconds = billed_seconds(measured if handler_ms is None else handler_ms) * per_email
        mb = memory.get(node, 256)
        vcpu += seconds * vcpu_for(mb)
        gib += seconds * mb / 1024
    compute = vcpu * PRICES["run_vcpu_second"] + gib * PRICES["run_gib_second"]
    messages = figures["messages_per_email"]
    message_bytes = max(PRICES["pubsub_min_bytes"], figures["message_bytes_mean"])
    stored_gib = figures["stored_bytes_per_email"] / 2**30
    return {
        "firestore reads": ops["reads"] * PRICES["firestore_read"],
        "firestore writes": ops["writes"] * PRICES["firestore_write"],
        "firestore TTL deletes": figures["stored_docs_per_email"] * PRICES["firestore_delete"],
        "firestore storage": stored_gib * PRICES["firestore_gib_month"] * RETENTION_DAYS / 30,
        "pub/sub": 2 * messages * message_bytes / 2**40 * PRICES["pubsub_tib"],
        "function requests": figures["deliveries_per_email"] * PRICES["run_request"],
        "function compute": compute,
        "llm tokens": llm_tokens[0] * PRICES["llm_input_token"]
        + llm_tokens[1] * PRICES["llm_output_token"],
    }


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("figures", nargs="+", type=Path, help="bench/emulated.py --json output")
    parser.add_argument(
        "--llm-tokens",
        nargs=2,
        type=int,
        default=(0, 0),
        metavar=("IN", "OUT"),
        help="LLM input and output tokens per email (default: none, the offline model)",
    )
    parser.add_argument(
        "--handler-ms",
        type=float,
        help="price every hop's function time at this many ms instead of the measured medians "
        "(the emulators on a loaded machine are slower than Firestore and Pub/Sub)",
    )
    args = parser.parse_args()
    print(f"prices: {PRICES_AS_OF}")
    for path in args.figures:
        figures = json.loads(path.read_text())
        items = cost_per_email(figures, tuple(args.llm_tokens), args.handler_ms)
        ops = figures["firestore_per_email"]
        print(
            f"\n{figures['graph']}: {figures['emails']} emails measured "
            f"({'transactions' if figures.get('transactional') else 'conditional writes'}); "
            f"per email: {ops['reads']:.1f} reads, {ops['writes']:.1f} writes, "
            f"{ops['transactions']:.1f} transactions, {figures['messages_per_email']:.1f} messages, "
            f"{figures['stored_bytes_per_email'] / 1024:.1f} KB stored; function time: "
            + (f"{args.handler_ms:.0f} ms per hop" if args.handler_ms else "measured medians")
        )
        for item, usd in items.items():
            print(f"  {item:22} ${usd * 1000:8.4f} per 1,000 emails")
        before_llm = sum(v for k, v in items.items() if k != "llm tokens")
        verdict = "within" if before_llm * 1000 <= GOAL_PER_1000 else "above"
        print(
            f"  {'total before LLM':22} ${before_llm * 1000:8.4f} per 1,000 emails "
            f"({verdict} the ${GOAL_PER_1000} goal)"
        )
        if any(args.llm_tokens):
            print(f"  {'total':22} ${sum(items.values()) * 1000:8.4f} per 1,000 emails")
    return 0


if __name__ == "__main__":
    sys.exit(main())
