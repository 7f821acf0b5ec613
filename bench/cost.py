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
- LLM tokens: ``--tokens tokens.json`` (``bench/tokens.py --json``) prices each
  graph's measured tokens per email at its models' prices (``GEMINI_TOKEN_PRICES``);
  ``--llm-tokens IN OUT`` prices a fixed count at the ``llm_*_token`` prices; neither:
  none (the offline model spends none).

Two totals per graph. **As measured**: every Firestore write the bench counted,
the embedded adapters' own records included (``firestore_ops.EMBEDDED_RECORDS``:
the bench's stand-ins for Cloud Tasks, the reviewers' mail channel and Gmail
write them to Firestore). **Deployed**: those records' writes, stored bytes and
TTL deletes taken out and what the deployment's real services charge put in
their place: each deadline task two Cloud Tasks operations (its creation, and
its push delivery or, for a task a decision deleted, its deletion) and, for a
task delivered, the approval function's request at its deadline (``/timeout``:
one request, the function time, two reads; the embedded queue's read of a
deleted task's record comes out too); the Gmail and Calendar APIs (reviewer mail, the
mailbox's sent, read and calendar records) charge nothing per call (quota only),
and neither does a chat webhook (Amazon SES would: $0.10 per 1,000 emails).

Free tiers are left out (this is the marginal cost once past them). Every
price carries its source in ``PRICE_TABLE``, checked on ``CHECKED_ON`` with
the ``search`` tool over stored copies of the pages: ``google`` means Google's
own pricing page states it; ``third-party`` means Google's page in the store
did not show the figure (the per-location tables render in the browser) and
the figure is from the cited third-party page; ``unverified`` means no stored
page answered and the figure is the previous table's. Re-check before quoting.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any, NamedTuple

CHECKED_ON = "2026-11-22"


class Price(NamedTuple):
    usd: float
    unit: str
    source: str
    status: str  # google | third-party | unverified


FIRESTORE = "https://cloud.google.com/firestore/pricing"
RUN = "https://cloud.google.com/run/pricing"
PRICE_TABLE: dict[str, Price] = {
    # Firestore Standard edition (native mode, the database infra/firestore.tf makes), US
    # region. Google's page: billed per document read, write and delete (not per byte, not
    # per index entry written); storage includes index entries; TTL deletes are billed.
    "firestore_read": Price(
        0.03 / 100_000,
        "document read",
        "https://airbyte.com/data-engineering-resources/google-firestore-pricing (US regions)",
        "third-party",
    ),
    "firestore_write": Price(
        0.09 / 100_000,
        "document write",
        "https://airbyte.com/data-engineering-resources/google-firestore-pricing (US regions)",
        "third-party",
    ),
    "firestore_delete": Price(0.01 / 100_000, "document delete", FIRESTORE, "unverified"),
    # A billable operation is an API call or a push delivery attempt (per 32 KB); first
    # million a month free. Google's page (the French copy showed the table).
    "cloud_tasks_operation": Price(
        0.40 / 1_000_000,
        "billable operation",
        "https://cloud.google.com/tasks/docs/pricing",
        "google",
    ),
    "firestore_gib_month": Price(0.15, "GiB-month stored", FIRESTORE, "unverified"),
    # Pub/Sub throughput: publish and delivery each, at least 1000 bytes per publish, push or
    # pull request; a message's volume is its data, attributes, 20 bytes of timestamp and id.
    "pubsub_tib": Price(
        40.0, "TiB of throughput", "https://cloud.google.com/pubsub/pricing", "google"
    ),
    # Cloud Run functions bill as Cloud Run: Tier 1, CPU only allocated during requests,
    # each request rounded up to 100 ms.
    "run_vcpu_second": Price(0.000024, "vCPU-second", RUN, "google"),
    "run_gib_second": Price(
        0.0000025,
        "GiB-second",
        "https://cloudwebschool.com/tools/cloud-run-cost-calculator/",
        "third-party",
    ),
    "run_request": Price(
        0.40 / 1_000_000,
        "request",
        "https://cloudwebschool.com/tools/cloud-run-cost-calculator/",
        "third-party",
    ),
    # Gemini 2.5 Flash (adapters/gemini_llm.DEFAULT_MODEL), Gemini API paid tier.
    "llm_input_token": Price(
        0.30 / 1_000_000,
        "input token",
        "https://deploybase.ai/articles/gemini-2.5-pricing",
        "third-party",
    ),
    "llm_output_token": Price(
        2.50 / 1_000_000,
        "output token",
        "https://deploybase.ai/articles/gemini-2.5-pricing",
        "third-party",
    ),
}
# Per-model token prices (Gemini API paid tier, standard, text) for the models
# adapters/gemini_roles.py defaults to; output includes thinking tokens.
GEMINI_TOKEN_PRICES: dict[str, tuple[Price, Price]] = {
    # task role (TASK_MODEL). No stored page gave gemini-3.5-flash-lite's price: the figure
    # is gemini-3.1-flash-lite's (vercel.com/ai-gateway/models/gemini-3.1-flash-lite,
    # docs.apiyi.com/models/gemini-3-1-flash-lite), the Flash-Lite it replaces.
    "gemini-3.5-flash-lite": (
        Price(
            0.25 / 1_000_000,
            "input token",
            "https://ai.google.dev/gemini-api/docs/pricing",
            "unverified",
        ),
        Price(
            1.50 / 1_000_000,
            "output token",
            "https://ai.google.dev/gemini-api/docs/pricing",
            "unverified",
        ),
    ),
    # assistant and agent roles (CHAT_MODEL).
    "gemini-3.8-flash": (
        Price(
            0.75 / 1_000_000,
            "input token",
            "https://vercel.com/ai-gateway/models/gemini-3.8-flash",
            "third-party",
        ),
        Price(
            3.75 / 1_000_000,
            "output token",
            "https://vercel.com/ai-gateway/models/gemini-3.8-flash",
            "third-party",
        ),
    ),
}
for _model, (_in, _out) in GEMINI_TOKEN_PRICES.items():
    PRICE_TABLE[f"{_model} input"] = _in
    PRICE_TABLE[f"{_model} output"] = _out
