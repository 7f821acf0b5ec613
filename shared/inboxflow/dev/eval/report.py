"""The report of an evaluation as one JSON-able document (``inboxflow eval --json``).

It holds, per graph and per field, how many labels held; a confusion table per
categorical field; accuracy by confidence band; every failing case with what
differed; the safety violations apart; the judge's scores; the changes against a
baseline (a previous ``--json``); and the exit decision with its reasons.

Accuracy of a graph, and of the whole set, is the share of its cases that pass
(every label holds, no ``never`` broken, no error); a field's accuracy is the
share of its labels that hold.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from .cases import Case
from .checks import FieldCheck
from .judge import PASS_SCORE
from .runner import CaseResult

VERSION = 1
BANDS = 5
"""Confidence bands of the calibration: [0, 0.2), [0.2, 0.4) ... [0.8, 1.0]."""
CONFIDENT = 0.8
"""Confidence at or above which a graph says it is sure: the accuracy of those cases is the
first figure of its calibration (a confident graph that is often wrong is not honest)."""
EPSILON = 1e-9


@dataclass(frozen=True)
class Gate:
    """What makes the command exit 1.

    Attributes:
        min_accuracy: the share of cases that must pass (None: no minimum).
        baseline: a previous report (its document), or None.
        baseline_name: where it was read from (shown in the report).
    """

    min_accuracy: float | None = None
    baseline: Mapping[str, Any] | None = None
    baseline_name: str | None = None


def build_report(
    cases: Sequence[Case],
    results: Sequence[CaseResult],
    gate: Gate,
    dataset: str = "",
    model: str = "offline",
) -> dict[str, Any]:
    """The report document of ``results`` (in the order of ``cases``)."""
    by_id = {case.id: case for case in cases}
    graph_of = {r.case_id: _label_graph(by_id[r.case_id], r) for r in results}
    graphs: dict[str, dict[str, Any]] = {}
    for result in results:
        entry = graphs.setdefault(graph_of[result.case_id], {"cases": 0, "passed": 0, "fields": {}})
        entry["cases"] += 1
        entry["passed"] += result.passed
        for item in result.checks:
            field = entry["fields"].setdefault(item.field, {"checked": 0, "correct": 0})
            field["checked"] += 1
            field["correct"] += item.ok
    for name, entry in graphs.items():
        entry["accuracy"] = _share(entry["passed"], entry["cases"])
        entry["calibration"] = _graph_calibration(
            [r for r in results if graph_of[r.case_id] == name]
        )
        for field in entry["fields"].values():
            field["accuracy"] = _share(field["correct"], field["checked"])
    passed = sum(r.passed for r in results)
    violations = _violations(by_id, results, gate.baseline)
    document: dict[str, Any] = {
        "version": VERSION,
        "dataset": dataset,
        "model": model,
        "cases": len(results),
        "passed": passed,
        "accuracy": _share(passed, len(results)),
        "graphs": dict(sorted(graphs.items())),
        "confusion": _confusion(results, graph_of),
        "calibration": _calibration(results),
        "failures": [
            _failure(by_id[r.case_id], r, graph_of[r.case_id]) for r in results if not r.passed
        ],
        "safety": {
            "violations": violations,
            "count": len(violations),
            "new": sum(not v["known"] for v in violations),
        },
        "judge": _judge(results),
        "results": [_result(by_id[r.case_id], r, graph_of[r.case_id]) for r in results],
    }
    document["baseline"] = _against(document, gate) if gate.baseline is not None else None
    document["exit"] = _exit(document, gate)
    return document


def _share(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


def _label_graph(case: Case, result: CaseResult) -> str:
    """The graph a case is counted under: its label's (the first allowed), else its trace's."""
    wanted = case.expect.get("graph")
    if isinstance(wanted, list) and wanted:
        wanted = wanted[0]
    if isinstance(wanted, str):
        return wanted
    return result.graph or "(no trace)"


def _categorical(item: FieldCheck) -> bool:
    """A label that names one category (a string or a boolean) for a one-value field."""
    simple = (str, bool)
    return isinstance(item.expected, simple) and (
        item.actual is None or isinstance(item.actual, simple)
    )


def _confusion(
    results: Sequence[CaseResult], graph_of: Mapping[str, str]
) -> dict[str, dict[str, Any]]:
    """Per graph, per categorical field: ``{labels, counts: {expected: {actual: n}}}``."""
    tables: dict[str, dict[str, dict[str, Counter[str]]]] = defaultdict(
        lambda: defaultdict(lambda: defaultdict(Counter))
    )
    for result in results:
        for item in result.checks:
            if _categorical(item):
                table = tables[graph_of[result.case_id]][item.field]
                table[_cell(item.expected)][_cell(item.actual)] += 1
    out: dict[str, dict[str, Any]] = {}
    for graph, fields in sorted(tables.items()):
        out[graph] = {}
        for name, rows in sorted(fields.items()):
            labels = sorted(set(rows) | {actual for row in rows.values() for actual in row})
            out[graph][name] = {
                "labels": labels,
                "counts": {expected: dict(row) for expected, row in sorted(rows.items())},
            }
    return out


def _cell(value: Any) -> str:
    if value is None:
        return "(none)"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value).strip().casefold()


def _confidence(result: CaseResult) -> float | None:
    """The outcome's ``confidence``, when the graph reports one."""
    confidence = result.outcome.get("confidence")
    if not isinstance(confidence, int | float) or isinstance(confidence, bool):
        return None
    return float(confidence)


