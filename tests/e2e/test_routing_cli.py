"""Routing from the command line, as processes: ``route``, ``run --graph auto --json``,
``graphs``, ``graphs --mermaid``, a bad inboxflow.yaml, and loop protection through ``run``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from inboxflow.adapters.sqlite_store import SqliteCheckpointStore
from inboxflow.ports.checkpoint import Checkpoint
from inboxflow.schema import APPROVALS, MAILBOX_DRAFTS

INBOXFLOW = str(Path(sys.executable).parent / "inboxflow")
SAMPLES = (
    Path(__file__).resolve().parents[2]
    / "shared"
    / "inboxflow"
    / "graphs"
    / "pipeline"
    / "samples"
    / "inbox"
)
PRICING = SAMPLES / "01-pricing-inquiry.eml"
NEWSLETTER = SAMPLES / "07-newsletter-bulk.eml"
MEETING = SAMPLES / "03-meeting-request.eml"

RULES = """
routing:
  rules:
    - name: billing
      match: {subject_contains: invoice}
      route: pipeline
    - name: kestrel
      match: {sender_domain: kestrel-logistics.com}
      route: pipeline
"""

OUT_OF_OFFICE = """\
From: Sam Ortiz <sam.ortiz@kestrel-logistics.com>
To: Maya Chen <maya.chen@brightlane.io>
Subject: Re: Pricing for 40 seats
Message-ID: <ooo1@kestrel-logistics.com>
Date: Thu, 12 Nov 2026 09:12:31 +0000
Auto-Submitted: auto-replied
Content-Type: text/plain; charset=utf-8

I am out of the office until Monday. Can you send me the price for 40 seats?
"""

BOUNCE = """\
From: Mail Delivery Subsystem <mailer-daemon@googlemail.com>
To: maya.chen@brightlane.io
Subject: Delivery Status Notification (Failure)
Message-ID: <bounce1@mx.google.com>
Date: Thu, 12 Nov 2026 09:14:02 +0000
Content-Type: text/plain; charset=utf-8