PRICES: dict[str, float] = {name: price.usd for name, price in PRICE_TABLE.items()}
PUBSUB_MIN_BYTES = 1000
RUN_GRANULARITY_S = 0.1
RETENTION_DAYS = 30
TASK_OPERATIONS = 2
"""Cloud Tasks operations per deadline task: its creation, and its push delivery or deletion."""
DEADLINE_READS = 2
"""What ``/timeout`` reads at a deadline: the approval, and the trace when it was decided."""
GOAL_PER_1000 = 0.05

# Cloud Run functions: the vCPU that comes with a memory size (google:
# https://cloud.google.com/functions/docs/configuring/memory).
VCPU_FOR_MEMORY_MB = (
    (128, 0.083),
    (256, 0.167),
    (512, 0.333),
    (1024, 0.583),
    (2048, 1.0),
    (8192, 2.0),
    (16384, 4.0),
)


def llm_price(model: str, input_tokens: float, output_tokens: float) -> float:
    """USD for ``input_tokens`` and ``output_tokens`` of ``model`` (output includes thinking);
    a model not in ``GEMINI_TOKEN_PRICES`` is priced as ``llm_input_token``/``llm_output_token``."""
    prices = GEMINI_TOKEN_PRICES.get(model)
    per_in = prices[0].usd if prices else PRICES["llm_input_token"]
    per_out = prices[1].usd if prices else PRICES["llm_output_token"]
    return input_tokens * per_in + output_tokens * per_out


def tokens_usd_per_email(tokens: dict[str, Any], graph: str) -> float | None:
    """USD per email of ``graph``'s LLM tokens from ``bench/tokens.py --json`` output (None:
    the graph was not measured)."""
    for measured in tokens.get("graphs", []):
        if measured["graph"] == graph:
            return float(measured["usd_per_1000"]) / 1000
    return None


def vcpu_for(memory_mb: int) -> float:
    """The vCPU Cloud Run functions allocate with ``memory_mb`` of memory."""
    for limit, vcpu in VCPU_FOR_MEMORY_MB:
        if memory_mb <= limit:
            return vcpu
    return 8.0


def billed_seconds(ms: float) -> float:
    """Request time as billed: rounded up to 100 ms."""
    return math.ceil(ms / 1000 / RUN_GRANULARITY_S) * RUN_GRANULARITY_S


def node_memory(graph: str) -> dict[str, int]:
    """Each node's declared memory (MB), from the graph declaration."""
    from inboxflow.graphs import get_graph

    return {name: node.memory_mb for name, node in get_graph(graph).nodes.items()}


