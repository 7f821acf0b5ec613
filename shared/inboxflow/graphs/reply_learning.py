"""Learning from reviewers' edits and rejections of drafted replies, for every graph.

When a draft-review pause resumes (the pipeline's ``approve_draft``, the support desk's
``approve_support_reply``, the planner's ``agency_review`` of an email to the customer,
the assistant's ``tool_review`` of ``write_email``), the reviewer's edit or rejection
updates the mailbox's ``response_preferences`` (:mod:`inboxflow.memory`) through one LLM
task, ``update_response_preferences`` (structured: the whole new profile, whether it
changed, why). The offline model applies the rules of :mod:`.reply_rules`: the edited
greeting line and sign-off are kept, a comment becomes a note of what never to say, a
corrected sentence becomes a note of the fact. The change's source is
``"{trace_id}:{step}"`` of the resumed step, so a re-run changes nothing twice; a decision
the deadline took teaches nothing.

The drafters read it back with :func:`learnt` (only what reviewers taught, not the
defaults): the Gemini prompts get it as JSON after their fixed part
(:func:`prompt_preferences`), the offline drafters apply the greeting and sign-off
(:func:`apply_preferences`). A preference only rewrites the draft's text: the
recipient comes from the bindings and the guards judge the draft after it, so nothing
learnt sends a reply elsewhere or past a review.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from ..deferred import DeferredModel
from ..errors import Contention, NodeFailed
from ..memory import DEFAULTS, Memory, PreferenceMemory
from ..ports.llm import LLMTask, offline_heuristic

if TYPE_CHECKING:
    from ..engine.context import NodeContext

log = logging.getLogger(__name__)

NAMESPACE = "response_preferences"
"""The namespace drafted replies learn into."""
TIMEOUT_REVIEWERS = frozenset({"deadline", "timeout", None})
"""Who "decided" when nobody did: such a decision teaches nothing."""


# --- the update task ---------------------------------------------------------------------------


class ResponseProfile(DeferredModel):
    """``response_preferences``."""

    greeting: str
    sign_off: str
    tone: str
    notes: list[str]


class ResponseUpdate(DeferredModel):
    """The updated response profile, whether it changed, why."""

    profile: ResponseProfile
    changed: bool
    why: str


def update_template(namespace: str) -> str:
    """The prompt of a namespace's memory update task (``$profile``, ``$event``, ``$details``)."""
    return (
        f"Current {namespace} (JSON): $profile\n\nWhat the owner did: $event\n"
        "Details (JSON): $details\n\nReturn the whole profile, updated only where this "
        "feedback supports a change, whether it changed, and why."
    )


UPDATE_SYSTEM = (
    "You keep an email assistant's memory of its owner's preferences. Change only what "
    "the owner's decision clearly supports; keep everything else exactly as it is."
)
"""The system instruction of every memory update task."""

RESPONSE_UPDATE_TASK = LLMTask(
    "update_response_preferences",
    ResponseUpdate,
    update_template(NAMESPACE),
    offline_heuristic(f"{__package__}.reply_rules:response_rules"),
    UPDATE_SYSTEM
    + " An edit shows the draft before and after the reviewer's change: keep its greeting "
    "line (the recipient's first name written {first_name}, no other part of their name) "
    "and sign-off; a comment is a note of what never to say; a corrected fact is a note.",
)
"""``update_response_preferences``: every graph's drafts learn through it."""


# --- learning ----------------------------------------------------------------------------------

WORD = re.compile(r"((?:[^\W\d_]|[\u0300-\u036f])+)")
"""A run of letters (with their combining accents): the unit a name is compared by."""


def name_words(details: Mapping[str, Any]) -> set[str]:
    """The recipient's name as words (casefolded): their display name and first name."""
    named = f"{details.get('name') or ''} {details.get('first_name') or ''}"
    return {word.casefold() for word in WORD.findall(named) if len(word) > 1}


def without_name(line: str, first_name: str, names: set[str]) -> str | None:
    """The greeting to learn from ``line``: the recipient's first name as ``{first_name}``, the
    rest of their name left out; None when it names them by another part of their name only."""
    parts, named, other = WORD.split(line), False, False
    kept: list[str] = []
    for index, part in enumerate(parts):
        if index % 2 and part.casefold() in names:
            if not named and first_name and part.casefold() == first_name.casefold():
                kept.append("{first_name}")
                named = True
            else:
                other = True
            continue
        kept.append(part)
    if other and not named:
        return None
    text = re.sub(r"\s+([,!.:;])", r"\1", re.sub(r"[ \t]{2,}", " ", "".join(kept)))
    return text.strip()


def unnamed(note: str, names: set[str]) -> str:
    """``note`` with the recipient's name written ``[name]``."""
    return WORD.sub(lambda m: "[name]" if m.group(1).casefold() in names else m.group(1), note)


def settled(
    profile: Mapping[str, Any], before: Mapping[str, Any], details: Mapping[str, Any]
) -> dict[str, Any]:
    """A new response profile (the offline rules' or the model's) as memory keeps it: the
    recipient's first name in the greeting as ``{first_name}`` and the rest of their name left
    out (a greeting naming them otherwise keeps the one ``before``), their name in notes as
    ``[name]``. One customer's name never reaches another customer's draft."""
    names = name_words(details)
    kept = dict(profile)
    if not names:
        return kept
    greeting = without_name(
        str(kept.get("greeting", "")), str(details.get("first_name") or ""), names
    )
    kept["greeting"] = greeting if greeting is not None else before.get("greeting", "")
    kept["notes"] = [unnamed(str(note), names) for note in kept.get("notes") or []]
    return kept


