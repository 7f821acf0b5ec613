"""The offline model's heuristics for the pipeline's LLM tasks (see :mod:`.tasks`).

``classify_intent`` scores keyword and header evidence per category (the
phrase tables below are data: a phrase and its weight) and turns the scores
into a calibrated confidence with a softmax; sentences that try to instruct
the model are cut before scoring and flagged. ``decide_tools`` applies the
tool rules exactly. ``generate_response`` writes a templated reply per
category from the context it is given.
"""

from __future__ import annotations

import functools
import json
import math
import re
from collections.abc import Mapping
from typing import Any

from ...mail import bare_subject, strip_quoted
from ...mail.addresses import same_address
from ...mail.quoting import REPLY_PREFIX, TRIMMED_MARKER
from ..cue_matching import CueMatch, CueSets, fold
from ..reply_learning import apply_preferences, read_preferences
from .cues import intent_cues, meeting_time_cues
from .senders import lookalike_reason
from .state import CATEGORIES
from .tasks import IntentAnswer, ReplyDraft, ToolChoice, ToolDecision, ToolName

# --- classify_intent: the evidence ------------------------------------------------------------

OTHER_PRIOR = 1.0
"""Score "other" starts with: with no evidence at all it wins, at low confidence."""

QUESTION_WEIGHT = 0.75
"""Inquiry evidence per question mark (two at most): a complaint asks questions too."""

COURTESY_WEIGHT = 1.0
""""other" evidence of a courtesy message with nothing to answer (a thank-you note)."""

LOOKALIKE_WEIGHT = 3.0
"""Spam evidence of a sender imitating the mailbox's organisation or a known name."""

_DIGIT = re.compile(r"\d")


def _from_a_digit(pattern: re.Pattern[str], text: str) -> re.Match[str] | None:
    """``pattern.search(text)`` for a pattern every match of which starts with a digit: tried
    only where a digit is (``re`` would try every position; ``\\b`` and look-behinds still see
    the character before)."""
    for digit in _DIGIT.finditer(text):
        found = pattern.match(text, digit.start())
        if found:
            return found
    return None


_CLOCK_TIME = re.compile(r"\b\d{1,2}(?::\d{2})?\s?(?:am|pm)\b|\b\d{1,2}[:h]\d{2}\b|\d{1,2}時")
_DURATION_MINUTES = re.compile(r"(?<!\d)(\d{2,3})\s?[- ]?(?:min|minut|分)")
"""A length in minutes in any of the languages ("45 minutes", "45 Minuten", "45 minut", "45分")."""

_INJECTION_WORDS = (
    "ignore ",
    "disregard ",
    "system prompt",
    "developer message",
    "you are now",
    "new instructions",
    "mail as",
    "message as",
    "ticket as",
    "autosend",
    "auto-send",
    "send it ",
    "send this ",
    "send the reply ",
    "confidence",
)
"""Words each alternative of :data:`INJECTION` spells out (one of them is in every match): a
text without any of them is not searched."""

INJECTION = re.compile(
    r"ignore (?:all |any |the |your )?(?:previous|prior|above|earlier|preceding|your)\s+"
    r"(?:instructions|prompts?|rules|directions)"
    r"|disregard (?:all |any |the |your )?(?:previous|prior|above|earlier|your)\b"
    r"|system prompt|developer message|you are now\b|new instructions"
    r"|(?:mark|classify|label|categori[sz]e|tag|treat) (?:this|the) "
    r"(?:email|message|ticket|mail) as"
    r"|\bauto-?send\b|send (?:it|this|the reply) (?:automatically|without (?:review|approval))"
    r"|(?:set|give it|assign) (?:a |the )?(?:high |maximum )?confidence"
)


def _normalise(text: str) -> str:
    return fold(text)


_SPACES = re.compile(r"\s+")
_SENTENCE_END = re.compile(r"(?<=[.!?\n])")


def cut_injections(text: str) -> tuple[str, list[str]]:
    """Drop every sentence that tries to instruct the model; return what was cut."""
    if not any(word in text for word in _INJECTION_WORDS) or not INJECTION.search(text):
        # A match inside a sentence is a match in the text (a sentence ends after ".!?" or a
        # line end, so its word boundaries are the text's): nothing to cut.
        return text, []
    kept: list[str] = []
    cut: list[str] = []
    for sentence in _SENTENCE_END.split(text):
        if INJECTION.search(sentence):
            cut.append(sentence.strip())
        else:
            kept.append(sentence)
    return "".join(kept), cut


