"""Reply learning through google-genai and the strict Gemini REST double: a reviewer's edit
of a pipeline draft is a structured ``update_response_preferences`` call, its answer is what
the memory keeps, and the next draft's prompt carries the learnt preferences (after the
prompt's fixed part)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from inboxflow.adapters.gemini_llm import GeminiModel, GeminiSettings, RetryPolicy
from inboxflow.adapters.inprocess_bus import InProcessBus
from inboxflow.adapters.sqlite_store import SqliteCheckpointStore
from inboxflow.adapters.store_workspace import StoreWorkspace
from inboxflow.clock import FakeClock
from inboxflow.dev.doubles.gemini_api import (
    GeminiDouble,
    GenerateCall,
    TaskOracle,
    start_gemini_double,
)
from inboxflow.engine.runtime import Runtime
from inboxflow.graphs.pipeline import initial_state
from inboxflow.graphs.pipeline.tasks import GENERATE_RESPONSE
from inboxflow.graphs.reply_learning import PROMPT_PREFERENCES, RESPONSE_UPDATE_TASK
from inboxflow.mail import load_email_file, sample_inbox_dir
from inboxflow.memory import PreferenceMemory
from inboxflow.workspace import seed_workspace
from tests.harness.runtimes import runtime_for

MAYA = "maya.chen@brightlane.io"
LEARNT = {
    "greeting": "Dear {first_name},",
    "sign_off": "Warm wishes,\nMaya",
    "tone": "friendly and brief",
    "notes": ["never: promise a refund date"],
}


class Reviewer:
    """The task oracle, but the memory update is the model's own (scripted) answer."""

    def __init__(self) -> None:
        self.oracle = TaskOracle()
        self.updates: list[GenerateCall] = []
        self.drafts: list[GenerateCall] = []

    def __call__(self, call: GenerateCall) -> Any:
        if call.system.strip() == RESPONSE_UPDATE_TASK.system:
            self.updates.append(call)
            return {"profile": LEARNT, "changed": True, "why": "the reviewer re-signed it"}
        if call.system.strip() == GENERATE_RESPONSE.system:
            self.drafts.append(call)
        return self.oracle(call)


@pytest.fixture
def reviewer() -> Reviewer:
    return Reviewer()


@pytest.fixture
def double(reviewer: Reviewer) -> Iterator[GeminiDouble]:
    with start_gemini_double(reviewer, api_key="test-key") as running:
        yield running


@pytest.fixture
def runtime(double: GeminiDouble, tmp_path: Path) -> Runtime:
    settings = GeminiSettings(mode="api_key", api_key="test-key", base_url=double.base_url)
    model = GeminiModel(settings, retry=RetryPolicy(sleep=lambda s: None, jitter=lambda: 0.5))
    bus = InProcessBus(clock=FakeClock())
    store = SqliteCheckpointStore(tmp_path / "pipeline.db")
    seed_workspace(store, bus.clock.now())
    return runtime_for(
        tmp_path,
        clock=bus.clock,
        store=store,
        bus=bus,
        workspace=StoreWorkspace(store, bus.clock),
        llm=model,
    )


def _run(runtime: Runtime, name: str) -> str:
    trace_id = runtime.start("pipeline", initial_state(load_email_file(sample_inbox_dir() / name)))
    runtime.bus.drain()  # type: ignore[attr-defined]
    return trace_id


def _pending(runtime: Runtime, trace_id: str):
    (approval,) = [a for a in runtime.ports.approvals.pending() if a.trace_id == trace_id]
    return approval


def test_an_edit_is_learnt_by_gemini_and_the_next_prompt_carries_it(runtime, reviewer):
    first = _run(runtime, "04-complaint-double-charge.eml")
    assert "\n{}\n\nWrite a reply" in reviewer.drafts[-1].prompt  # nothing learnt yet
    approval = _pending(runtime, first)
    draft = approval.payload["draft"]
    edited = draft.rsplit("\n\n", 1)[0] + "\n\nWarm wishes,\nMaya"
    runtime.ports.approvals.decisions.decide_as(
        approval.approval_id, MAYA, "approve", {"draft": edited}, "never promise a refund date"
    )
    runtime.bus.drain()  # type: ignore[attr-defined]

    [update] = reviewer.updates  # one structured call, with what the reviewer changed
    assert '"comment": "never promise a refund date"' in update.prompt
    assert "Warm wishes" in update.prompt
    memory = PreferenceMemory(runtime.store, runtime.clock).read(MAYA, "response_preferences")
    assert memory.profile == LEARNT and memory.why == "the reviewer re-signed it"
    assert runtime.store.get_trace(first).state["dispatch"]["learned"] == [  # type: ignore[union-attr]
        "response_preferences@1"
    ]

    second = _run(runtime, "10-ambiguous-hotel-group.eml")
    prompt = reviewer.drafts[-1].prompt
    fixed, _, rest = prompt.partition(PROMPT_PREFERENCES)
    cached = GENERATE_RESPONSE.template.partition(PROMPT_PREFERENCES)[0]
    assert rest and fixed == cached and "$" not in cached  # after the fixed part, the same
    assert '"sign_off": "Warm wishes,\\nMaya"' in rest.split("\n")[1]
    assert '"notes": ["never: promise a refund date"]' in rest.split("\n")[1]
    body = _pending(runtime, second).payload["draft"]  # the oracle drafts from that prompt
    assert body.startswith("Dear ") and body.endswith("\n\nWarm wishes,\nMaya")


class Confused(Reviewer):
    """A model whose memory updates never fit the schema."""

    def __call__(self, call: GenerateCall) -> Any:
        if call.system.strip() == RESPONSE_UPDATE_TASK.system:
            self.updates.append(call)
            return {"profile": "whatever", "changed": "maybe"}
        return super().__call__(call)


@pytest.mark.parametrize("reviewer", [Confused()], ids=["confused"])
def test_a_model_that_cannot_learn_loses_the_lesson_never_the_reply(runtime, reviewer):
    trace_id = _run(runtime, "04-complaint-double-charge.eml")
    approval = _pending(runtime, trace_id)
    edited = approval.payload["draft"].rsplit("\n\n", 1)[0] + "\n\nWarm wishes,\nMaya"
    runtime.ports.approvals.decisions.decide_as(
        approval.approval_id, MAYA, "approve", {"draft": edited}, None
    )
    runtime.bus.drain()  # type: ignore[attr-defined]
    assert reviewer.updates  # it was asked (and its schema retries too)
    checkpoint = runtime.store.get_trace(trace_id)
    assert checkpoint is not None and checkpoint.status == "done"
    result = checkpoint.state["dispatch"]
    assert (result["status"], result["edited"], result["learned"]) == ("drafted", True, [])
    memory = PreferenceMemory(runtime.store, runtime.clock).read(MAYA, "response_preferences")
    assert memory.version == 0
