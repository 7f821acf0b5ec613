"""The assistant's settings (``graphs: assistant:`` in inboxflow.yaml): validated when the
config is read, and used by the graph: time zone and working hours for the calendar, the
meeting length before any edit, the owner's name, the turn budget and the review deadline."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import pytest

from inboxflow.config import ConfigError, parse_config
from inboxflow.graphs import graph_registry
from tests.harness.agent import build
from tests.harness.assistant import decide, pending, sample, start, state
from tests.harness.paths import ROOT

PRAGUE = {
    "owner_name": "Alex Kim",
    "timezone": "Europe/Prague",
    "working_hours_start": "13:00",
    "working_hours_end": "15:00",
    "default_meeting_minutes": 45,
    "review_deadline_s": 3600,
}


@pytest.mark.parametrize(
    ("values", "error"),
    [
        ({"timezone": "Mars/Olympus"}, r"graphs.assistant.timezone: .*not an IANA time zone"),
        ({"working_hours_start": "9am"}, r"graphs.assistant.working_hours_start: String should"),
        (
            {"working_hours_start": "18:00", "working_hours_end": "09:00"},
            r"graphs.assistant.\(settings\): .*working_hours_end 09:00 must be after",
        ),
        (
            {"default_meeting_minutes": 2},
            r"graphs.assistant.default_meeting_minutes: .*greater than or equal to 5",
        ),
        ({"max_iterations": 0}, r"graphs.assistant.max_iterations"),
        ({"owner": "Alex"}, r"graphs.assistant.owner: Extra inputs are not permitted"),
    ],
)
def test_bad_assistant_settings_are_refused_when_the_config_is_read(values, error):
    with pytest.raises(ConfigError, match=error):
        parse_config({"graphs": {"assistant": values}}, graph_registry())


def test_the_repository_config_gives_valid_assistant_settings():

    from inboxflow.config import load_config

    root = ROOT
    config = load_config(root / "inboxflow.yaml", graph_registry())
    assert config.graph_settings("assistant")["timezone"]


@pytest.fixture
def runtime(tmp_path, monkeypatch):
    config = tmp_path / "inboxflow.yaml"
    config.write_text(json.dumps({"graphs": {"assistant": PRAGUE}}), "utf-8")
    monkeypatch.setenv("INBOXFLOW_CONFIG", str(config))
    rt = build(tmp_path)
    yield rt
    rt.store.close()


def test_meetings_follow_the_owners_zone_hours_and_default_length(runtime):
    trace_id = start(runtime, sample("33"))
    checked = next(
        e
        for e in state(runtime, trace_id)["tool_log"]
        if e["tool"] == "check_calendar_availability"
    )
    free = checked["result"]["free"]
    assert free and all("13:00" <= r.split("-")[0] < r.split("-")[1] <= "15:00" for r in free)
    review = pending(runtime, trace_id)
    assert review.payload["tool"] == "schedule_meeting"
    assert review.payload["duration_minutes"] == "45"  # the settings' length, nothing learnt yet
    assert review.payload["start_time"] == free[0].split("-")[0]  # 10:00 is outside the hours
    assert review.deadline - review.created_at == pytest.approx(3600)
    decide(runtime, trace_id, "accept")
    (event,) = [doc for _, doc in runtime.store.list("calendar_events") if not doc.get("seeded")]
    start_at = datetime.fromisoformat(event["start"])
    local = start_at.astimezone(ZoneInfo("Europe/Prague"))
    assert local.strftime("%H:%M") == review.payload["start_time"]  # 13:00 in Prague
    assert start_at.astimezone(UTC).hour != local.hour  # not 13:00 UTC
    logged = state(runtime, trace_id)["tool_log"]
    scheduled = next(e for e in logged if e["tool"] == "schedule_meeting")
    assert scheduled["result"]["when"].endswith("CET")


def test_the_model_is_told_the_owners_name_zone_and_hours(runtime):
    trace_id = start(runtime, sample("34"))
    assert pending(runtime, trace_id).payload["tool"] == "write_email"
    from inboxflow.graphs.assistant.nodes.agent import system_message
    from inboxflow.graphs.assistant.state import AssistantState

    class Ctx:
        store = runtime.store
        clock = runtime.clock
        ports = runtime.ports

    told = system_message(AssistantState.model_validate(state(runtime, trace_id)), Ctx())  # type: ignore[arg-type]
    assert "assistant of Alex Kim <alex@brightlane.io>" in told["content"]
    assert "Times are in Europe/Prague; working hours 13:00-15:00." in told["content"]
    assert '"default_duration_minutes": 45' in told["content"]