Address not found. Your message to ops@kestrel-logistcs.com was not delivered.
I want a refund, this is unacceptable.
"""


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    config = tmp_path / "inboxflow.yaml"
    config.write_text(RULES)
    return {
        **{k: v for k, v in os.environ.items() if not k.startswith("INBOXFLOW_")},
        "INBOXFLOW_HOME": str(tmp_path / "home"),
        "INBOXFLOW_CONFIG": str(config),
        "COLUMNS": "220",
    }


def cli(*args: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [INBOXFLOW, *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=180
    )


def test_route_prints_the_matching_rule_and_why_earlier_rules_did_not(
    env: dict[str, str], tmp_path: Path
) -> None:
    result = cli("route", str(PRICING), str(MEETING), env=env, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    pricing, meeting = result.stdout.split(str(MEETING))
    assert "rule 'billing' did not match: subject_contains: 'invoice' not in" in pricing
    assert "→ rule 'kestrel': graph pipeline  profile -" in pricing
    assert "rule 'kestrel' did not match: sender_domain:" in meeting
    assert "→ no rule matched (default): graph pipeline" in meeting
    newsletter = cli("route", str(NEWSLETTER), env=env, cwd=tmp_path)
    assert "loop protection: not answered (Precedence: bulk" in newsletter.stdout


def test_run_auto_json_prints_one_object_per_email(env: dict[str, str], tmp_path: Path) -> None:
    result = cli(
        "run", "--graph", "auto", "--json", str(PRICING), str(NEWSLETTER), env=env, cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) == 2, result.stdout
    pricing, newsletter = (json.loads(line) for line in lines)
    assert set(pricing) >= {"trace_id", "graph", "rule", "profile", "status", "reason"}
    assert (pricing["graph"], pricing["rule"], pricing["profile"]) == ("pipeline", "kestrel", None)
    assert pricing["status"] in ("done", "waiting") and pricing["reason"] is None
    assert (newsletter["rule"], newsletter["status"]) == (None, "done")
    assert newsletter["reason"].startswith("loop protection: Precedence: bulk")
    # INBOXFLOW_HOME is honoured: the store is there, not in ./.inboxflow
    assert (tmp_path / "home" / "inboxflow.db").exists()
    assert not (tmp_path / ".inboxflow").exists()
    trace = cli("trace", pricing["trace_id"], env=env, cwd=tmp_path)
    assert trace.returncode == 0, trace.stderr
    assert "routed by rule kestrel" in trace.stdout


def test_run_with_a_named_graph_checks_the_profile(env: dict[str, str], tmp_path: Path) -> None:
    named = cli("run", "--graph", "pipeline", "--json", str(PRICING), env=env, cwd=tmp_path)
    assert named.returncode == 0, named.stderr
    assert json.loads(named.stdout)["rule"] is None
    refused = cli(
        "run", "--graph", "pipeline", "--profile", "x", str(PRICING), env=env, cwd=tmp_path
    )
    assert refused.returncode == 2
    assert refused.stderr.strip() == "error: graph 'pipeline' takes no profile (got 'x')"
    unknown = cli("run", "--graph", "nope", str(PRICING), env=env, cwd=tmp_path)
    assert (
        unknown.returncode == 2
        and "unknown graph 'nope'; graphs: agent, assistant, pipeline" in unknown.stderr
    )


def test_graphs_lists_nodes_routes_pause_kinds_and_tools(
    env: dict[str, str], tmp_path: Path
) -> None:
    result = cli("graphs", env=env, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "pipeline" in out and "takes a profile: no" in out
    assert "pause kind approve_draft" in out and "choices approve, reject" in out
    assert "tools: check_calendar, create_draft, get_contact" in out
    for node, routes in (("classify", "retrieve, END"), ("decide", "execute_tools, generate")):
        assert any(node in line and routes in line for line in out.splitlines()), out
    assert "gmail; pauses" in out


def test_graphs_mermaid_draws_the_pipeline(env: dict[str, str], tmp_path: Path) -> None:
    result = cli("graphs", "--mermaid", "pipeline", env=env, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "flowchart TD"
    for edge in (
        "__start__ --> n_classify",
        "n_classify --> n_retrieve",
        "n_classify --> __end__",
        "n_review --> n_dispatch",
        "n_dispatch --> __end__",
    ):
        assert f"    {edge}" in lines
    assert any(line.strip().startswith("n_review{{") for line in lines)  # pauses: a hexagon
    unknown = cli("graphs", "--mermaid", "nope", env=env, cwd=tmp_path)
    assert unknown.returncode == 2 and "unknown graph 'nope'" in unknown.stderr


@pytest.mark.parametrize("command", ["run", "route", "demo"])
def test_a_bad_config_is_one_line_naming_the_rule(
    env: dict[str, str], tmp_path: Path, command: str
) -> None:
    Path(env["INBOXFLOW_CONFIG"]).write_text(
        RULES + "    - name: vip\n      match: {all: true}\n      route: nope\n"
    )
    args = [command] if command == "demo" else [command, str(PRICING)]
    result = cli(*args, env=env, cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        f"error: {env['INBOXFLOW_CONFIG']}: rule 'vip' (routing.rules[2]): unknown graph 'nope'; "
        "graphs: agent, assistant, pipeline, planner, support"
    ]
    assert "Traceback" not in result.stdout + result.stderr


def test_a_config_not_in_utf8_or_too_large_is_one_line(env: dict[str, str], tmp_path: Path) -> None:
    config = Path(env["INBOXFLOW_CONFIG"])
    config.write_bytes(RULES.replace("billing", "caf\u00e9").encode("latin-1"))
    result = cli("route", str(PRICING), env=env, cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        f"error: {config}: the config is not UTF-8 text (byte 0xe9 at offset 34): save it as UTF-8"
    ]
    config.write_text(RULES + "#" * 1_000_000 + "\n")
    result = cli("route", str(PRICING), env=env, cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        f"error: {config}: the config is larger than 1,000,000 bytes, the most accepted"
    ]


def test_auto_replies_and_bounces_through_run_end_with_the_reason_and_no_draft(
    env: dict[str, str], tmp_path: Path
) -> None:
    (tmp_path / "ooo.eml").write_text(OUT_OF_OFFICE)
    (tmp_path / "bounce.eml").write_text(BOUNCE)
    result = cli("run", "ooo.eml", "bounce.eml", env=env, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.count("loop protection:") == 2, result.stdout
    store = SqliteCheckpointStore(tmp_path / "home" / "inboxflow.db")
    traces = [Checkpoint.model_validate(doc) for _, doc in store.list("traces")]
    assert len(traces) == 2
    reasons = sorted(t.route.blocked or "" for t in traces if t.route is not None)
    assert reasons[0].startswith("loop protection: Auto-Submitted: auto-replied")
    assert reasons[1].startswith("loop protection: automated sender mailer-daemon@googlemail.com")
    for checkpoint in traces:
        assert checkpoint.status == "done"
        assert checkpoint.state.get("draft") is None
        assert checkpoint.state.get("classification") is None  # no node ran
        assert [log.step_name for log in store.step_logs(checkpoint.trace_id)] == ["__start__"]
        trace = cli("trace", checkpoint.trace_id, env=env, cwd=tmp_path)
        assert "not answered, loop protection:" in trace.stdout
    assert store.list(APPROVALS.name) == [] and store.list(MAILBOX_DRAFTS.name) == []
    assert store.list("outbox") == []


AUTO_FORWARDED = """\
Delivered-To: lekarna@dostupnost-leku.cz
Received: by 2002:a05:6a10:8e0b:b0:5ab::1 with SMTP id t11csp123; Thu, 14 Jan 2027 03:01:00 -0800
X-Forwarded-To: lekarna@dostupnost-leku.cz
X-Forwarded-For: info@dostupnost-leku.cz lekarna@dostupnost-leku.cz
ARC-Seal: i=1; a=rsa-sha256; t=1736850000; cv=none; d=google.com; s=arc-20240605;
 b=Zm9yd2FyZGVkIGJ5IEdtYWls