def cost_per_email(
    figures: dict[str, Any], llm_tokens: tuple[int, int] = (0, 0), handler_ms: float | None = None
) -> dict[str, float]:
    """USD per email by item; ``handler_ms`` prices every hop at that time instead of measured."""
    ops = figures["firestore_per_email"]
    memory = node_memory(figures["graph"])
    vcpu = gib = 0.0
    for node, per_email in figures["node_hops_per_email"].items():
        measured = figures["node_handler_ms_p50"].get(node, 0.0)
        seconds = billed_seconds(measured if handler_ms is None else handler_ms) * per_email
        mb = memory.get(node, 256)
        vcpu += seconds * vcpu_for(mb)
        gib += seconds * mb / 1024
    decisions = figures.get("decisions_per_email", 0.0)  # the approval function (256 MB)
    seconds = billed_seconds(100.0 if handler_ms is None else handler_ms) * decisions
    vcpu, gib = vcpu + seconds * vcpu_for(256), gib + seconds * 256 / 1024
    compute = vcpu * PRICES["run_vcpu_second"] + gib * PRICES["run_gib_second"]
    messages = figures["messages_per_email"]
    message_bytes = max(PUBSUB_MIN_BYTES, figures["message_bytes_mean"])
    stored = figures["stored_bytes_per_email"] + figures.get("index_bytes_exempt_per_email", 0)
    return {
        "firestore reads": ops["reads"] * PRICES["firestore_read"],
        "firestore writes": ops["writes"] * PRICES["firestore_write"],
        "firestore TTL deletes": figures["stored_docs_per_email"] * PRICES["firestore_delete"],
        "firestore storage": storage_usd(stored),
        "pub/sub": 2 * messages * message_bytes / 2**40 * PRICES["pubsub_tib"],
        "function requests": (figures["deliveries_per_email"] + decisions) * PRICES["run_request"],
        "function compute": compute,
        "llm tokens": llm_tokens[0] * PRICES["llm_input_token"]
        + llm_tokens[1] * PRICES["llm_output_token"],
    }


def storage_usd(stored_bytes: float) -> float:
    """USD of ``stored_bytes`` (documents and index entries) kept for the retention period."""
    return stored_bytes / 2**30 * PRICES["firestore_gib_month"] * RETENTION_DAYS / 30


def embedded_writes(figures: dict[str, Any]) -> tuple[float, float]:
    """Writes per email to the embedded adapters' own records, and the deadline tasks created
    (the writes to ``tasks`` that are not a deleted task's delete)."""
    from firestore_ops import EMBEDDED_RECORDS

    found = figures.get("firestore_writes_by_collection_per_email") or {}
    embedded = sum(n for c, n in found.items() if c.split("/")[0] in EMBEDDED_RECORDS)
    return embedded, float(found.get("tasks", 0.0)) - deleted_tasks(figures)


def deleted_tasks(figures: dict[str, Any]) -> float:
    """Deadline tasks per email a decision deleted (the embedded queue's deletes)."""
    return float((figures.get("firestore_deletes_by_collection_per_email") or {}).get("tasks", 0.0))


def deployed_per_email(
    figures: dict[str, Any], items: dict[str, float], handler_ms: float | None = None
) -> dict[str, float]:
    """``items`` (``cost_per_email``) as a deployment pays them: the embedded adapters'
    records' writes, bytes and TTL deletes out; Cloud Tasks' operations and each deadline
    task's delivery to the approval function in (the module's docstring says why)."""
    embedded, tasks = embedded_writes(figures)
    deleted = deleted_tasks(figures)
    delivered = tasks - deleted
    stored = figures.get("embedded_stored_bytes_per_email", 0.0) + figures.get(
        "embedded_index_bytes_exempt_per_email", 0.0
    )
    seconds = billed_seconds(100.0 if handler_ms is None else handler_ms) * delivered
    delivery = delivered * (PRICES["run_request"] + DEADLINE_READS * PRICES["firestore_read"])
    delivery += seconds * (
        vcpu_for(256) * PRICES["run_vcpu_second"] + 256 / 1024 * PRICES["run_gib_second"]
    )
    out = dict(items)
    out["firestore writes"] -= embedded * PRICES["firestore_write"]
    out["firestore reads"] -= deleted * PRICES["firestore_read"]  # the embedded queue's
    out["firestore TTL deletes"] -= (
        figures.get("embedded_stored_docs_per_email", 0.0) * PRICES["firestore_delete"]
    )
    out["firestore storage"] -= storage_usd(stored)
    llm = out.pop("llm tokens")
    out["cloud tasks"] = tasks * TASK_OPERATIONS * PRICES["cloud_tasks_operation"]
    out["deadline deliveries"] = delivery
    out["llm tokens"] = llm
    return out


