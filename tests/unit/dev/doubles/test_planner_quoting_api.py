"""The planner against the quoting API over HTTP (``HttpQuoting``, wired by the composition root
from ``INBOXFLOW_QUOTING_URL``, and the local API double): a full quote, a lost response after
the vehicle was added (one vehicle), an invalid VIN the API refuses (the planner asks the
customer), an API that stays down (human review)."""

from __future__ import annotations

import json

from inboxflow.adapters.http_quoting import HttpQuoting
from inboxflow.clock import FakeClock
from inboxflow.dev.doubles.quoting_api import QuotingApiDouble
from inboxflow.graphs.planner.quoting import QUOTING
from tests.harness.planner import (
    BAD_VIN,
    approve_all,
    build,
    checkpoint,
    decide,
    pending,
    sample,
    sent,
    start,
    state,
)

KEY = "k-" + "x" * 30


def _runtime(tmp_path, double):
    runtime = build(
        tmp_path,
        environ={"INBOXFLOW_QUOTING_URL": double.url, "INBOXFLOW_QUOTING_API_KEY": KEY},
    )
    assert isinstance(runtime.ports.service(QUOTING), HttpQuoting)
    return runtime


def test_a_full_quote_over_http_with_a_lost_response(tmp_path):
    with QuotingApiDouble(clock=FakeClock(), api_key=KEY) as double:
        runtime = _runtime(tmp_path, double)
        double.fail_next("add_vehicle", 503, after_apply=True)  # added, but the answer is lost
        trace_id = start(runtime, sample("42"))
        assert approve_all(runtime, trace_id) == [
            "add_vehicle",
            "get_rate",
            "prepare_final_summary",
        ]
        done = checkpoint(runtime, trace_id)
        assert done.status == "done", done.error
        quote = double.engine.get(done.state["quote_session"]["quote_id"])
        assert len(quote.vehicles) == 1 and quote.rate is not None
        assert double.count("add_vehicle") == 2  # retried with the same key: applied once
        assert runtime.store.list("quotes") == []  # the quotes live behind the API
        [summary] = sent(runtime, trace_id)
        assert quote.quote_id in summary["body"]


def test_an_invalid_vin_refused_by_the_api_makes_the_planner_ask(tmp_path):
    with QuotingApiDouble(clock=FakeClock(), api_key=KEY) as double:
        runtime = _runtime(tmp_path, double)
        trace_id = start(runtime, sample("42"))  # add_vehicle waits for the agency
        inputs = json.loads(pending(runtime, trace_id).payload["inputs"])
        # the agency mistypes the VIN in its edit: the API refuses it
        decide(runtime, trace_id, "edit", edit={"inputs": json.dumps({**inputs, "vin": BAD_VIN})})
        decide(runtime, trace_id, "approve")
        last = state(runtime, trace_id)["last_tool_outputs"]
        assert (last["status"], last["code"], last["field"]) == ("error", "invalid_vin", "vin")
        plan = pending(runtime, trace_id)
        assert json.loads(plan.payload["inputs"])["fields"] == ["vin"]


def test_an_api_that_stays_down_goes_to_human_review(tmp_path):
    with QuotingApiDouble(clock=FakeClock(), api_key=KEY) as double:
        runtime = _runtime(tmp_path, double)
        double.fail_next("initiate", 503, times=1000)
        trace_id = start(runtime, sample("42"))
        ended = checkpoint(runtime, trace_id)
        assert ended.status == "needs_review"
        assert "quote_initiate failed 3 times" in ended.error
