"""Calibration per graph in the eval report (``dev/eval/report.py``): the accuracy of the cases
a graph was sure of (confidence >= 0.8) and by band, in ``--json``, on the console and in the
HTML page; a graph that reports no confidence says so."""

from __future__ import annotations

import io
from pathlib import Path

from rich.console import Console

from inboxflow.dev.eval.cases import Case
from inboxflow.dev.eval.console import print_report
from inboxflow.dev.eval.page import render_page
from inboxflow.dev.eval.report import Gate, build_report
from inboxflow.dev.eval.runner import CaseResult


def _case(case_id: str, graph: str) -> Case:
    return Case(id=case_id, mail=(Path(f"{case_id}.eml"),), expect={"graph": graph})


def _result(case_id: str, graph: str, passed: bool, confidence: float | None) -> CaseResult:
    outcome = {"graph": graph} if confidence is None else {"graph": graph, "confidence": confidence}
    result = CaseResult(case_id=case_id, graph=graph, trace_id=case_id, outcome=outcome)
    if not passed:
        result.error = "the label did not hold"
    return result


def _document():
    rows = [
        ("p1", "pipeline", True, 0.95),
        ("p2", "pipeline", False, 0.9),
        ("p3", "pipeline", False, 0.85),
        ("p4", "pipeline", True, 0.8),  # at the threshold: counted as sure
        ("p5", "pipeline", True, 0.55),
        ("s1", "support", True, 0.3),
        ("a1", "assistant", True, None),
        ("a2", "assistant", False, None),
    ]
    cases = [_case(case_id, graph) for case_id, graph, _, _ in rows]
    results = [_result(*row) for row in rows]
    assert [r.passed for r in results] == [row[2] for row in rows]
    return build_report(cases, results, Gate(), dataset="synthetic")


def test_each_graph_has_the_accuracy_of_the_cases_it_was_sure_of():
    graphs = _document()["graphs"]
    pipeline = graphs["pipeline"]["calibration"]
    assert pipeline["reported"] == 5
    assert pipeline["confident"] == {"threshold": 0.8, "cases": 4, "passed": 2, "accuracy": 0.5}
    by_band = {(b["low"], b["high"]): (b["cases"], b["accuracy"]) for b in pipeline["bands"]}
    assert by_band[(0.8, 1.0)] == (4, 0.5)
    assert by_band[(0.4, 0.6)] == (1, 1.0)
    support = graphs["support"]["calibration"]
    assert support["confident"] == {"threshold": 0.8, "cases": 0, "passed": 0, "accuracy": None}
    assert graphs["assistant"]["calibration"] == {"reported": 0}


def test_the_console_prints_calibration_per_graph():
    out = io.StringIO()
    print_report(_document(), Console(file=out, width=300, color_system=None))
    text = out.getvalue()
    assert "assistant: no confidence reported" in text
    assert "pipeline: 50.0% right of 4 case(s) at confidence >= 0.8" in text
    assert "support: - right of 0 case(s)" in text


def test_the_html_page_has_a_calibration_row_per_graph():
    page = render_page(_document())
    assert page.count("no confidence reported") == 1  # the assistant
    assert '<td>pipeline</td><td class="num">5</td>' in page
    assert "50.0%" in page
