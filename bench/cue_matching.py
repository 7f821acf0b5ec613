"""Cue matching candidates on the real cue sets and the eval mail (not a test).

Every cue set the graphs build (the pipeline's intents, complaint and meeting-time cues; the
agent's escalation cues) is searched in the subject and text of every email under
``evals/`` (folded once, as the nodes do), by each candidate:

- ``regex``: the matcher before issue 42, one Python ``re`` alternation of every cue with a
  look-behind and a word tail, tried at every position (the reference);
- ``automaton``: ``CueSet`` (``graphs/cue_matching.py``): pyahocorasick reads the text once,
  then one pass keeps the first cue at each place as the regex would;
- ``re2-set``: RE2's set matching says which cues occur anywhere (RE2 has no look-behind, so
  a superset), then the regex of those cues alone runs: the same results; ``re2-set`` keeps
  the regex of each subset of cues compiled (the bench's mail repeats them),
  ``re2-set-cold`` compiles it on every call, as new mail with a new subset does;
- ``re2-alt``: one RE2 alternation with Unicode classes and no look-behind (RE2 has none):
  linear, but not the same results (timing only).

Prints each candidate's time per ``find`` call, its ratio to the first (``regex``), and whether its results
are the reference's.

    .venv/bin/python bench/cue_matching.py [--repeat 3] [--chars 2048] [--candidates ...]
"""

from __future__ import annotations

import argparse
import functools
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path

import re2

from inboxflow.graphs.agent.cues import cues as agent_cues
from inboxflow.graphs.cue_matching import Cue, CueSet, _unspaced_script, fold
from inboxflow.graphs.pipeline.cues import complaint_cues, intent_cues, meeting_time_cues
from inboxflow.graphs.pipeline.guards import email_text
from inboxflow.mail import load_email_file

ROOT = Path(__file__).resolve().parent.parent
Found = list[tuple[str, str]]


def cue_sets() -> dict[str, list[Cue]]:
    """Every cue set the graphs search, by name, as the cues the ``CueSet`` keeps (in its order)."""
    sets: dict[str, CueSet] = {f"intent.{k}": v for k, v in intent_cues().items()}
    sets["complaint"] = complaint_cues()
    sets |= {f"time.{k}": v for k, v in meeting_time_cues().items()}
    for kind in ("medical_advice", "child", "child_use", "complaint"):
        sets[f"agent.{kind}"] = agent_cues(kind)
    return {name: list(cue_set._cues) for name, cue_set in sets.items()}


def _ordered(cues: list[Cue]) -> list[tuple[str, Cue]]:
    by_words: dict[str, Cue] = {}
    for cue in cues:
        key = fold(cue.words.strip())
        if key.lstrip("*") and key not in by_words:
            by_words[key] = cue
    return sorted(by_words.items(), key=lambda item: len(item[0].lstrip("*")), reverse=True)


def _alternative(key: str) -> str:
    words = key.lstrip("*")
    body = r"\s+".join(re.escape(part) for part in words.split())
    if _unspaced_script(words):
        return f"({body})"
    start = "" if key.startswith("*") else r"(?<!\w)"
    return f"{start}({body})[\\w'-]*"


def _finditer(pattern: re.Pattern[str], cues: list[Cue], text: str) -> Found:
    seen: set[int] = set()
    found: Found = []
    for match in pattern.finditer(text):
        index = (match.lastindex or 1) - 1
        if index not in seen:
            seen.add(index)
            found.append((cues[index].words, match.group(0)))
    return found


def regex(cues: list[Cue]) -> Callable[[str], Found]:
    """The matcher before issue 42 (the reference)."""
    ordered = _ordered(cues)
    pattern = re.compile("|".join(_alternative(key) for key, _ in ordered) or r"(?!x)x")
    kept = [cue for _, cue in ordered]
    return lambda text: _finditer(pattern, kept, text)


def automaton(cues: list[Cue]) -> Callable[[str], Found]:
    """``CueSet`` as shipped."""
    cue_set = CueSet(cues)
    return lambda text: [(m.cue.words, m.text) for m in cue_set.find(text, folded=True)]


