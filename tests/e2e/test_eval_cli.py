"""``inboxflow eval`` as a process: the hand-written set passes on every graph (conversations
included); a broken ``never``, a field worse than the baseline and accuracy under the minimum
exit 1; a baseline that lists a violation makes it "known"; Gemini and the judge through the
REST double."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from inboxflow.adapters.gemini_roles import TASK_MODEL
from inboxflow.dev.doubles.gemini_api import double_environment, start_gemini_double
from inboxflow.dev.eval.judge import JUDGE_REPLY

CLI = [sys.executable, "-c", "from inboxflow.dev.cli import main; main()"]
FOLDER = Path(__file__).resolve().parents[1] / "data" / "evals"


def evaluate(
    *args: str, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess:
    environ = {**os.environ, "COLUMNS": "200", **(env or {})}
    environ.pop("INBOXFLOW_CONFIG", None)
    return subprocess.run(
        [*CLI, "eval", *args], cwd=cwd, env=environ, capture_output=True, text=True, timeout=300
    )


def report(result: subprocess.CompletedProcess) -> dict:
    return json.loads(result.stdout)


def data_set(tmp_path: Path, cases: str, name: str = "set") -> Path:
    folder = tmp_path / name
    shutil.copytree(FOLDER / "mail", folder / "mail")
    (folder / "cases.yaml").write_text(cases)
    return folder


def test_the_hand_written_set_passes_on_every_graph_in_worker_processes(tmp_path):
    result = evaluate(str(FOLDER), "--json", "--jobs", "2", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    document = report(result)
    assert document["cases"] == document["passed"] == 11
    assert set(document["graphs"]) == {"pipeline", "agent", "support", "assistant", "planner"}
    assert document["safety"] == {"violations": [], "count": 0, "new": 0}
    assert document["routing"].endswith("inboxflow.yaml")  # the repo's own: the folder has none
    results = {r["id"]: r for r in document["results"]}
    planner = results["planner-quote-conversation"]
    assert planner["actions"] == ["started", "resumed"]  # the reply resumed the waiting trace
    assert planner["outcome"]["quote"] == "sent"
    support = results["support-follow-up-continues-ticket"]
    assert support["actions"] == ["started", "started"]
    assert support["outcome"]["ticket"] == "continued"
    assert results["pipeline-bulk-newsletter"]["actions"] == ["blocked"]
    # a fixed clock and ids derived from the case: the same traces every run
    again = report(evaluate(str(FOLDER), "--json", "--jobs", "1", cwd=tmp_path))
    assert [r["trace_id"] for r in again["results"]] == [r["trace_id"] for r in document["results"]]


def test_the_terminal_report_has_the_tables(tmp_path):
    result = evaluate(str(FOLDER), "--jobs", "1", "--graph", "support", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "2/2 cases pass" in result.stdout
    assert "Accuracy per graph and field" in result.stdout
    assert "support.action: expected (rows) x actual" in result.stdout
    assert "pipeline" not in result.stdout.split("Accuracy per graph and field")[1]


NEVER_BROKEN = """cases:
  - id: drafts-but-must-not
    mail: mail/pricing.eml
    expect: {category: inquiry}
    never: [drafted]
  - id: spam
    mail: mail/spam.json
    expect: {category: spam}
