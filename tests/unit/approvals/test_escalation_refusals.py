"""Escalation notices (support, agent) through reviewer channels: a channel that refuses one
reviewer does not keep the others from being told, and the refusal is journaled, not retried."""

from __future__ import annotations

import json

from inboxflow.schema import OUTBOX
from tests.harness.support import build, run, sample

ONCALL = "oncall@brightlane.io"  # a chat room whose webhook URL variable is missing
LEAD = "lead@brightlane.io"


def test_a_refused_support_escalation_notice_leaves_the_others_notified(tmp_path, monkeypatch):
    config = tmp_path / "inboxflow.yaml"
    config.write_text(
        json.dumps(
            {
                "graphs": {"support": {"reviewers": [ONCALL, LEAD]}},
                "reviewers": {
                    ONCALL: {"channel": "webhook", "url_env": "INBOXFLOW_WEBHOOK_ONCALL"}
                },
            }
        ),
        "utf-8",
    )
    monkeypatch.setenv("INBOXFLOW_CONFIG", str(config))
    monkeypatch.setenv("INBOXFLOW_NOTIFY_DELIVERY", "live")
    runtime = build(tmp_path)
    state = run(runtime, sample("03"))
    assert state["status"] == "done" and state["act"]["status"] == "escalated"
    assert state["act"]["notified"] == [LEAD]
    assert [doc["to"] for _, doc in runtime.store.list(OUTBOX.name)] == [LEAD]
    refused = [
        doc["result"]
        for path, doc in runtime.store.list("effects")
        if "escalation_notice_" in path and doc["result"].get("error")
    ]
    assert refused == [{"to": ONCALL, "error": "webhook: INBOXFLOW_WEBHOOK_ONCALL is not set"}]
    runtime.store.close()
