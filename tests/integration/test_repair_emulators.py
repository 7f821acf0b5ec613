"""`inboxflow dlq` and `inboxflow replay --from-step` as processes against the emulators,
with the pipeline's nodes running as separate function processes: dead letters are
listed without being consumed, replayed (twice over: one outcome), what is not an
envelope stays; a trace is forked from a step and the node functions run the fork."""

from __future__ import annotations

import dataclasses
import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from inboxflow.adapters.inprocess_bus import InProcessBus
from inboxflow.adapters.pubsub_bus import PubSubAdmin
from inboxflow.dev.cli.local import sample_inbox
from inboxflow.envelope import Envelope
from inboxflow.mail import load_email_file
from inboxflow.naming import dead_letter_topic_name, topic_name
from inboxflow.workspace import seed_workspace
from tests.e2e.test_cli import run_cli
from tests.harness.emulated_cloud import graph_functions

pytestmark = [pytest.mark.emulator, pytest.mark.slow]

CLASSIFY_DLQ_SUB = f"{dead_letter_topic_name('pipeline', 'classify')}-sub"


def _sample(prefix: str) -> dict[str, Any]:
    path = next(p for p in sample_inbox() if p.name.startswith(prefix))
    return load_email_file(path).model_dump(mode="json")


def _until(check: Any, what: str, timeout_s: float = 90.0) -> Any:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.5)
    raise AssertionError(f"timed out waiting for {what}")


