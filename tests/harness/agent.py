"""Helpers for the agent graph's tests: runtimes, test profiles with scripted policies, samples."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from inboxflow.adapters.inprocess_bus import InProcessBus
from inboxflow.adapters.sqlite_store import SqliteCheckpointStore
from inboxflow.adapters.store_workspace import StoreWorkspace
from inboxflow.clock import FakeClock
from inboxflow.engine.runtime import Runtime
from inboxflow.graphs.agent.graph import AGENT
from inboxflow.graphs.agent.tasks import OFFLINE_POLICIES
from inboxflow.mail import Email, load_email_file
from inboxflow.ports.checkpoint import CheckpointStore
from inboxflow.ports.llm import AgentTurn, ChatMessage, ToolCall
from inboxflow.routing import RouteDecision
from inboxflow.start import start_email_trace
from tests.harness.runtimes import runtime_for

SAMPLES = sorted(p for p in (AGENT.samples or Path()).iterdir() if p.suffix == ".eml")


def sample(prefix: str) -> Email:
    """The agent sample mail whose file name starts with ``prefix``."""
    return load_email_file(next(p for p in SAMPLES if p.name.startswith(prefix)))


def build(
    tmp_path: Path, bus: InProcessBus | None = None, store: CheckpointStore | None = None, **kw: Any
) -> Runtime:
    """An embedded runtime with the store workspace (drafts land in the store)."""
    if bus is None:  # not ``or``: an empty bus is falsy (it has a length)
        bus = InProcessBus(clock=FakeClock())
    if store is None:
        store = SqliteCheckpointStore(tmp_path / "agent.db")
    return runtime_for(
        tmp_path,
        clock=bus.clock,
        store=store,
        bus=bus,
        workspace=StoreWorkspace(store, bus.clock),
        **kw,
    )


def start(
    runtime: Runtime, email: Email, profile: str = "pharmacy", rule: str | None = "test"
) -> str:
    """Start the agent graph on ``email`` as ``profile``."""
    decision = RouteDecision("agent", profile, rule, mailbox=email.mailbox)
    return start_email_trace(runtime, email, decision).trace_id


def calls(*items: tuple[str, str]) -> tuple[ToolCall, ...]:
    """Tool calls from ``(name, arguments_json)`` pairs."""
    return tuple(ToolCall(f"c{i}", name, args) for i, (name, args) in enumerate(items))


Script = Callable[[int, list[ChatMessage]], AgentTurn]


def use_profile(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    script: Script,
    name: str = "scripted",
    **fields: Any,
) -> None:
    """Declare a profile ``name`` (in a config under ``tmp_path``) played offline by ``script``.

    ``script(turn_number, messages)`` gives the turn (1-based).
    """
    prompt = tmp_path / f"{name}.md"
    prompt.write_text("You are a test agent.", encoding="utf-8")
    profile = {
        "name": name,
        "system_prompt_file": prompt.name,
        "tools": [
            "search_drugs",
            "manage_reservation",
            "web_search",
            "create_draft",
            "send_reply",
            "escalate",
        ],
        "preprocessor": "crisp",
        "helpdesk": ["info@dostupnost-leku.cz"],
        **fields,
    }
    config = tmp_path / "inboxflow.yaml"
    config.write_text(json.dumps({"profiles": [profile]}), encoding="utf-8")
    monkeypatch.setenv("INBOXFLOW_CONFIG", str(config))

    def policy(messages: list[ChatMessage], tools: list[dict[str, Any]]) -> AgentTurn:
        turn = sum(1 for m in messages if m.get("role") == "assistant") + 1
        return script(turn, messages)

    monkeypatch.setitem(OFFLINE_POLICIES, name, policy)


def tool_results(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The tool result messages' contents, parsed."""
    return [json.loads(m["content"]) for m in messages if m["role"] == "tool"]


def reply_writes(store: CheckpointStore, trace_id: str) -> list[dict[str, Any]]:
    """Drafts and sent messages stamped with the trace's keys."""
    found = []
    for collection in ("mailbox_drafts", "mailbox_sent"):
        for _, doc in store.list(collection):
            key = doc.get("trace_key", "")
            if str(key).startswith(f"{trace_id}:"):
                found.append(doc)
    return found
