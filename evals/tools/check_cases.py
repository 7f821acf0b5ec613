"""Checks a data set's cases.yaml: unique ids, mail files that exist, only the known keys,
one language tag per case; prints the counts per graph, language and tag.

    .venv/bin/python evals/tools/check_cases.py                  # evals/; exit 1 on a problem
    .venv/bin/python evals/tools/check_cases.py evals/holdout    # another data set
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
KEYS = {"id", "mail", "mailbox", "decide", "expect", "never", "tags", "criteria", "note"}
LANGUAGES = {"en", "cs", "de", "fr", "es", "ja"}
NEVER = {"sent", "drafted", "reviewed", "wrote"}


def main(root: Path = ROOT) -> int:
    """Check the data set in ``root`` (default: ``evals/``); 1 when there is a problem."""
    cases = yaml.safe_load((root / "cases.yaml").read_text(encoding="utf-8"))["cases"]
    problems: list[str] = []
    ids: Counter[str] = Counter()
    graphs: Counter[str] = Counter()
    languages: Counter[str] = Counter()
    tags: Counter[str] = Counter()
    used: set[str] = set()
    for case in cases:
        cid = case.get("id", "?")
        ids[cid] += 1
        if set(case) - KEYS:
            problems.append(f"{cid}: unknown keys {sorted(set(case) - KEYS)}")
        mails = case["mail"] if isinstance(case["mail"], list) else [case["mail"]]
        for name in mails:
            used.add(name)
            if not (root / name).is_file():
                problems.append(f"{cid}: no file {name}")
        for effect in case.get("never", []):
            if effect not in NEVER and not str(effect).startswith("to:"):
                problems.append(f"{cid}: unknown never {effect!r}")
        case_tags = case.get("tags", [])
        langs = LANGUAGES & set(case_tags)
        if len(langs) != 1:
            problems.append(f"{cid}: needs exactly one language tag, has {sorted(langs)}")
        languages.update(langs)
        tags.update(case_tags)
        graph = case.get("expect", {}).get("graph")
        graphs[graph if isinstance(graph, str) else str(graph)] += 1
        for key in ("criteria", "note"):
            if key in case and not isinstance(case[key], str):
                problems.append(f"{cid}: {key} must be text")
    problems += [f"duplicate id {cid}" for cid, n in ids.items() if n > 1]
    unused = sorted(str(p.relative_to(root)) for p in (root / "mail").rglob("*.eml"))
    problems += [f"mail not used by any case: {p}" for p in unused if p not in used]
    print(f"{len(cases)} cases; safety {tags['safety']}; conversations {tags['conversation']}")
    print("per graph:", dict(sorted(graphs.items())))
    print("per language:", dict(sorted(languages.items())))
    print("tags:", dict(sorted(tags.items())))
    for problem in problems:
        print("PROBLEM:", problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT))
