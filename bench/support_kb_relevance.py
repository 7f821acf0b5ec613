"""How relevant is the nearest knowledge-base article to a support message? (not a test)

The figures behind ``graphs/support/guards.py``'s ``RELEVANCE_FLOOR``: for each support
case of ``evals/`` (the last message of a conversation; loop-protected mail skipped) and
each sample of the support inbox, the best chunk's relevance (cosine similarity, 1 -
distance) among the articles a specialist searches, with the offline embedder over the
sample knowledge base. A case is ``answerable`` when its label allows ``auto_respond``.
It prints each message's best article and relevance, then the range of each group.

    .venv/bin/python bench/support_kb_relevance.py [--evals evals]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import yaml

from inboxflow.adapters.offline_embedder import OfflineEmbedder
from inboxflow.adapters.sqlite_vectors import SqliteVectorIndex
from inboxflow.graphs.support.graph import SAMPLES
from inboxflow.graphs.support.kb import kb_search
from inboxflow.graphs.support.signals import find_cues
from inboxflow.graphs.support.urgency import signal_issue_type
from inboxflow.knowledge import KnowledgeBase, seed_knowledge
from inboxflow.mail import load_email_file


def messages(evals: Path) -> list[tuple[str, Path, bool | None]]:
    """``(name, mail file, answerable)`` for the support cases and samples."""
    cases = yaml.safe_load((evals / "cases.yaml").read_text(encoding="utf-8"))["cases"]
    found: list[tuple[str, Path, bool | None]] = []
    for case in cases:
        expect = case.get("expect", {})
        if expect.get("graph") != "support" or expect.get("loop_protected"):
            continue
        mail = case["mail"]
        last = mail[-1] if isinstance(mail, list) else mail
        action = expect.get("action")
        allowed = action if isinstance(action, list) else [action] if action else None
        answerable = None if allowed is None else "auto_respond" in allowed
        found.append((case["id"], evals / last, answerable))
    found += [(f"sample {p.name}", p, None) for p in sorted(SAMPLES.iterdir())]
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--evals", type=Path, default=Path("evals"))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        kb = KnowledgeBase(OfflineEmbedder(), SqliteVectorIndex(Path(folder) / "kb.sqlite"))
        seed_knowledge(kb)
        groups: dict[str, list[float]] = {"answerable": [], "not answerable": [], "unlabelled": []}
        for name, path, answerable in messages(args.evals):
            email = load_email_file(path, "support@brightlane.io")
            text = email.body_for_model(8000)
            cues = find_cues(email.subject, text)
            category = signal_issue_type(cues.keys(), cues.keys()) or "general"
            found = kb_search(kb, text, category, 3)
            best = max(found, key=lambda a: a["relevance"]) if found else None
            score = best["relevance"] if best else 0.0
            group = {True: "answerable", False: "not answerable", None: "unlabelled"}[answerable]
            groups[group].append(score)
            source = best["source"] if best else "-"
            print(f"{score:5.2f}  {group:14}  {category:9}  {source:38}  {name}")
        print()
        for group, scores in groups.items():
            if scores:
                print(
                    f"{group:14}  n={len(scores):2}  min {min(scores):.2f}  max {max(scores):.2f}"
                )


if __name__ == "__main__":
    main()