def re2_set(cues: list[Cue], *, cold: bool = False) -> Callable[[str], Found]:
    """RE2's set matching picks the cues that occur, the regex of those alone finds them;
    ``cold``: every call compiles its regex, as a subset of cues not seen before does."""
    ordered = _ordered(cues)
    options = re2.Options()
    options.max_mem = 64 << 20
    anywhere = re2.Set.SearchSet(options)
    for key, _ in ordered:
        anywhere.Add(r"\s+".join(re2.escape(part) for part in key.lstrip("*").split()))
    anywhere.Compile()

    @functools.lru_cache(maxsize=4096)
    def compiled(indices: tuple[int, ...]) -> re.Pattern[str]:
        return re.compile("|".join(_alternative(ordered[i][0]) for i in indices))

    def find(text: str) -> Found:
        indices = tuple(sorted(anywhere.Match(text) or ()))
        if not indices:
            return []
        if cold:
            compiled.cache_clear()
            re.purge()
        return _finditer(compiled(indices), [ordered[i][1] for i in indices], text)

    return find


def re2_alt(cues: list[Cue]) -> Callable[[str], Found]:
    """One RE2 alternation, no look-behind: linear but not the same matches."""
    ordered = _ordered(cues)
    parts = []
    for key, _ in ordered:
        body = r"\s+".join(re2.escape(part) for part in key.lstrip("*").split())
        parts.append(f"({body})[\\pL\\pN_'-]*")
    options = re2.Options()
    options.max_mem = 64 << 20
    pattern = re2.compile("|".join(parts), options)
    kept = [cue for _, cue in ordered]
    return lambda text: _finditer(pattern, kept, text)  # type: ignore[arg-type]


CANDIDATES: dict[str, Callable[[list[Cue]], Callable[[str], Found]]] = {
    "regex": regex,
    "automaton": automaton,
    "re2-set": re2_set,
    "re2-set-cold": functools.partial(re2_set, cold=True),
    "re2-alt": re2_alt,
}


def mail_texts(chars: int) -> list[str]:
    """The subject and new text of every email under ``evals/``, folded, each repeated to at
    least ``chars`` characters (as bench/runtime.py pads its bodies)."""
    texts = [fold(email_text(load_email_file(p))) for p in sorted((ROOT / "evals").rglob("*.eml"))]
    return [
        text * (chars // max(len(text), 1) + 1) if len(text) < chars else text for text in texts
    ]


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeat", type=int, default=3, help="passes over the mail per candidate")
    parser.add_argument("--chars", type=int, default=0, help="repeat each text to this length")
    parser.add_argument(
        "--candidates",
        nargs="+",
        default=["regex", "automaton", "re2-set", "re2-set-cold"],
        choices=list(CANDIDATES),
        help="re2-alt logs 'DFA out of memory' on long texts",
    )
    args = parser.parse_args()
    texts = mail_texts(args.chars)
    sets = cue_sets()
    print(
        f"{len(texts)} emails (mean {sum(map(len, texts)) / len(texts):.0f} characters folded), "
        f"{len(sets)} cue sets, {sum(map(len, sets.values()))} cues "
        f"(largest {max(map(len, sets.values()))})"
    )
    reference: list[Found] = []
    per_call: dict[str, float] = {}
    for name in args.candidates:
        build = CANDIDATES[name]
        finders = [build(cues) for cues in sets.values()]
        results = [find(text) for text in texts for find in finders]  # warm (caches, compiles)
        started = time.perf_counter()
        for _ in range(args.repeat):
            for text in texts:
                for find in finders:
                    find(text)
        calls = args.repeat * len(texts) * len(finders)
        per_call[name] = (time.perf_counter() - started) / calls * 1e6
        reference = reference or results
        same = "same results" if results == reference else "DIFFERENT results"
        print(
            f"{name:10} {per_call[name]:9.1f} us per call  {per_call[name] / next(iter(per_call.values())):6.3f}x"
            f"  {same}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