def _listed(tmp_path: Path) -> list[dict[str, Any]]:
    result = run_cli("dlq", "list", "--json", "-s", CLASSIFY_DLQ_SUB, cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    return [json.loads(line) for line in result.stdout.splitlines()]


def test_dlq_list_show_replay_and_fork_as_processes(
    tmp_path: Path, firestore_emulator: Any, pubsub_emulator: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    with graph_functions("pipeline", firestore_emulator, pubsub_emulator, monkeypatch) as pair:
        _, runtime = pair
        assert os.environ["INBOXFLOW_BUS"] == "pubsub"  # what the CLI processes read
        seed_workspace(runtime.store, runtime.clock.now())
        # A trace whose first envelope never reached classify: Pub/Sub gave up on it
        # (an outage, a bug since fixed) and forwarded it, twice, to the dead-letter topic.
        parked = dataclasses.replace(runtime, ports=runtime.ports.replace(bus=InProcessBus()))
        trace_id = parked.start("pipeline", {"email": _sample("08-")})
        checkpoint = runtime.store.get_trace(trace_id)
        assert checkpoint is not None and checkpoint.status == "running"
        envelope = Envelope.model_validate(checkpoint.next[0])
        admin = PubSubAdmin(os.environ["GOOGLE_CLOUD_PROJECT"])
        source = f"projects/{admin.project}/subscriptions/inboxflow-pipeline-classify-push"
        for _ in range(2):
            admin.publisher.publish(
                admin.topic_path(dead_letter_topic_name("pipeline", "classify")),
                envelope.to_bytes(),
                **envelope.attributes(),
                CloudPubSubDeadLetterSourceSubscription=source,
                CloudPubSubDeadLetterSourceDeliveryCount="5",
            ).result(timeout=30)
        # Something that is no envelope: the classify function dead-letters it itself.
        admin.publisher.publish(
            admin.topic_path(topic_name("pipeline", "classify")), b"not json"
        ).result(timeout=30)
        admin.close()

        letters = _until(
            lambda: (found := _listed(tmp_path)) and len(found) == 3 and found,
            "three dead letters",
        )
        assert len(_listed(tmp_path)) == 3, "listing consumes nothing"
        ours = [m for m in letters if m["trace_id"] == trace_id]
        assert len(ours) == 2 and {m["step"] for m in ours} == {1}
        assert "after 5 deliveries" in ours[0]["reason"]
        garbage = next(m for m in letters if m["trace_id"] is None)
        assert "not JSON" in garbage["reason"]
        table = run_cli("dlq", "list", cwd=tmp_path, env={"COLUMNS": "250"})
        assert table.returncode == 0 and "3 dead-lettered message(s)" in table.stdout
        assert f"{trace_id} classify#1" in table.stdout
        shown = run_cli("dlq", "show", ours[0]["message_id"], cwd=tmp_path)
        assert shown.returncode == 0, shown.stdout + shown.stderr
        assert json.loads(shown.stdout)["body"]["trace_id"] == trace_id
        missing = run_cli("dlq", "show", "no-such-id", "-s", CLASSIFY_DLQ_SUB, cwd=tmp_path)
        assert missing.returncode == 1 and "no dead-lettered message no-such-id" in missing.stderr
        unknown = run_cli("dlq", "list", "-s", "inboxflow-nope", cwd=tmp_path)
        assert unknown.returncode == 2 and "not a dead-letter subscription" in unknown.stderr

        replayed = run_cli("dlq", "replay", "-s", CLASSIFY_DLQ_SUB, cwd=tmp_path)
        assert replayed.returncode == 0, replayed.stdout + replayed.stderr
        assert "2 message(s) replayed, 1 left" in replayed.stdout
        assert f"left {garbage['message_id']}" in replayed.stdout
        done = _until(
            lambda: (cp := runtime.store.get_trace(trace_id)) and cp.status != "running" and cp,
            "the replayed trace to finish",
        )
        assert done.status == "done"
        time.sleep(2)  # the second copy is delivered too, and dropped as a duplicate
        names = [e.step_name for e in runtime.store.step_logs(trace_id)]
        assert names == ["__start__", "classify"]
        remaining = _listed(tmp_path)
        assert [m["message_id"] for m in remaining] == [garbage["message_id"]]

        forked = run_cli("replay", trace_id, "--from-step", "0", cwd=tmp_path)
        assert forked.returncode == 0, forked.stdout + forked.stderr
        fork_id = forked.stdout.split("into trace ")[1].split()[0]
        assert "status done" in forked.stdout
        fork = runtime.store.get_trace(fork_id)
        assert fork is not None and fork.forked_from is not None
        assert (fork.forked_from.trace_id, fork.forked_from.step) == (trace_id, 0)
        assert [e.step_name for e in runtime.store.step_logs(fork_id)] == ["__start__", "classify"]
        ran_by = {
            t: runtime.store.step_logs(t)[1].worker.rsplit(":", 1)[0]  # type: ignore[union-attr]
            for t in (trace_id, fork_id)
        }
        assert ran_by[trace_id] == ran_by[fork_id], "the classify function ran both"
        assert ran_by[fork_id].split(":")[1] != str(os.getpid())
        original = runtime.store.get_trace(trace_id)
        assert original is not None and [f.trace_id for f in original.forks] == [fork_id]


def test_a_stuck_trace_is_listed_and_retry_has_the_node_functions_run_it(
    tmp_path: Path, firestore_emulator: Any, pubsub_emulator: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from inboxflow.clock import FakeClock

    with graph_functions("pipeline", firestore_emulator, pubsub_emulator, monkeypatch) as pair:
        _, runtime = pair
        seed_workspace(runtime.store, runtime.clock.now())
        # An hour ago a trace started whose first message was lost with its node's server.
        an_hour_ago = FakeClock(time.time() - 3600)
        lost = dataclasses.replace(
            runtime, ports=runtime.ports.replace(bus=InProcessBus(), clock=an_hour_ago)
        )
        trace_id = lost.start("pipeline", {"email": _sample("08-")})

        listed = run_cli("traces", "--stuck", cwd=tmp_path, env={"COLUMNS": "250"})
        assert listed.returncode == 0, listed.stdout + listed.stderr
        assert "1 stuck traces" in listed.stdout and trace_id in listed.stdout
        retried = run_cli("retry", trace_id, cwd=tmp_path)
        assert retried.returncode == 0, retried.stdout + retried.stderr
        assert f"retrying step 1 (classify) of trace {trace_id}" in retried.stdout
        assert "status done" in retried.stdout  # the classify function ran it
        names = [e.step_name for e in runtime.store.step_logs(trace_id)]
        assert names == ["__start__", "classify"]
        after = run_cli("traces", "--stuck", cwd=tmp_path)
        assert "0 stuck traces" in after.stdout