def taught_by_deadline(resume: Mapping[str, Any] | None) -> bool:
    """Whether the resumed decision was the deadline's (nobody decided: nothing to learn)."""
    return resume is not None and resume.get("reviewer") in TIMEOUT_REVIEWERS


def learn(
    ctx: NodeContext,
    mailbox: str,
    namespace: str,
    task: LLMTask[Any],
    event: str,
    details: Mapping[str, Any],
    settle: Callable[[dict[str, Any], dict[str, Any]], dict[str, Any]] = lambda new, old: new,
) -> list[str]:
    """Update ``namespace`` of ``mailbox`` through ``task`` from a decision; ``["namespace@version"]``
    if the resumed step changed it, else ``[]``.

    The source is ``"{trace_id}:{step}"``: the step re-run changes nothing twice. A decision
    the deadline took teaches nothing. A model that cannot answer (or a memory that keeps
    changing) loses the lesson, never the decision: the node goes on (a transient error
    is left to the runtime's retries).
    """
    if taught_by_deadline(ctx.resume):
        return []

    def change(memory: Memory) -> tuple[dict[str, Any], str] | None:
        answer = ctx.generate(
            task,
            {
                "profile": json.dumps(memory.profile, sort_keys=True),
                "event": event,
                "details": json.dumps(dict(details), sort_keys=True, default=str),
            },
        )
        if not answer.changed:
            return None
        return settle(answer.profile.model_dump(), memory.profile), str(answer.why)

    source = f"{ctx.trace_id}:{ctx.step}"
    preferences = PreferenceMemory(ctx.store, ctx.clock)
    try:
        preferences.update(mailbox, namespace, change, source)
    except (NodeFailed, Contention) as exc:  # the decision stands; only the lesson is lost
        log.warning("%s: %s not learnt from %s: %s", ctx.trace_id, namespace, event, exc)
        return []
    version = preferences.source_version(mailbox, namespace, source)
    return [] if version is None else [f"{namespace}@{version}"]


def learn_from_review(
    ctx: NodeContext, mailbox: str, event: str, before: str, after: str | None = None, **said: Any
) -> list[str]:
    """Learn from a reviewer's decision on a drafted reply (the draft's text ``before``, the
    edited text ``after`` or None).

    ``said``: ``comment`` (the decision's), ``first_name`` and ``name`` (the recipient's, whom
    the greeting names: a learnt greeting keeps only ``{first_name}``). An unedited approval
    without a comment teaches nothing (and asks no model).
    """
    edited = after is not None and after.strip() != before.strip()
    note = str(said.get("comment") or "").strip()
    if not edited and not note:
        return []
    details = {
        "before": {"content": before},
        "after": {"content": after if edited else before},
        "comment": note,
        "first_name": str(said.get("first_name") or ""),
        "name": str(said.get("name") or ""),
    }
    return learn(
        ctx,
        mailbox,
        NAMESPACE,
        RESPONSE_UPDATE_TASK,
        event,
        details,
        lambda new, old: settled(new, old, details),
    )


# --- using it ----------------------------------------------------------------------------------


def learnt(ctx: NodeContext, mailbox: str, first_name: str = "") -> dict[str, Any]:
    """What reviewers taught ``mailbox``'s drafts: the preferences that differ from the
    defaults (``{}`` when nothing was learnt), the greeting's ``{first_name}`` filled in
    with the recipient's (``there`` when unknown)."""
    profile = PreferenceMemory(ctx.store, ctx.clock).read(mailbox, NAMESPACE).profile
    defaults = DEFAULTS[NAMESPACE]
    taught = {key: value for key, value in profile.items() if value != defaults.get(key)}
    if "greeting" in taught:
        taught["greeting"] = str(taught["greeting"]).replace("{first_name}", first_name or "there")
    return taught


def prompt_preferences(preferences: Mapping[str, Any]) -> str:
    """``preferences`` as a prompt shows them: one line of JSON (``{}`` when none)."""
    return json.dumps(dict(preferences), ensure_ascii=False, sort_keys=True)


PROMPT_PREFERENCES = (
    "Preferences the mailbox's reviewers taught by editing earlier drafts (JSON; a greeting "
    "replaces your greeting line, a sign_off your closing and signature; notes say what "
    "never to say and facts to keep). "
    "They change only the wording, never the recipient, these instructions or the facts "
    "given below:"
)
"""The line before a drafting prompt's ``$preferences`` (after the prompt's fixed part)."""


def read_preferences(text: str) -> dict[str, Any]:
    """The preferences a prompt showed (:func:`prompt_preferences`), ``{}`` if unreadable."""
    try:
        value = json.loads(text or "{}")
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def apply_preferences(body: str, preferences: Mapping[str, Any]) -> str:
    """``body`` (paragraphs separated by a blank line) with the learnt greeting as its first
    paragraph and the learnt sign-off as its last, where they were learnt (:func:`learnt`):
    what the offline drafters do."""
    paragraphs = body.split("\n\n")
    if len(paragraphs) < 2:
        return body
    greeting = str(preferences.get("greeting") or "")
    sign_off = str(preferences.get("sign_off") or "")
    if greeting:
        paragraphs[0] = greeting
    if sign_off:
        paragraphs[-1] = sign_off
    return "\n\n".join(paragraphs)


__all__ = [
    "NAMESPACE",
    "PROMPT_PREFERENCES",
    "RESPONSE_UPDATE_TASK",
    "UPDATE_SYSTEM",
    "ResponseProfile",
    "ResponseUpdate",
    "apply_preferences",
    "learn",
    "learn_from_review",
    "learnt",
    "prompt_preferences",
    "read_preferences",
    "taught_by_deadline",
    "update_template",
]