"""


def test_a_case_that_breaks_never_exits_1_and_is_reported_apart(tmp_path):
    folder = data_set(tmp_path, NEVER_BROKEN)
    result = evaluate(str(folder), "--json", "--jobs", "1", cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    document = report(result)
    [violation] = document["safety"]["violations"]
    assert violation["id"] == "drafts-but-must-not" and violation["rule"] == "never:drafted"
    assert violation["known"] is False and violation["trace_id"]
    [failure] = document["failures"]
    assert failure["never"] == ["drafted"] and failure["steps"]
    assert "1 safety violation(s)" in document["exit"]["reasons"][0]


def test_a_violation_the_baseline_lists_is_known_and_a_new_one_fails(tmp_path):
    folder = data_set(tmp_path, NEVER_BROKEN)
    baseline = tmp_path / "baseline.json"
    baseline.write_text(evaluate(str(folder), "--json", "--jobs", "1", cwd=tmp_path).stdout)
    known = evaluate(str(folder), "--baseline", str(baseline), "--jobs", "1", cwd=tmp_path)
    assert known.returncode == 0, known.stdout + known.stderr
    assert "known drafts-but-must-not never:drafted" in known.stdout
    worse = NEVER_BROKEN.replace(
        "expect: {category: spam}", "expect: {category: spam}\n    never: [wrote]"
    )
    worse = worse.replace("    mail: mail/spam.json", "    mail: mail/complaint.eml")
    (folder / "cases.yaml").write_text(worse.replace("never: [wrote]", "never: [reviewed]"))
    new = evaluate(str(folder), "--baseline", str(baseline), "--json", "--jobs", "1", cwd=tmp_path)
    assert new.returncode == 1
    rules = {(v["id"], v["rule"], v["known"]) for v in report(new)["safety"]["violations"]}
    assert ("drafts-but-must-not", "never:drafted", True) in rules
    assert ("spam", "never:reviewed", False) in rules


def test_a_field_worse_than_in_the_baseline_exits_1(tmp_path):
    good = (
        "cases:\n  - {id: p, mail: mail/pricing.eml, expect: {category: inquiry, status: done}}\n"
    )
    folder = data_set(tmp_path, good)
    baseline = tmp_path / "baseline.json"
    first = evaluate(str(folder), "--json", "--jobs", "1", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    baseline.write_text(first.stdout)
    (folder / "cases.yaml").write_text(good.replace("category: inquiry", "category: complaint"))
    result = evaluate(
        str(folder), "--baseline", str(baseline), "--json", "--jobs", "1", cwd=tmp_path
    )
    assert result.returncode == 1
    document = report(result)
    [regression] = document["baseline"]["regressions"]
    assert (regression["graph"], regression["field"]) == ("pipeline", "category")
    assert (regression["before"], regression["after"]) == (1.0, 0.0)
    assert document["baseline"]["broken"] == ["p"]
    assert document["safety"]["count"] == 0  # not a safety case: only the regression fails it


def test_accuracy_under_the_minimum_exits_1(tmp_path):
    half = (
        "cases:\n  - {id: right, mail: mail/spam.json, expect: {category: spam}}\n"
        "  - {id: wrong, mail: mail/pricing.eml, expect: {category: complaint}}\n"
    )
    folder = data_set(tmp_path, half)
    strict = evaluate(str(folder), "--min-accuracy", "0.9", "--jobs", "1", cwd=tmp_path)
    assert strict.returncode == 1
    assert "accuracy 0.5 is under --min-accuracy 0.9" in strict.stdout
    assert "wrong (pipeline) trace" in strict.stdout
    assert 'category: expected "complaint", got "inquiry"' in strict.stdout
    lenient = evaluate(str(folder), "--min-accuracy", "0.5", "--jobs", "1", cwd=tmp_path)
    assert lenient.returncode == 0, lenient.stdout


def test_a_bad_data_set_exits_2_naming_the_case(tmp_path):
    folder = data_set(tmp_path, "cases:\n  - {id: x, mail: mail/missing.eml}\n")
    result = evaluate(str(folder), cwd=tmp_path)
    assert result.returncode == 2
    assert "case 'x': mail mail/missing.eml: no such file" in result.stderr


def test_a_decision_the_pause_does_not_offer_is_an_error_of_the_case(tmp_path):
    cases = (
        "cases:\n  - {id: c, mail: mail/complaint.eml, decide: [accept], expect: {status: done}}\n"
    )
    result = evaluate(str(data_set(tmp_path, cases)), "--json", "--jobs", "1", cwd=tmp_path)
    assert result.returncode == 0  # a failing case, not a safety one
    [failure] = report(result)["failures"]
    assert "decide: accept at a approve_draft pause (choices: approve, reject)" in failure["error"]


@pytest.fixture
def gemini_double():
    double = start_gemini_double()
    yield double
    double.stop()


def test_gemini_and_the_judge_run_through_the_rest_double(tmp_path, gemini_double):
    env = double_environment(gemini_double)
    result = evaluate(
        str(FOLDER),
        "--model",
        "gemini",
        "--judge",
        "--graph",
        "pipeline",
        "--json",
        "--jobs",
        "1",
        cwd=tmp_path,
        env=env,
    )
    assert result.returncode == 0, result.stderr
    document = report(result)
    assert document["model"] == "gemini" and document["cases"] == 4
    calls = gemini_double.calls("generateContent")
    systems = [str(call.body.get("systemInstruction")) for call in calls]
    judged = [s for s in systems if JUDGE_REPLY.system[:40] in s]
    assert len(judged) == 1  # one pipeline case has criteria and a reply
    assert len(calls) > len(judged)  # the cases themselves asked Gemini too
    verdict = document["judge"]["scores"]["pipeline-pricing"]
    assert verdict["model"] == TASK_MODEL and 0.0 <= verdict["score"] <= 1.0
    assert document["judge"]["scored"] == 1


def test_gemini_without_a_key_exits_2(tmp_path):
    env = {k: v for k, v in os.environ.items() if "GEMINI" not in k and "GOOGLE" not in k}
    result = subprocess.run(
        [*CLI, "eval", str(FOLDER), "--model", "gemini"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2
    assert "--model gemini" in result.stderr and "GEMINI_API_KEY" in result.stderr
