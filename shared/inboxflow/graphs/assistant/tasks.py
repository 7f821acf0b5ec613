"""The assistant's LLM tasks: each one's prompt and output schema.

| task                          | node                        | output schema    |
|-------------------------------|-----------------------------|------------------|
| ``triage_email``              | triage_router               | ``Triage``         |
| ``update_triage_preferences`` | triage_notify, tool_review  | ``TriageUpdate``   |
| ``update_response_preferences`` | tool_review               | ``ResponseUpdate`` |
| ``update_cal_preferences``    | tool_review                 | ``CalUpdate``      |
| the response agent's turns    | llm_call                    | tool calls (``ASSISTANT_TOOLS``) |

The offline model plays each task with its heuristic in :mod:`.offline`
(``task.offline``, ``ChatSettings.offline``), imported on the first offline
call only: a deployment on Gemini never loads the heuristics.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel

from ...ports.llm import LLMTask, offline_heuristic

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


class ResponseProfile(BaseModel):
    """``response_preferences``."""

    greeting: str
    sign_off: str
    tone: str
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


class ResponseUpdate(BaseModel):
    """The updated response profile, whether it changed, why."""

    profile: ResponseProfile
    changed: bool
    why: str


class CalUpdate(BaseModel):
    """The updated calendar profile, whether it changed, why."""

    profile: CalProfile
    changed: bool
    why: str


_offline_triage_update = offline_heuristic(f"{__package__}.offline:triage_rules")


_offline_response_update = offline_heuristic(f"{__package__}.offline:response_rules")


_offline_cal_update = offline_heuristic(f"{__package__}.offline:cal_rules")


def _template(namespace: str) -> str:
    return (
        f"Current {namespace} (JSON): $profile\n\nWhat the owner did: $event\n"
        "Details (JSON): $details\n\nReturn the whole profile, updated only where this "
        "feedback supports a change, whether it changed, and why."
    )


_SYSTEM = (
    "You keep an email assistant's memory of its owner's preferences. Change only what "
    "the owner's decision clearly supports; keep everything else exactly as it is."
)

TRIAGE_UPDATE_TASK = LLMTask(
    "update_triage_preferences",
    TriageUpdate,
    _template("triage_preferences"),
    _offline_triage_update,
    _SYSTEM,
)
RESPONSE_UPDATE_TASK = LLMTask(
    "update_response_preferences",
    ResponseUpdate,
    _template("response_preferences"),
    _offline_response_update,
    _SYSTEM,
)
CAL_UPDATE_TASK = LLMTask(
    "update_cal_preferences", CalUpdate, _template("cal_preferences"), _offline_cal_update, _SYSTEM
)
UPDATE_TASKS: dict[str, LLMTask[Any]] = {
    "triage_preferences": TRIAGE_UPDATE_TASK,
    "response_preferences": RESPONSE_UPDATE_TASK,
    "cal_preferences": CAL_UPDATE_TASK,
}
"""The memory update task of each namespace (module-level each, so the Gemini double finds them)."""


# --- the response agent's turns ----------------------------------------------------------------


offline_turn = offline_heuristic(f"{__package__}.offline:assistant_policy")
"""The response agent's scripted turn (``ChatSettings.offline``), played by the offline model."""
