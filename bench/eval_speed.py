"""Benchmark of ``inboxflow eval`` (not a test): wall time of the command on a data set the size
of the shipped one.

Scales the hand-written set (tests/data/evals: 11 cases over every graph, two conversations)
up to ``--cases`` cases (copies with new ids) and times ``inboxflow eval DIR --json`` in a fresh
interpreter, as a user or CI runs it: start-up, worker processes, every case on its own home.

    .venv/bin/python bench/eval_speed.py [--cases 132] [--jobs 2] [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
FOLDER = ROOT / "tests" / "data" / "evals"


def scaled_set(target: Path, cases: int) -> int:
    """Copy the hand-written set into ``target`` with its cases repeated up to ``cases``."""
    shutil.copytree(FOLDER / "mail", target / "mail")
    original = yaml.safe_load((FOLDER / "cases.yaml").read_text())["cases"]
    scaled = [
        {**case, "id": f"{case['id']}-{index // len(original)}"}
        for index, case in zip(range(cases), original * (cases // len(original) + 1), strict=False)
    ]
    (target / "cases.yaml").write_text(yaml.safe_dump({"cases": scaled}, allow_unicode=True))
    return len(scaled)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=132)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "set"
        count = scaled_set(folder, args.cases)
        command = [sys.executable, "-c", "from inboxflow.dev.cli import main; main()", "eval"]
        command += [str(folder), "--json", "--jobs", str(args.jobs)]
        env = {k: v for k, v in os.environ.items() if not k.startswith("INBOXFLOW_")}
        walls, per_case = [], []
        for _ in range(args.rounds):
            started = time.perf_counter()
            done = subprocess.run(command, env=env, cwd=ROOT, capture_output=True, text=True)
            walls.append(time.perf_counter() - started)
            if done.returncode not in (0, 1):
                sys.exit(f"inboxflow eval failed ({done.returncode}): {done.stderr[-2000:]}")
            report = json.loads(done.stdout)
            per_case += [r["seconds"] for r in report["results"]]
        print(
            f"inboxflow eval: {count} cases, {args.jobs} worker process(es), cpu count {os.cpu_count()}"
        )
        print(f"  passed {report['passed']}/{report['cases']} (same every round: fixed clock)")
        print(
            f"  wall time per run: median {statistics.median(walls):.1f} s, "
            f"max {max(walls):.1f} s over {args.rounds} runs (budget: 60 s)"
        )
        print(
            f"  one case (fresh home, its mail, its decisions, scoring): median "
            f"{statistics.median(per_case) * 1000:.0f} ms, max {max(per_case) * 1000:.0f} ms"
        )


if __name__ == "__main__":
    main()