def print_writes(figures: dict[str, Any]) -> None:
    """The writes per email by collection (``bench/emulated.py`` measures them), and those of
    the embedded adapters' own records: the bench's stand-ins for Cloud Tasks, the reviewers'
    mail channel and the Gmail mailbox, which a deployment's real services do not make."""
    from firestore_ops import EMBEDDED_RECORDS

    found = figures.get("firestore_writes_by_collection_per_email")
    if not found:
        return
    print("  writes by collection: " + ", ".join(f"{c} {n:.1f}" for c, n in found.items()))
    embedded = sum(n for c, n in found.items() if c.split("/")[0] in EMBEDDED_RECORDS)
    if embedded:
        print(
            f"  {'':22} of which {embedded:.1f} to the embedded adapters' own records "
            f"(${embedded * PRICES['firestore_write'] * 1000:.4f} per 1,000 emails; "
            "not Firestore writes with Cloud Tasks, a mail channel and Gmail)"
        )


def print_prices() -> None:
    """The price table with each price's source and how it was checked."""
    print(
        f"prices checked {CHECKED_ON} (google: Google's page; third-party: cited page; unverified)"
    )
    for name, price in PRICE_TABLE.items():
        print(f"  {name:20} ${price.usd:.10f} per {price.unit:18} {price.status:12} {price.source}")


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
    parser.add_argument(
        "--tokens",
        type=Path,
        help="bench/tokens.py --json output: price each graph's LLM tokens per email from it",
    )
    args = parser.parse_args()
    tokens = json.loads(args.tokens.read_text()) if args.tokens else None
    print_prices()
    totals = []
    for path in args.figures:
        figures = json.loads(path.read_text())
        items = cost_per_email(figures, tuple(args.llm_tokens), args.handler_ms)
        measured = tokens_usd_per_email(tokens, figures["graph"]) if tokens else None
        if measured is not None:
            items["llm tokens"] = measured
        ops = figures["firestore_per_email"]
        print(
            f"\n{figures['graph']}: {figures['emails']} emails measured, "
            f"{figures['hops_per_email']:.1f} hops and {figures.get('decisions_per_email', 0):.1f} "
            f"decisions per email, final status {figures.get('final_status', {})}; per email: "
            f"{ops['reads']:.1f} reads, {ops['writes']:.1f} writes, "
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
        if any(args.llm_tokens) or measured is not None:
            print(f"  {'total':22} ${sum(items.values()) * 1000:8.4f} per 1,000 emails")
        print_writes(figures)
        deployed = deployed_per_email(figures, items, args.handler_ms)
        deployed_before = sum(v for k, v in deployed.items() if k != "llm tokens")
        changed = [k for k in deployed if deployed[k] != items.get(k)]
        verdict = "within" if deployed_before * 1000 <= GOAL_PER_1000 else "above"
        print(
            "  deployed (the embedded adapters' records priced as Cloud Tasks and the Gmail API): "
            + ", ".join(f"{k} ${deployed[k] * 1000:.4f}" for k in changed)
        )
        print(
            f"  {'total before LLM, deployed':22} ${deployed_before * 1000:8.4f} per 1,000 emails "
            f"({verdict} the ${GOAL_PER_1000} goal)"
        )
        totals.append((figures, items, before_llm, deployed_before))
    if len(totals) > 1:
        print(
            "\n| graph | hops | reads | writes (deployed) | $ per 1,000 emails before LLM "
            "| deployed | LLM tokens | total |"
        )
        print("|---|---:|---:|---:|---:|---:|---:|---:|")
        for figures, items, before_llm, deployed_before in totals:
            ops = figures["firestore_per_email"]
            llm = items["llm tokens"]
            ours = ops["writes"] - embedded_writes(figures)[0]
            print(
                f"| {figures['graph']} | {figures['hops_per_email']:.1f} | {ops['reads']:.1f} | "
                f"{ops['writes']:.1f} ({ours:.1f}) | {before_llm * 1000:.3f} | "
                f"{deployed_before * 1000:.3f} | {llm * 1000:.3f} | "
                f"{(before_llm + llm) * 1000:.3f} |"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