def _calibration(results: Sequence[CaseResult]) -> list[dict[str, Any]]:
    """Accuracy of the cases by the outcome's ``confidence`` band (graphs that report one)."""
    bands: list[dict[str, Any]] = [
        {"low": i / BANDS, "high": (i + 1) / BANDS, "cases": 0, "passed": 0} for i in range(BANDS)
    ]
    for result in results:
        confidence = _confidence(result)
        if confidence is None:
            continue
        band = bands[min(BANDS - 1, max(0, int(confidence * BANDS)))]
        band["cases"] += 1
        band["passed"] += result.passed
    for band in bands:
        band["accuracy"] = _share(band["passed"], band["cases"])
    return bands


def _graph_calibration(results: Sequence[CaseResult]) -> dict[str, Any]:
    """One graph's calibration: how many of its cases report a confidence, the accuracy of
    those at or above ``CONFIDENT``, and the accuracy by band.

    ``{"reported": 0}`` when none does: nothing to measure, and the report says so.
    """
    scored = [(r, c) for r in results if (c := _confidence(r)) is not None]
    if not scored:
        return {"reported": 0}
    sure = [r for r, c in scored if c + EPSILON >= CONFIDENT]
    passed = sum(r.passed for r in sure)
    return {
        "reported": len(scored),
        "confident": {
            "threshold": CONFIDENT,
            "cases": len(sure),
            "passed": passed,
            "accuracy": _share(passed, len(sure)),
        },
        "bands": _calibration([r for r, _ in scored]),
    }


def _differences(result: CaseResult) -> list[dict[str, Any]]:
    return [
        {"field": c.field, "expected": c.expected, "actual": c.actual}
        for c in result.checks
        if not c.ok
    ]


def _failure(case: Case, result: CaseResult, graph: str) -> dict[str, Any]:
    return {
        "id": case.id,
        "graph": graph,
        "trace_id": result.trace_id,
        "differences": _differences(result),
        "never": result.never_broken,
        "error": result.error,
        "notes": [note for note in result.notes if not note.startswith("Traceback")],
        "tags": list(case.tags),
        "note": case.note,
        "mail": [path.name for path in case.mail],
        "steps": result.steps,
    }


def _result(case: Case, result: CaseResult, graph: str) -> dict[str, Any]:
    return {
        "id": case.id,
        "graph": graph,
        "passed": result.passed,
        "trace_id": result.trace_id,
        "actions": result.actions,
        "outcome": result.outcome,
        "checks": [asdict(check) for check in result.checks],
        "never_broken": result.never_broken,
        "judge": result.judge,
        "seconds": result.seconds,
    }


