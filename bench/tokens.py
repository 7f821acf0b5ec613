"""LLM tokens per email for each graph, from the prompts the graphs really build (not a test).

Each graph's sample emails (the pipeline's sample inbox; the other graphs' ``samples/``
that route to them) run in-process on the embedded default (SQLite, in-process bus),
pauses with a ``demo_choice`` decided as ``inboxflow demo`` decides them, with every LLM
call sent through google-genai to the local Gemini double (``TaskOracle``: the offline
heuristics answer). Every ``generateContent`` request is captured with its answer and
counted per graph and per task (the task is the ``LLMTask`` whose system instruction the
request carries; function-calling turns are counted by role):

- calls, input tokens and output tokens per email;
- the model (the request's, i.e. the role's default in ``adapters/gemini_roles``);
- $ per 1,000 emails at the list prices of ``bench/cost.py``'s ``PRICE_TABLE``;
- the shared prefix: leading characters (and tokens) of the rendered prompt (system
  instruction, then every turn's text) identical across all of the task's calls, the
  part Gemini's implicit caching can serve.

Token counts: google-genai's local tokenizer (``google.genai.local_tokenizer``) needs
``sentencepiece`` and downloads the tokenizer model from the internet on first use; this
bench runs offline, so tokens are ESTIMATED as characters / 4 (rounded up per text), the
same rule the Gemini double reports in ``usageMetadata``. Output tokens: the answer's JSON
(or function call) characters / 4, plus thinking tokens as the double reports them: twice
the answer for Gemini 3 models (which think by default), none otherwise.

    .venv/bin/python bench/tokens.py [--graph G ...] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import os
import sys
import tempfile
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from cost import llm_price

TOKENIZER = "estimate: characters / 4 (google-genai's local tokenizer needs a download)"


def estimate_tokens(text: str) -> int:
    """Tokens of ``text`` by the characters/4 rule (the Gemini double's own estimate)."""
    return math.ceil(len(text) / 4) if text else 0


def common_prefix(texts: Sequence[str]) -> str:
    """The longest leading text every one of ``texts`` shares ("" for none)."""
    if not texts:
        return ""
    first, length = texts[0], len(texts[0])
    for text in texts[1:]:
        length = min(length, len(text))
        for index in range(length):
            if text[index] != first[index]:
                length = index
                break
    return first[:length]


def _text(content: Mapping[str, Any] | None) -> str:
    parts = (content or {}).get("parts") or []
    pieces = []
    for part in parts:
        if not isinstance(part, Mapping):
            continue
        if "text" in part:
            pieces.append(str(part["text"]))
        else:
            pieces.append(json.dumps(part, ensure_ascii=False, sort_keys=True))
    return "".join(pieces)


def rendered_prompt(body: Mapping[str, Any]) -> str:
    """What the model reads: the system instruction, then each turn's text, in order."""
    texts = [_text(body.get("systemInstruction"))]
    texts += [_text(content) for content in body.get("contents") or []]
    tools = body.get("tools")
    if tools:
        texts.append(json.dumps(tools, ensure_ascii=False, sort_keys=True))
    return "\n".join(texts)


def task_of(body: Mapping[str, Any], systems: Mapping[str, str]) -> str:
    """The task whose system instruction ``body`` carries, else a function-calling turn."""
    system = _text(body.get("systemInstruction")).strip()
    if system in systems:
        return systems[system]
    return "function-calling turn" if body.get("tools") else "other"


def summarise(calls: Iterable[tuple[str, str, str, int]], emails: int) -> dict[str, dict[str, Any]]:
    """Per task, from ``(task, model, prompt, output_tokens)`` calls over ``emails`` emails:
    calls, input and output tokens per email, the model, the shared prefix and $ per 1,000."""
    grouped: dict[str, list[tuple[str, str, int]]] = defaultdict(list)
    for task, model, prompt, output in calls:
        grouped[task].append((model, prompt, output))
    tasks: dict[str, dict[str, Any]] = {}
    for task, items in sorted(grouped.items()):
        model = items[0][0]
        prompts = [prompt for _, prompt, _ in items]
        input_tokens = sum(estimate_tokens(p) for p in prompts)
        output_tokens = sum(output for _, _, output in items)
        prefix = common_prefix(prompts) if len(prompts) > 1 else ""
        per_in, per_out = input_tokens / emails, output_tokens / emails
        tasks[task] = {
            "model": model,
            "calls_per_email": len(items) / emails,
            "input_tokens_per_email": per_in,
            "output_tokens_per_email": per_out,
            "shared_prefix_chars": len(prefix),
            "shared_prefix_tokens": estimate_tokens(prefix),
            "prompt_chars_mean": sum(len(p) for p in prompts) / len(prompts),
            "usd_per_1000": 1000 * llm_price(model, per_in, per_out),
        }
    return tasks


def graph_files(graph: str) -> list[Path]:
    """The sample emails of ``graph`` that route to it (the pipeline: its sample inbox)."""
    from inboxflow.config import load_config
    from inboxflow.dev.cli.local import graph_samples, sample_inbox
    from inboxflow.graphs import graph_registry
    from inboxflow.mail import load_email_file
    from inboxflow.routing import route

    if graph == "pipeline":
        return sample_inbox()
    registry = graph_registry(os.environ)
    config = load_config(None, graphs=registry, environ=os.environ)
    return [
        path
        for path in graph_samples({graph: registry[graph]})
        if route(load_email_file(path), config).graph == graph
    ]


def run_graph(graph: str, double: Any, answers: list[int]) -> dict[str, Any]:
    """Run ``graph``'s samples on a fresh embedded home; its per-task token figures."""
    from rich.console import Console

    from inboxflow.config import load_config
    from inboxflow.dev.cli.local import AUTO, deciding, embedded_runtime, process
    from inboxflow.dev.doubles.gemini_api import known_tasks
    from inboxflow.graphs import graph_registry

    files = graph_files(graph)
    registry = graph_registry(os.environ)
    config = load_config(None, graphs=registry, environ=os.environ)
    start = len(double.requests)
    answers.clear()
    with tempfile.TemporaryDirectory() as home:
        runtime = embedded_runtime(Path(home))
        decide = deciding(graph if graph == "pipeline" else AUTO, None, config, runtime.graphs)
        console = Console(file=open(os.devnull, "w"))  # noqa: SIM115
        processed = process(runtime, files, console, decide, progress=False, demo_decisions=True)
    emails = sum(1 for p in processed if p.trace_id is not None) or 1
    systems = {t.system.strip(): t.name for t in known_tasks() if t.system}
    generate = [
        (i, r) for i, r in enumerate(double.requests[start:]) if r.action == "generateContent"
    ]
    calls = []
    for index, (_, request) in enumerate(generate):
        output = answers[index] if index < len(answers) else 0
        calls.append(
            (task_of(request.body, systems), request.model, rendered_prompt(request.body), output)
        )
    tasks = summarise(calls, emails)
    return {
        "graph": graph,
        "emails": emails,
        "tasks": tasks,
        "input_tokens_per_email": sum(t["input_tokens_per_email"] for t in tasks.values()),
        "output_tokens_per_email": sum(t["output_tokens_per_email"] for t in tasks.values()),
        "usd_per_1000": sum(t["usd_per_1000"] for t in tasks.values()),
    }


def recording(double: Any, answers: list[int]) -> None:
    """Record each 200 answer's output tokens (answer + thinking) as the double reports them."""
    original = double._generate

    def generate(model: str, body: Mapping[str, Any], reply: Any) -> tuple[int, dict[str, Any]]:
        status, response = original(model, body, reply)
        usage = response.get("usageMetadata") or {}
        answers.append(
            int(usage.get("candidatesTokenCount", 0)) + int(usage.get("thoughtsTokenCount", 0))
        )
        return status, response

    double._generate = generate


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--graph", action="append", help="graph(s) to measure (default: all)")
    parser.add_argument("--json", type=Path, help="write the figures here")
    args = parser.parse_args()
    logging.disable(logging.WARNING)
    from inboxflow.dev.doubles.gemini_api import gemini_double_environment
    from inboxflow.graphs import graph_registry

    graphs = args.graph or sorted(graph_registry(os.environ))
    results = []
    answers: list[int] = []
    with gemini_double_environment() as double:
        recording(double, answers)
        for graph in graphs:
            results.append(run_graph(graph, double, answers))
    print(f"tokens: {TOKENIZER}; thinking: 2x the answer for Gemini 3 models (the double's rule)")
    for result in results:
        print(
            f"\n{result['graph']}: {result['emails']} emails; per email "
            f"{result['input_tokens_per_email']:.0f} input, "
            f"{result['output_tokens_per_email']:.0f} output tokens; "
            f"${result['usd_per_1000']:.4f} per 1,000 emails"
        )
        print(
            f"  {'task':24} {'model':22} {'calls':>6} {'in':>7} {'out':>6} "
            f"{'prefix chars/tok':>17} {'$/1000':>8}"
        )
        for name, task in result["tasks"].items():
            print(
                f"  {name:24} {task['model']:22} {task['calls_per_email']:6.2f} "
                f"{task['input_tokens_per_email']:7.0f} {task['output_tokens_per_email']:6.0f} "
                f"{task['shared_prefix_chars']:>8}/{task['shared_prefix_tokens']:<8} "
                f"{task['usd_per_1000']:8.4f}"
            )
    if args.json:
        args.json.write_text(
            json.dumps({"tokenizer": TOKENIZER, "graphs": results}, indent=2) + "\n"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