ARC-Authentication-Results: i=1; mx.google.com; dkim=pass header.i=@seznam.cz;
 spf=pass smtp.mailfrom=jana.novakova@seznam.cz; dmarc=pass header.from=seznam.cz
Return-Path: <info+caf_=lekarna=dostupnost-leku.cz@dostupnost-leku.cz>
Authentication-Results: mx.google.com; arc=pass (i=1);
 spf=pass (google.com: domain of info+caf_=lekarna=dostupnost-leku.cz@dostupnost-leku.cz
 designates 209.85.220.41 as permitted sender)
 smtp.mailfrom="info+caf_=lekarna=dostupnost-leku.cz@dostupnost-leku.cz";
 dkim=pass header.i=@seznam.cz; dmarc=pass (p=NONE dis=NONE) header.from=seznam.cz
From: Jana Novakova <jana.novakova@seznam.cz>
To: info@dostupnost-leku.cz
Subject: Otekle kotniky
Message-ID: <q1@seznam.cz>
Date: Thu, 14 Jan 2027 12:00:00 +0100
Content-Type: text/plain; charset=utf-8

Since the new Amlodipine my ankles are swollen. Should I stop taking it?
"""


def test_route_names_the_signal_of_a_gmail_auto_forward(
    env: dict[str, str], tmp_path: Path
) -> None:
    Path(env["INBOXFLOW_CONFIG"]).write_text(
        RULES + "    - name: pharmacy\n      match: {forwarded_from: info@dostupnost-leku.cz}\n"
        "      route: pipeline\n"
    )
    mail = tmp_path / "auto-forwarded.eml"
    mail.write_text(AUTO_FORWARDED)
    result = cli("route", str(mail), env=env, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "→ rule 'pharmacy': graph pipeline" in result.stdout
    assert "forwarded_from info@dostupnost-leku.cz via X-Forwarded-For" in result.stdout