COURTESY = re.compile(
    r"\b(thanks|thank you|thank u|thx|many thanks|much appreciated|appreciate (?:it|that|this|your)"
    r"|grateful)\b"
)
"""Thanks and appreciation: what a courtesy message says."""

REQUEST = re.compile(
    r"\b(please|pls|could you|can you|would you|will you|let me know|let us know|get back to"
    r"|send (?:me|us|over)|i need|we need|i'd like|we'd like|i would like|we would like"
    r"|looking forward to (?:your|hearing)|waiting for|asap|urgent)\b"
)
"""Wording that asks for something: a message with it needs a reply, whatever else it says."""

COURTESY_MAX_WORDS = 80
"""Longer messages are assumed to carry something to answer."""


def is_courtesy(text: str) -> bool:
    """A courtesy message with nothing to answer: thanks, short, no question, no request.

    Args:
        text: the new text (unquoted body, and the subject unless it is a ``Re:``),
            lowercased, injections cut.

    Returns:
        True only when nothing in the text calls for an answer (no phrase of an
        answerable category either): a reply is the safe default.
    """
    # The cheap tests first: a long text or a question is no courtesy message.
    return (
        "?" not in text
        and len(text.split()) <= COURTESY_MAX_WORDS
        and bool(COURTESY.search(text))
        and not REQUEST.search(text)
        and not any(_cues_in(text)[category] for category in intent_cues() if category != "other")
    )


_TIMES = "time:"
"""Prefix of the meeting-time cue sets' names in :func:`_text_cues`."""


@functools.cache
def _text_cues() -> CueSets:
    """The intent cues by category and the meeting-time cues (``time:weekday``...): one read
    of a text for all of them."""
    times = {f"{_TIMES}{kind}": cues for kind, cues in meeting_time_cues().items()}
    return CueSets({**intent_cues(), **times})


@functools.lru_cache(maxsize=4)
def _cues_in(folded: str) -> dict[str, list[CueMatch]]:
    """What :func:`_text_cues` finds in a folded text (the classifier and :func:`is_courtesy`
    ask about the same text: read once)."""
    return _text_cues().find(folded, folded=True)


def _meeting_time_evidence(text: str, add: Any) -> None:
    """A day, a time or a length named: evidence only beside a meeting cue.

    "Confirm the PO number before Friday" names a day as a deadline, not a meeting.
    """
    found = _cues_in(text)
    days = sorted({m.cue.label for m in found[f"{_TIMES}weekday"]})
    days += [m.text for m in found[f"{_TIMES}when"]]
    if days:
        add(
            "meeting_request",
            min(1.5, 1.0 + 0.5 * (len(days) - 1)),
            f"day named: {', '.join(days)}",
        )
    clock = _from_a_digit(_CLOCK_TIME, text)
    if clock:
        add("meeting_request", 1.0, f'time named: "{clock.group(0)}"')
    length = _from_a_digit(_DURATION_MINUTES, text) or next(
        iter(found[f"{_TIMES}duration"][:1]), None
    )
    if length is not None:
        shown = length.group(0) if isinstance(length, re.Match) else length.text
        add("meeting_request", 1.0, f'duration named: "{shown}"')


def _parse_header_block(block: str) -> dict[str, str]:
    headers: dict[str, str] = {}
    for line in block.splitlines():
        name, sep, value = line.partition(":")
        if sep:
            headers[name.strip().lower()] = value.strip()
    return headers