def _violations(
    cases: Mapping[str, Case], results: Sequence[CaseResult], baseline: Mapping[str, Any] | None
) -> list[dict[str, Any]]:
    """A ``never`` broken, or a ``safety`` case failing; ``known`` when the baseline lists it."""
    known = {
        (str(v.get("id")), str(v.get("rule")))
        for v in ((baseline or {}).get("safety") or {}).get("violations") or []
    }
    found = []
    for result in results:
        case = cases[result.case_id]
        rules = [(f"never:{item}", f"{item} happened") for item in result.never_broken]
        if case.safety and not result.passed:
            what = "; ".join(
                f"{d['field']}: expected {d['expected']!r}, got {d['actual']!r}"
                for d in _differences(result)
            )
            rules.append(("safety", what or result.error or "the safety case failed"))
        for rule, detail in rules:
            found.append(
                {
                    "id": case.id,
                    "rule": rule,
                    "detail": detail,
                    "trace_id": result.trace_id,
                    "known": (case.id, rule) in known,
                }
            )
    return found


def _judge(results: Sequence[CaseResult]) -> dict[str, Any] | None:
    judged = [r for r in results if r.judge is not None]
    if not judged:
        return None
    scores = [float(r.judge["score"]) for r in judged if r.judge and r.judge["score"] is not None]
    return {
        "judged": len(judged),
        "scored": len(scores),
        "mean_score": round(sum(scores) / len(scores), 4) if scores else None,
        "pass_score": PASS_SCORE,
        "passed": sum(score >= PASS_SCORE for score in scores),
        "scores": {r.case_id: r.judge for r in judged},
    }


def _against(document: Mapping[str, Any], gate: Gate) -> dict[str, Any]:
    """Field by field against the baseline: what got worse (a regression), better, or moved."""
    before = gate.baseline or {}
    changes, regressions = [], []
    for graph, entry in document["graphs"].items():
        old_graph = (before.get("graphs") or {}).get(graph)
        if not old_graph:
            continue
        for name, field in entry["fields"].items():
            old = (old_graph.get("fields") or {}).get(name)
            if not old or old.get("accuracy") is None or field["accuracy"] is None:
                continue
            delta = round(field["accuracy"] - float(old["accuracy"]), 4)
            if abs(delta) <= EPSILON:
                continue
            change = {
                "graph": graph,
                "field": name,
                "before": old["accuracy"],
                "after": field["accuracy"],
                "delta": delta,
            }
            changes.append(change)
            if delta < 0:
                regressions.append(change)
    old_failing = {str(f.get("id")) for f in before.get("failures") or []}
    old_ids = {str(r.get("id")) for r in before.get("results") or []} or None
    failing = {f["id"] for f in document["failures"]}
    ids = {r["id"] for r in document["results"]}
    return {
        "file": gate.baseline_name,
        "accuracy_before": before.get("accuracy"),
        "accuracy_after": document["accuracy"],
        "changes": changes,
        "regressions": regressions,
        "fixed": sorted((old_failing & ids) - failing),
        "broken": sorted(i for i in failing - old_failing if old_ids is None or i in old_ids),
        "new_cases": sorted(ids - old_ids) if old_ids is not None else [],
    }


def _exit(document: Mapping[str, Any], gate: Gate) -> dict[str, Any]:
    reasons = []
    safety = document["safety"]
    fatal = [v for v in safety["violations"] if not v["known"]]
    if fatal:
        reasons.append(
            f"{len(fatal)} safety violation(s)"
            + (" not in the baseline" if gate.baseline is not None else "")
            + ": "
            + ", ".join(f"{v['id']} ({v['rule']})" for v in fatal)
        )
    accuracy = document["accuracy"]
    if gate.min_accuracy is not None and (accuracy or 0.0) + EPSILON < gate.min_accuracy:
        reasons.append(f"accuracy {accuracy} is under --min-accuracy {gate.min_accuracy}")
    baseline = document.get("baseline")
    if baseline and baseline["regressions"]:
        reasons.append(
            "worse than the baseline: "
            + ", ".join(
                f"{r['graph']}.{r['field']} {r['before']} -> {r['after']}"
                for r in baseline["regressions"]
            )
        )
    return {"code": 1 if reasons else 0, "reasons": reasons}
