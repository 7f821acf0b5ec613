"""``inboxflow person``: the listing, ``--export`` (one JSON document), ``--erase`` asking first
(``--yes`` does not), then nothing held; a bad address is refused with nothing read."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from inboxflow.adapters.sqlite_store import SqliteCheckpointStore
from inboxflow.dev.cli import app
from tests.harness.person import OTHER, PERSON, build, other_mail, person_mail


def _home(tmp_path: Path) -> tuple[Path, dict[str, str], dict[str, str]]:
    home = tmp_path / "home"
    home.mkdir()
    store = SqliteCheckpointStore(home / "inboxflow.db")
    runtime = build(tmp_path, store)
    traces = person_mail(runtime)
    other = other_mail(runtime)
    store.close()
    return home, traces, other


def test_list_export_erase(tmp_path: Path) -> None:
    home, traces, other = _home(tmp_path)
    runner = CliRunner()
    listed = runner.invoke(app, ["person", PERSON, "--home", str(home)], env={"COLUMNS": "200"})
    assert listed.exit_code == 0, listed.output
    for trace_id in traces.values():
        assert trace_id in listed.output
    assert "tickets: guest_" in listed.output and "reservations" in listed.output
    assert "vectors: email_vectors/" in listed.output
    mentioned = next(line for line in listed.output.splitlines() if line.startswith("mentioned"))
    assert f"traces/{other['retrieving']}" in mentioned  # another person's trace: only a mention
    listed_traces = next(line for line in listed.output.splitlines() if line.startswith("traces:"))
    assert other["retrieving"] not in listed_traces

    export = tmp_path / "jana.json"
    exported = runner.invoke(app, ["person", PERSON, "--home", str(home), "--export", str(export)])
    assert exported.exit_code == 0, exported.output
    document = json.loads(export.read_text(encoding="utf-8"))
    assert document["address"] == PERSON
    assert {d["trace_id"] for d in document["decisions"]} == set(traces.values())

    refused = runner.invoke(app, ["person", PERSON, "--home", str(home), "--erase"], input="n\n")
    assert refused.exit_code == 1 and "nothing erased" in refused.output
    again = runner.invoke(app, ["person", PERSON, "--home", str(home)])
    assert all(trace_id in again.output for trace_id in traces.values())

    erased = runner.invoke(
        app, ["person", PERSON, "--home", str(home), "--erase", "--yes", "--by", "dpo"]
    )
    assert erased.exit_code == 0, erased.output
    assert "erased" in erased.output and "(done)" in erased.output
    gone = runner.invoke(app, ["person", PERSON, "--home", str(home)])
    assert f"nothing held about {PERSON}" in gone.output
    kept = runner.invoke(app, ["person", OTHER, "--home", str(home)], env={"COLUMNS": "200"})
    assert "held about" in kept.output and "traces:" in kept.output
    assert all(trace_id in kept.output for trace_id in other.values())


def test_a_bad_address_is_refused(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["person", "jana", "--home", str(tmp_path / "none")])
    assert result.exit_code == 2 and "not an email address" in result.output
    assert not (tmp_path / "none").exists()