def _header_evidence(headers: Mapping[str, str], subject: str, sender: str, add: Any) -> None:
    if "list-unsubscribe" in headers:
        add("spam", 2.0, "header List-Unsubscribe (bulk mail)")
    precedence = headers.get("precedence", "").lower()
    if precedence in ("bulk", "list", "junk"):
        add("spam", 2.0, f"header Precedence: {precedence}")
    if "list-id" in headers:
        add("spam", 1.0, "header List-Id (mailing list)")
    auto = headers.get("auto-submitted", "").lower()
    if auto and auto != "no":
        add("spam", 1.5, f"header Auto-Submitted: {auto} (automated mail is never answered)")
    local = sender.split("@", 1)[0].lower()
    if re.fullmatch(
        r"(no-?reply|do-?not-?reply|newsletter|news|marketing|mailer-daemon|promo.*)", local
    ):
        add("spam", 1.0, f"sender {local}@ is a bulk address")
    if "in-reply-to" in headers:
        add("follow_up", 1.0, "header In-Reply-To (a reply in a thread)")
    if re.match(r"^\s*re\s*:", subject, re.IGNORECASE):
        add("follow_up", 0.5, 'subject starts with "Re:"')
    letters = [ch for ch in subject if ch.isalpha()]
    if subject.count("!") >= 2 or (len(letters) >= 8 and all(ch.isupper() for ch in letters)):
        add("spam", 1.0, "shouting subject")


def extract_meeting_hints(text: str) -> dict[str, Any]:
    """Duration, weekdays and part of day a meeting request asks for (used by decide)."""
    folded = _normalise(text)
    found = _cues_in(folded)
    named = {m.cue.label for m in found[f"{_TIMES}weekday"]}
    weekdays = [
        day for day in ("monday", "tuesday", "wednesday", "thursday", "friday") if day in named
    ]
    minutes: int | None = None
    number = _from_a_digit(_DURATION_MINUTES, folded)
    if number:
        minutes = int(number.group(1))
    else:
        spoken = found[f"{_TIMES}duration"]
        minutes = int(spoken[0].cue.weight) if spoken else None
    parts = {m.cue.label for m in found[f"{_TIMES}part_of_day"]}
    part = next(iter(parts)) if len(parts) == 1 else "any"
    return {"duration_minutes": minutes, "preferred_weekdays": weekdays, "part_of_day": part}


# --- classify_intent: the classifier -----------------------------------------------------------


def classify_offline(inputs: Mapping[str, Any]) -> IntentAnswer:
    """The deterministic classifier: cue and header evidence, softmax confidence."""
    headers = _parse_header_block(str(inputs.get("headers", "")))
    subject = str(inputs.get("subject", ""))
    # The trimming marker is our text, not the sender's ("quoted" is no request for a quote).
    body = strip_quoted(str(inputs.get("body", "")).replace(TRIMMED_MARKER, ""))
    is_reply = bool(REPLY_PREFIX.match(subject))
    text = _normalise(f"{bare_subject(subject)}\n{body}")
    text, injections = cut_injections(text)
    # A reply's subject is the thread's topic, not something asked now: only the body counts.
    new_text = cut_injections(_normalise(body))[0] if is_reply else text
    needs_reply = not is_courtesy(new_text)

    scores: dict[str, float] = {category: 0.0 for category in CATEGORIES}
    scores["other"] = OTHER_PRIOR
    evidence: list[tuple[float, str, str]] = []

    def add(category: str, weight: float, why: str) -> None:
        scores[category] += weight
        evidence.append((weight, category, why))

    found = _cues_in(new_text)
    for category in intent_cues():
        for match in found[category]:
            add(category, match.cue.weight, f'"{match.text}" ({match.cue.label})')
    if scores["meeting_request"] > 0:
        _meeting_time_evidence(new_text, add)
    questions = min(new_text.count("?"), 2)
    if questions:
        add("inquiry", QUESTION_WEIGHT * questions, f"{questions} question mark(s)")
    if not needs_reply:
        add("other", COURTESY_WEIGHT, "a courtesy message with nothing to answer")
    _header_evidence(headers, subject, str(inputs.get("sender_address", "")), add)
    imitation = lookalike_reason(
        str(inputs.get("sender_address", "")),
        str(inputs.get("sender_name", "")),
        str(inputs.get("mailbox", "")),
        _name_given_to(str(inputs.get("mailbox", "")), str(inputs.get("to", ""))),
    )
    if imitation:
        add("spam", LOOKALIKE_WEIGHT, f"look-alike sender: {imitation}")

    top = max(CATEGORIES, key=lambda c: (scores[c], -CATEGORIES.index(c)))
    exps = {c: math.exp(min(scores[c], 30.0)) for c in CATEGORIES}
    confidence = round(exps[top] / sum(exps.values()), 3)

    evidence.sort(key=lambda item: (item[1] != top, -item[0]))
    lines = [f"{category}: {why} (+{weight:g})" for weight, category, why in evidence[:10]]
    if not lines:
        lines = ["no category evidence found"]
    flags: list[str] = []
    if injections:
        flags.append("prompt_injection")
        lines.insert(0, f'prompt injection ignored: "{injections[0][:80]}"')
    if not needs_reply:
        lines = [*lines[:11], "no reply needed: thanks with no question or request"]
    return IntentAnswer(
        category=top,
        confidence=confidence,
        evidence=lines[:12],
        flags=flags,
        needs_reply=needs_reply,
    )


