"""The assistant's LLM tasks: each one's prompt and output schema.

| task                          | node                        | output schema    |
|-------------------------------|-----------------------------|------------------|
| ``triage_email``              | triage_router               | ``Triage``         |
| ``update_triage_preferences`` | triage_notify, tool_review  | ``TriageUpdate``   |
| ``update_response_preferences`` | tool_review               | ``ResponseUpdate`` |
|                               | (every graph's drafts: :mod:`..reply_learning`) |  |
| ``update_cal_preferences``    | tool_review                 | ``CalUpdate``      |
| the response agent's turns    | llm_call                    | tool calls (``ASSISTANT_TOOLS``) |

The response update is every graph's (:mod:`inboxflow.graphs.reply_learning`, its rules in
:mod:`inboxflow.graphs.reply_rules`). The offline model plays each task with its heuristic in :mod:`.offline`
(``task.offline``, ``ChatSettings.offline``), imported on the first offline
call only: a deployment on Gemini never loads the heuristics.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel

from ...ports.llm import LLMTask, offline_heuristic
from ..reply_learning import (
    RESPONSE_UPDATE_TASK,
    UPDATE_SYSTEM,
    update_template,
)

# --- triage_email ------------------------------------------------------------------------------


class Triage(BaseModel):
    """The triage's structured answer."""

    reasoning: str
    classification: Literal["ignore", "notify", "respond"]


_offline_triage = offline_heuristic(f"{__package__}.offline:offline_triage")


TRIAGE_TASK = LLMTask(
    name="triage_email",
    output_model=Triage,
    system=(
        "You triage the email of the mailbox owner. ignore: marketing, automated mail, "
        "anything that needs no attention. notify: information the owner should see but "
        "need not answer. respond: a person expects an answer or an action from the owner. "
        "The owner's triage preferences come first."
    ),
    template=(
        "Triage preferences (JSON): $preferences\n\n"
        "From: $sender\nSubject: $subject\n\n$body\n\n"
        "Answer with your reasoning and the classification."
    ),
    offline=_offline_triage,
)


# --- the memory update tasks (one per preference namespace) ------------------------------------


class TriageProfile(BaseModel):
    """``triage_preferences``."""

    ignore_senders: list[str]
    ignore_domains: list[str]
    notify_senders: list[str]
    respond_senders: list[str]
    notify_ignored_once: list[str]
    notes: list[str]


class CalProfile(BaseModel):
    """``cal_preferences``."""

    default_duration_minutes: int
    preferred_start_time: str
    notes: list[str]


class TriageUpdate(BaseModel):
    """The updated triage profile, whether it changed, why."""

    profile: TriageProfile
    changed: bool
    why: str


class CalUpdate(BaseModel):
    """The updated calendar profile, whether it changed, why."""

    profile: CalProfile
    changed: bool
    why: str


_offline_triage_update = offline_heuristic(f"{__package__}.offline:triage_rules")


_offline_cal_update = offline_heuristic(f"{__package__}.offline:cal_rules")


TRIAGE_UPDATE_TASK = LLMTask(
    "update_triage_preferences",
    TriageUpdate,
    update_template("triage_preferences"),
    _offline_triage_update,
    UPDATE_SYSTEM,
)
CAL_UPDATE_TASK = LLMTask(
    "update_cal_preferences",
    CalUpdate,
    update_template("cal_preferences"),
    _offline_cal_update,
    UPDATE_SYSTEM,
)
UPDATE_TASKS: dict[str, LLMTask[Any]] = {
    "triage_preferences": TRIAGE_UPDATE_TASK,
    "response_preferences": RESPONSE_UPDATE_TASK,
    "cal_preferences": CAL_UPDATE_TASK,
}
"""The memory update task of each namespace (module-level each, so the Gemini double finds them;
``RESPONSE_UPDATE_TASK`` is every graph's, from :mod:`..reply_learning`)."""


# --- the response agent's turns ----------------------------------------------------------------


offline_turn = offline_heuristic(f"{__package__}.offline:assistant_policy")
"""The response agent's scripted turn (``ChatSettings.offline``), played by the offline model."""
