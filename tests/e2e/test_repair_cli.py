"""`inboxflow retry` and `inboxflow replay --from-step` as processes on the embedded default:
a trace the model broke (a Gemini double answering nonsense) is retried once the model is
fixed; a finished trace is forked from a step, linked both ways; bad requests say why."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from inboxflow.adapters.sqlite_store import SqliteCheckpointStore
from inboxflow.dev.doubles.gemini_api import double_environment, start_gemini_double
from tests.e2e.test_cli import SAMPLES, run_cli

TRACE_ID = re.compile(r"^│ ([0-9a-f]{16}) ", re.MULTILINE)


def _trace(home: Path, trace_id: str, tmp_path: Path) -> dict[str, Any]:
    shown = run_cli("trace", trace_id, "--json", "--home", str(home), cwd=tmp_path)
    assert shown.returncode == 0, shown.stdout + shown.stderr
    return json.loads(shown.stdout)


def test_retry_after_the_cause_is_fixed_and_fork_from_a_step(tmp_path: Path) -> None:
    home = tmp_path / "home"
    broken = start_gemini_double(responder=lambda call: {"bogus": True})
    try:
        ran = run_cli(
            "run",
            "--home",
            str(home),
            str(SAMPLES / "01-pricing-inquiry.eml"),
            cwd=tmp_path,
            env=double_environment(broken),
        )
    finally:
        broken.stop()
    assert ran.returncode == 0 and "needs_review" in ran.stdout, ran.stdout + ran.stderr
    match = TRACE_ID.search(ran.stdout)
    assert match is not None, ran.stdout
    trace_id = match.group(1)
    failed = _trace(home, trace_id, tmp_path)
    assert [s["step_name"] for s in failed["steps"]] == ["__start__", "classify"]
    assert "did not match schema" in failed["steps"][1]["error"]

    refused = run_cli("replay", trace_id, "--from-step", "1", "--home", str(home), cwd=tmp_path)
    assert refused.returncode == 1
    assert "step 1 (classify) failed: fork from step 0" in refused.stdout

    # The model is fixed (here: the offline one); the failed step runs again, as step 1.
    retried = run_cli("retry", trace_id, "--home", str(home), cwd=tmp_path)
    assert retried.returncode == 0, retried.stdout + retried.stderr
    assert f"retrying step 1 (classify) of trace {trace_id}" in retried.stdout
    assert "status done" in retried.stdout
    done = _trace(home, trace_id, tmp_path)
    assert done["checkpoint"]["status"] == "done"
    names = [s["step_name"] for s in done["steps"]]
    assert names[:3] == ["__start__", "classify", "retrieve"] and names[-1] == "dispatch"
    assert done["steps"][1].get("error") is None
    store = SqliteCheckpointStore(home / "inboxflow.db")
    kept = store.list(f"traces/{trace_id}/retried")
    store.close()
    assert len(kept) == 1 and "did not match schema" in kept[0][1]["error"]
    again = run_cli("retry", trace_id, "--home", str(home), cwd=tmp_path)
    assert again.returncode == 1
    assert "is done: only a needs_review trace is retried" in again.stdout

    forked = run_cli("replay", trace_id, "--from-step", "4", "--home", str(home), cwd=tmp_path)
    assert forked.returncode == 0, forked.stdout + forked.stderr
    fork_id = forked.stdout.split("into trace ")[1].split()[0]
    assert fork_id != trace_id and "status done" in forked.stdout
    fork = _trace(home, fork_id, tmp_path)
    assert fork["checkpoint"]["forked_from"]["trace_id"] == trace_id
    assert fork["checkpoint"]["forked_from"]["step"] == 4
    assert [s["step_name"] for s in fork["steps"]] == [
        "__start__",
        "generate",
        "review",
        "dispatch",
    ]
    after_step_4 = run_cli(
        "trace", trace_id, "--at", "4", "--json", "--home", str(home), cwd=tmp_path
    )
    at_fork = run_cli("trace", fork_id, "--at", "0", "--json", "--home", str(home), cwd=tmp_path)
    assert json.loads(after_step_4.stdout) == json.loads(at_fork.stdout)
    original = _trace(home, trace_id, tmp_path)["checkpoint"]
    assert [(f["trace_id"], f["step"]) for f in original["forks"]] == [(fork_id, 4)]
    shown = run_cli("trace", trace_id, "--home", str(home), cwd=tmp_path)
    assert f"forked at step 4 into trace {fork_id}" in shown.stdout
    shown = run_cli("trace", fork_id, "--home", str(home), cwd=tmp_path)
    assert f"forked from trace {trace_id} at step 4" in shown.stdout

    for args, message in (
        (["replay", trace_id, "--from-step", "99"], f"trace {trace_id} has steps 0..7"),
        (["replay", trace_id, "--from-step", "7"], "ended the trace: fork from step 6"),
        (["replay", "nosuchtrace", "--from-step", "0"], "no trace nosuchtrace"),
        (["retry", "nosuchtrace"], "no trace nosuchtrace"),
    ):
        result = run_cli(*args, "--home", str(home), cwd=tmp_path)
        assert result.returncode == 1 and message in result.stdout, result.stdout + result.stderr


def test_dlq_on_the_embedded_default_says_where_failures_are(tmp_path: Path) -> None:
    result = run_cli("dlq", "list", "--home", str(tmp_path / "home"), cwd=tmp_path)
    assert result.returncode == 2
    assert "no dead-letter topics" in result.stderr and "inboxflow failures" in result.stderr


def test_traces_stuck_lists_a_trace_nothing_runs_and_retry_runs_it_to_the_end(
    tmp_path: Path,
) -> None:
    import time

    from inboxflow.adapters.inprocess_bus import InProcessBus
    from inboxflow.clock import FakeClock
    from inboxflow.mail.loaders import load_email_file
    from inboxflow.routing import RouteDecision
    from inboxflow.start import start_email_trace
    from tests.harness.runtimes import runtime_for

    home = tmp_path / "home"
    ran = run_cli("run", "--home", str(home), str(SAMPLES / "01-pricing-inquiry.eml"), cwd=tmp_path)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    # An hour ago a trace started whose first message was lost with its node's server.
    store = SqliteCheckpointStore(home / "inboxflow.db")
    lost = InProcessBus()
    runtime = runtime_for(home, store=store, bus=lost, clock=FakeClock(time.time() - 3600))
    email = load_email_file(SAMPLES / "03-meeting-request.eml")
    trace_id = start_email_trace(runtime, email, RouteDecision(graph="pipeline")).trace_id
    store.close()
    assert len(lost) == 1  # published, never delivered

    listed = run_cli("traces", "--stuck", "--home", str(home), cwd=tmp_path)
    assert listed.returncode == 0, listed.stdout + listed.stderr
    assert "1 stuck traces" in listed.stdout and trace_id in listed.stdout
    assert "none taken" in listed.stdout and "inboxflow retry TRACE" in listed.stdout

    retried = run_cli("retry", trace_id, "--home", str(home), cwd=tmp_path)
    assert retried.returncode == 0, retried.stdout + retried.stderr
    assert f"retrying step 1 (classify) of trace {trace_id}" in retried.stdout
    done = _trace(home, trace_id, tmp_path)
    assert done["checkpoint"]["status"] in ("done", "waiting")
    names = [s["step_name"] for s in done["steps"]]
    assert names[:2] == ["__start__", "classify"] and names.count("classify") == 1
    after = run_cli("traces", "--stuck", "--home", str(home), cwd=tmp_path)
    assert "0 stuck traces" in after.stdout
