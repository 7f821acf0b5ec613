"""The support graph from the command line, as a process: ``inboxflow run --graph support``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from inboxflow.adapters.sqlite_store import SqliteCheckpointStore
from inboxflow.graphs.support.tickets import TicketStore
from tests.harness.support import SAMPLES

CLI = [sys.executable, "-c", "from inboxflow.dev.cli import main; main()"]


def cli(*args: str, home: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "COLUMNS": "200", "INBOXFLOW_HOME": str(home)}
    env.pop("INBOXFLOW_CONFIG", None)
    return subprocess.run(
        [*CLI, *args], cwd=home, env=env, capture_output=True, text=True, timeout=180
    )


def test_run_the_sample_support_inbox_through_the_support_graph(tmp_path):
    result = cli("run", "--graph", "support", "--json", *map(str, SAMPLES), home=tmp_path)
    assert result.returncode == 0, result.stderr
    rows = {Path(r["file"]).name[:2]: r for r in map(json.loads, result.stdout.splitlines())}
    assert {r["graph"] for r in rows.values()} == {"support"}
    assert {name: r["status"] for name, r in rows.items()} == {
        "01": "done",  # free how-to: answered
        "02": "waiting",  # Spanish, offline: a reviewer checks the reply
        "03": "done",  # enterprise outage: escalated
        "04": "done",  # security report: escalated
        "05": "done",  # pro sync failures: in the technical queue
        "06": "done",  # its follow-up: same ticket
        "07": "waiting",  # Thai, offline: a reviewer checks the reply
    }
    store = SqliteCheckpointStore(next(tmp_path.rglob("*.db")))
    try:
        by_customer = {}
        for ticket in TicketStore(store).list():
            by_customer.setdefault(ticket.customer_id, []).append(ticket)
        [pro] = by_customer["cus_pro_brightpath"]
        assert pro.status == "active" and len(pro.traces) == 2
        assert [t.outcome for t in by_customer["cus_ent_northwind"]] == ["escalate_human"]
        assert sorted(t.outcome for t in by_customer["cus_free_sam"]) == [
            "auto_respond",
            "escalate_human",
        ]
        [lucia] = by_customer["cus_free_lucia"]
        assert lucia.status == "active"
    finally:
        store.close()


def test_tickets_and_ticket_show_the_desk(tmp_path):
    sam = [str(p) for p in SAMPLES if p.name[:2] in ("01", "04", "05", "06")]
    assert cli("run", "--graph", "support", "--json", *sam, home=tmp_path).returncode == 0

    listed = cli("tickets", "--json", home=tmp_path)
    assert listed.returncode == 0, listed.stderr
    rows = [json.loads(line) for line in listed.stdout.splitlines()]
    assert sorted((r["customer_id"], r["status"]) for r in rows) == [
        ("cus_free_sam", "completed"),
        ("cus_free_sam", "completed"),
        ("cus_pro_brightpath", "active"),
    ]
    active = cli("tickets", "--status", "active", "--json", home=tmp_path)
    [pro] = [json.loads(line) for line in active.stdout.splitlines()]
    mine = cli("tickets", "--customer", "cus_free_sam", "--json", home=tmp_path)
    assert len(mine.stdout.splitlines()) == 2

    shown = cli("ticket", pro["ticket_id"], home=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert f"cus_pro_brightpath:{pro['ticket_id']}  active" in shown.stdout
    assert shown.stdout.count("<- ") == 2 and "still failing" in shown.stdout
    assert "assigned to the technical queue at " in shown.stdout
    assert "(told: tech-desk@brightlane.io)" in shown.stdout  # inboxflow.yaml's queues
    table = cli("tickets", home=tmp_path)
    assert f"cus_pro_brightpath:{pro['ticket_id']}" in table.stdout
    assert "queue: technical" in table.stdout
    assert pro["assigned_queue"] == "technical"

    stranger = tmp_path / "stranger.json"
    stranger.write_text(
        json.dumps(
            {
                "message_id": "stranger-1@example.net",
                "mailbox": "support@brightlane.io",
                "from": "Kim Lee <kim@example.net>",
                "to": ["support@brightlane.io"],
                "subject": "Exports",
                "date": "2027-01-14T09:20:00+00:00",
                "body": "How do I export a dashboard to PDF?",
            }
        )
    )
    assert cli("run", "--graph", "support", str(stranger), home=tmp_path).returncode == 0
    guests = cli("tickets", "--json", home=tmp_path).stdout.splitlines()
    [guest] = [json.loads(g) for g in guests if json.loads(g)["customer_id"].startswith("guest_")]
    assert (guest["customer_known"], guest["customer_email"]) == (False, "kim@example.net")
    shown = cli("ticket", guest["ticket_id"], home=tmp_path)
    assert "customer: unknown sender kim@example.net (not in the CRM; guest)" in shown.stdout
    assert "(unknown)" in cli("tickets", home=tmp_path).stdout

    missing = cli("ticket", "TKT-00000000", home=tmp_path)
    assert missing.returncode == 1 and "no ticket TKT-00000000" in missing.stderr
    wrong = cli("tickets", "--status", "open", home=tmp_path)
    assert wrong.returncode != 0 and "active or completed" in wrong.stderr