NAMES_KEPT = 1024
"""The last (mailbox, To header) pairs whose display name is kept: a mailbox's mail mostly has
the same To, and ``email.utils.getaddresses`` parses it in Python (70 us a header)."""


@functools.lru_cache(maxsize=NAMES_KEPT)
def _name_given_to(address: str, to: str) -> str:
    """The display name the email's To gives ``address`` ("Maya Chen <maya@...>" -> Maya Chen).

    A function of its two arguments alone, so the last ``NAMES_KEPT`` answers are kept."""
    from email.utils import getaddresses

    for name, found in getaddresses([to]):
        if same_address(found, address):
            return name
    return ""


# --- decide_tools ------------------------------------------------------------------------------

TOOL_RULES: dict[str, tuple[ToolName, ...]] = {
    "meeting_request": ("check_calendar", "create_draft"),
    "complaint": ("get_contact", "create_draft"),
    "inquiry": ("get_contact", "create_draft"),
    "follow_up": ("get_contact", "create_draft"),
    "other": ("create_draft",),
    "spam": (),
}

_REASONS: dict[ToolName, str] = {
    "get_contact": "Personalise the reply with what we know about the sender.",
    "check_calendar": "Offer concrete free slots for the meeting.",
    "create_draft": "Prepare the reply in the thread.",
}


def decide_offline(inputs: Mapping[str, Any]) -> ToolDecision:
    """The tool rules, applied exactly."""
    category = str(inputs.get("category", "other"))
    known = str(inputs.get("sender_known", "no")) == "yes"
    names = [
        name
        for name in TOOL_RULES.get(category, ())
        if not (category == "inquiry" and name == "get_contact" and not known)
    ]
    decision = ToolDecision(tools=[ToolChoice(name=name, reason=_REASONS[name]) for name in names])
    if category == "meeting_request":
        hints = extract_meeting_hints(f"{inputs.get('subject', '')}\n{inputs.get('body', '')}")
        minutes = hints["duration_minutes"]
        decision.meeting_minutes = min(240, max(15, minutes)) if minutes else None
        decision.preferred_weekdays = hints["preferred_weekdays"]
        decision.part_of_day = hints["part_of_day"]
    return decision


# --- generate_response -------------------------------------------------------------------------


def generate_offline(inputs: Mapping[str, Any]) -> ReplyDraft:
    """A templated reply per category that uses the context it is given; the greeting and
    sign-off the reviewers taught (``preferences``) replace the template's."""
    category = str(inputs.get("category", "other"))
    name = str(inputs.get("recipient_name") or "there")
    topic = str(inputs.get("topic", "your message"))
    reply_by = str(inputs.get("reply_by", "the next business day"))
    signature = str(inputs.get("signature", ""))
    contact = _json_or_none(str(inputs.get("contact", "")))
    company = str(contact.get("company", "")) if contact else ""
    body_text = cut_injections(str(inputs.get("body", "")).lower())[0]
    paragraphs: list[str]
    if category == "meeting_request":
        paragraphs = _meeting(topic, inputs)
        closing = "Best regards"
    elif category == "complaint":
        paragraphs = _complaint(topic, body_text, company, reply_by)
        closing = "Kind regards"
    elif category == "follow_up":
        paragraphs = _follow_up(topic, company, reply_by)
        closing = "Cheers"
    elif category == "inquiry":
        paragraphs = _inquiry(topic, inputs, contact, reply_by)
        closing = "Best regards"
    elif category == "spam":
        paragraphs = [
            "Thank you for getting in touch. We're not looking for outside help with this at the "
            "moment, so we'll pass for now."
        ]
        closing = "Best regards"
    else:
        thanks = "thank" in body_text
        paragraphs = [
            "Thank you for your kind note, it's much appreciated!"
            if thanks
            else f"Thank you for your message about \u201c{topic}\u201d.",
            "I've read it and will get back to you if anything is needed on our side.",
        ]
        closing = "Best regards"
    body = "\n\n".join([f"Hi {name},", *paragraphs, f"{closing},\n{signature}"])
    learnt = read_preferences(str(inputs.get("preferences") or "{}"))
    body = apply_preferences(body, learnt)
    return ReplyDraft(subject=str(inputs.get("reply_subject", "Re: your message")), body=body)


