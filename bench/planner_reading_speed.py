"""Per-call speed of the planner's rule reading, old against new (not a test; session 16).

Reads every planner mail of the eval sets (``evals/**/mail/planner*/*.eml`` and the reading
set's planner conversations), takes its text body, and times ``read_message`` of
:mod:`inboxflow.graphs.planner.extract` against the copy of the module as it was before
session 16 (``tests/unit/graphs/planner/extract_oracle.py``), rounds alternated in one
process after one warm-up call of each; prints the medians per round over all mail.

    PYTHONPATH=shared .venv/bin/python bench/planner_reading_speed.py [--rounds 9]
"""

from __future__ import annotations

import argparse
import email
import email.policy
import statistics
import sys
import time
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.unit.graphs.planner import extract_oracle as old  # noqa: E402

from inboxflow.graphs.planner import extract as new  # noqa: E402


def bodies() -> list[str]:
    """The text body of every planner mail of the eval sets."""
    found: list[str] = []
    for path in sorted((ROOT / "evals").rglob("*.eml")):
        if "planner" not in str(path.relative_to(ROOT)) and "licence" not in path.name:
            continue
        message = email.message_from_bytes(path.read_bytes(), policy=email.policy.default)
        part = message.get_body(preferencelist=("plain", "html"))
        if part is not None:
            found.append(part.get_content())
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=9)
    args = parser.parse_args()
    texts = bodies()
    today = date(2026, 11, 29)
    times: dict[str, list[float]] = {"old": [], "new": []}
    for module in (old, new):  # warm-up: tables and automata built, regex caches filled
        for text in texts:
            module.read_message(text, (), today)
    for _ in range(args.rounds):
        for name, module in (("old", old), ("new", new)):
            start = time.perf_counter()
            for text in texts:
                module.read_message(text, (), today)
            times[name].append(time.perf_counter() - start)
    lines = sum(len(text.splitlines()) for text in texts)
    for name, values in times.items():
        median = statistics.median(values)
        print(
            f"{name}: {median * 1000:.2f} ms for {len(texts)} mails ({lines} lines), "
            f"{median / len(texts) * 1e6:.0f} us per mail"
        )
    print(f"new/old: {statistics.median(times['new']) / statistics.median(times['old']):.2f}")


if __name__ == "__main__":
    main()