def _meeting(topic: str, inputs: Mapping[str, Any]) -> list[str]:
    slots = [
        line[2:] for line in str(inputs.get("slots", "")).splitlines() if line.startswith("- ")
    ]
    minutes = str(inputs.get("duration_minutes", "30"))
    opening = "Thanks for reaching out \u2014 I'd be glad to find time to talk about "
    opening += f"\u201c{topic}\u201d."
    if not slots:
        return [
            opening,
            "My calendar is quite full over the next few days. Could you send me two or three "
            "times that work for you? I'll make one of them work.",
        ]
    listing = "\n".join(f"  \u2022 {slot}" for slot in slots)
    return [
        opening,
        f"Here are a few {minutes}-minute slots that are free on my side:\n{listing}",
        "Just reply with the one that suits you best and I'll send a calendar invitation with a "
        "video link. If none of them work, feel free to suggest another time.",
    ]


def _complaint(topic: str, body: str, company: str, reply_by: str) -> list[str]:
    who = f" \u2014 I know how much the team at {company} relies on us" if company else ""
    paragraphs = [
        f"Thank you for letting me know about \u201c{topic}\u201d, and I'm truly sorry. "
        f"I understand how frustrating this is{who}."
    ]
    if re.search(r"refund|charged|charge|invoice|billing|payment", body):
        paragraphs.append(
            "I've asked our billing team to review the charges on your account today. If a payment "
            "was taken in error, it will be refunded in full to the original payment method, and "
            "I'll send you the confirmation myself."
        )
    elif re.search(r"broken|not working|doesn't work|error|crash|fail|outage|bug", body):
        paragraphs.append(
            "I've escalated this to our engineering team with the details you sent, marked it as "
            "urgent, and I'm tracking it personally until it's fixed."
        )
    else:
        paragraphs.append(
            "I've shared your message with the team responsible and I'm following it up personally."
        )
    paragraphs.append(
        f"You'll hear from me with an update by {reply_by} at the latest. In the meantime, you can "
        "reply to this email and it comes straight to me."
    )
    return paragraphs


def _follow_up(topic: str, company: str, reply_by: str) -> list[str]:
    paragraphs = [
        f"Thanks for following up, and sorry for keeping you waiting on \u201c{topic}\u201d!",
        f"I'm checking on the latest status right now and will get back to you with a proper "
        f"update by {reply_by}.",
    ]
    if company:
        paragraphs.append(
            f"Thanks for your patience \u2014 it's always good to hear from {company}."
        )
    return paragraphs


def _inquiry(
    topic: str, inputs: Mapping[str, Any], contact: dict[str, Any] | None, reply_by: str
) -> list[str]:
    answers = [
        line[2:].partition(": ")[2]
        for line in str(inputs.get("saved_replies", "")).splitlines()
        if line.startswith("- ")
    ]
    paragraphs = [f"Thank you for your email about \u201c{topic}\u201d."]
    if answers:
        paragraphs.extend(answer for answer in answers if answer)
    else:
        paragraphs.append(
            f"I'm checking the details with the team and will come back to you with a complete "
            f"answer by {reply_by}."
        )
    if contact and contact.get("company") and contact.get("tier"):
        paragraphs.append(
            f"As {contact['company']} is already on our {contact['tier']} plan, I'm happy to walk "
            "your team through any of this on a short call."
        )
    paragraphs.append("Please let me know if you have any other questions.")
    return paragraphs


def _json_or_none(text: str) -> dict[str, Any] | None:
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None
