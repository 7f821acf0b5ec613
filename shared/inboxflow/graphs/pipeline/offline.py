"""The offline model's heuristics for the pipeline's LLM tasks (see :mod:`.tasks`).

``classify_intent`` scores keyword and header evidence per category (the
phrase tables below are data: a phrase and its weight) and turns the scores
into a calibrated confidence with a softmax; sentences that try to instruct
the model are cut before scoring and flagged. ``decide_tools`` applies the
tool rules exactly. ``generate_response`` writes a templated reply per
category from the context it is given.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any

from ...mail import bare_subject, strip_quoted
from ...mail.quoting import REPLY_PREFIX, TRIMMED_MARKER
from .state import CATEGORIES
from .tasks import IntentAnswer, ReplyDraft, ToolChoice, ToolDecision, ToolName

# --- classify_intent: the evidence tables ------------------------------------------------------

OTHER_PRIOR = 1.0
"""Score "other" starts with: with no evidence at all it wins, at low confidence."""

PHRASES: dict[str, dict[str, float]] = {
    "spam": {
        "unsubscribe": 1.5,
        "click here": 1.5,
        "limited time": 2.0,
        "act now": 2.0,
        "congratulations": 1.5,
        "winner": 2.0,
        "you have won": 2.5,
        "you've won": 2.5,
        "claim your": 2.0,
        "prize": 2.0,
        "lottery": 2.5,
        "inheritance": 2.5,
        "wire transfer": 2.0,
        "bitcoin": 1.5,
        "crypto": 1.5,
        "investment opportunity": 2.5,
        "guaranteed": 1.5,
        "100% free": 2.0,
        "risk-free": 1.5,
        "risk free": 1.5,
        "no obligation": 1.5,
        "exclusive offer": 2.0,
        "special offer": 1.5,
        "seo": 1.0,
        "first page of google": 2.0,
        "backlinks": 2.0,
        "lead generation": 1.5,
        "verify your account": 2.5,
        "account suspended": 2.0,
        "beneficiary": 2.0,
        "dear friend": 2.0,
        "dear sir": 1.5,
        "viagra": 3.0,
        "weight loss": 2.0,
        "work from home": 1.5,
        "view this email in your browser": 1.5,
        "view in browser": 1.5,
        "newsletter": 1.0,
        "manage your preferences": 1.5,
        "email preferences": 1.5,
        "you are receiving this": 1.5,
        "you received this email": 1.5,
        "100% guaranteed": 2.0,
    },
    "meeting_request": {
        "meet": 1.5,
        "schedule a": 2.0,
        "schedule time": 2.0,
        "schedule some": 2.0,
        "to schedule": 2.0,
        "could we schedule": 2.5,
        "can we schedule": 2.5,
        "set up a call": 2.5,
        "set up a meeting": 2.5,
        "call": 1.0,
        "catch up": 1.5,
        "find a time": 2.5,
        "availability": 2.0,
        "available": 1.0,
        "calendar": 1.0,
        "book a": 1.5,
        "invite": 1.0,
        "zoom": 1.0,
        "coffee": 1.0,
        "time to chat": 2.0,
        "hop on a call": 2.5,
        "jump on a call": 2.5,
        "sync": 1.0,
        "demo": 1.0,
        "walkthrough": 1.0,
        "slot": 1.5,
        "reschedule": 2.0,
        "in person": 1.0,
        "free to talk": 2.0,
        "a quick chat": 1.5,
    },
    "complaint": {
        "refund": 2.5,
        "unacceptable": 2.5,
        "broken": 1.5,
        "disappoint": 2.0,
        "frustrat": 2.0,
        "terrible": 2.0,
        "awful": 2.0,
        "worst": 2.0,
        "charged twice": 2.5,
        "double charged": 2.5,
        "double-charged": 2.5,
        "overcharged": 2.0,
        "not working": 1.5,
        "doesn't work": 1.5,
        "does not work": 1.5,
        "stopped working": 2.0,
        "cancel my": 1.5,
        "complain": 2.0,
        "escalat": 1.5,
        "angry": 2.0,
        "furious": 2.5,
        "poor service": 2.0,
        "waste of": 1.5,
        "data loss": 2.0,
        "lost data": 2.0,
        "outage": 1.5,
        "crash": 1.5,
        "chargeback": 2.5,
        "legal action": 2.5,
        "ridiculous": 2.0,
        "upset": 1.5,
        "we've lost": 1.5,
        "fail": 1.0,
        "error": 0.5,
        "still broken": 2.0,
    },
    "follow_up": {
        "following up": 2.5,
        "follow up": 2.0,
        "follow-up": 2.0,
        "any update": 2.5,
        "any news": 2.0,
        "checking in": 2.0,
        "check in": 1.5,
        "circling back": 2.5,
        "circle back": 2.0,
        "just wanted to check": 1.5,
        "did you get a chance": 2.0,
        "did you have a chance": 2.0,
        "gentle reminder": 2.0,
        "friendly reminder": 2.0,
        "reminder": 1.0,
        "haven't heard back": 2.0,
        "heard back": 1.5,
        "bumping this": 2.0,
        "as discussed": 1.0,
        "as promised": 1.0,
        "still waiting": 1.5,
        "per my last email": 2.0,
        "where are we": 1.5,
        "next steps": 1.0,
        "wanted to follow": 2.0,
    },
    "inquiry": {
        "pricing": 2.0,
        "price": 1.5,
        "cost": 1.0,
        "quote": 1.5,
        "how do i": 2.0,
        "how do we": 2.0,
        "how can i": 2.0,
        "how can we": 2.0,
        "how does": 1.5,
        "can you tell me": 1.5,
        "could you tell me": 1.5,
        "could you let me know": 1.5,
        "do you offer": 2.0,
        "do you support": 2.0,
        "do you have": 1.5,
        "is it possible": 1.5,
        "is there a way": 2.0,
        "interested in": 1.5,
        "more information": 1.5,
        "information about": 1.5,
        "wondering": 1.5,
        "curious": 1.0,
        "question": 1.5,
        "discount": 1.5,
        "trial": 1.0,
        "documentation": 1.0,
        "integrat": 1.0,
        "api": 1.0,
        "sso": 1.0,
        "does it support": 2.0,
        "what is the difference": 1.5,
        "nonprofit": 1.0,
    },
    "other": {
        "out of office": 3.0,
        "automatic reply": 3.0,
        "thank you for": 0.5,
        "thanks for": 0.5,
        "thanks so much": 1.0,
        "congrats": 1.0,
        "fyi": 1.0,
        "for your information": 1.0,
        "no action needed": 2.0,
        "no reply needed": 2.0,
    },
}

_WEEKDAY = re.compile(
    r"\b(monday|tuesday|wednesday|thursday|friday|tomorrow|next week|this week)s?\b"
)
_CLOCK_TIME = re.compile(r"\b\d{1,2}(?::\d{2})?\s?(?:am|pm)\b|\b\d{1,2}:\d{2}\b")
_DURATION = re.compile(r"\b(\d{2,3})[- ]?(?:min|minute)s?\b|\b(an|one|half an) hour\b")

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


def _compile(weights: Mapping[str, float]) -> re.Pattern[str]:
    alternatives = sorted(weights, key=len, reverse=True)
    body = "|".join(re.escape(p).replace(r"\ ", r"\s+") for p in alternatives)
    return re.compile(rf"\b({body})[\w'-]*")


_PHRASE_PATTERNS = {category: (_compile(weights), weights) for category, weights in PHRASES.items()}


def _normalise(text: str) -> str:
    return text.lower().replace("\u2019", "'").replace("\u2018", "'")


_SPACES = re.compile(r"\s+")
_SENTENCE_END = re.compile(r"(?<=[.!?\n])")


def cut_injections(text: str) -> tuple[str, list[str]]:
    """Drop every sentence that tries to instruct the model; return what was cut."""
    if not INJECTION.search(text):
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
    return (
        bool(COURTESY.search(text))
        and "?" not in text
        and not REQUEST.search(text)
        and len(text.split()) <= COURTESY_MAX_WORDS
        and not any(
            pattern.search(text)
            for category, (pattern, _) in _PHRASE_PATTERNS.items()
            if category != "other"
        )
    )


def _meeting_time_evidence(text: str, add: Any) -> None:
    days = sorted({m.group(1) for m in _WEEKDAY.finditer(text)})
    if days:
        add(
            "meeting_request",
            min(1.5, 1.0 + 0.5 * (len(days) - 1)),
            f"day named: {', '.join(days)}",
        )
    times = _CLOCK_TIME.search(text)
    if times:
        add("meeting_request", 1.0, f'time named: "{times.group(0)}"')
    duration = _DURATION.search(text)
    if duration:
        add("meeting_request", 1.0, f'duration named: "{duration.group(0)}"')


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
    lowered = _normalise(text)
    weekdays = [
        day
        for day in ("monday", "tuesday", "wednesday", "thursday", "friday")
        if re.search(rf"\b{day}s?\b", lowered)
    ]
    minutes: int | None = None
    duration = _DURATION.search(lowered)
    if duration:
        if duration.group(1):
            minutes = int(duration.group(1))
        else:
            minutes = 30 if duration.group(2) == "half an" else 60
    if "afternoon" in lowered and "morning" not in lowered:
        part = "afternoon"
    elif "morning" in lowered and "afternoon" not in lowered:
        part = "morning"
    else:
        part = "any"
    return {"duration_minutes": minutes, "preferred_weekdays": weekdays, "part_of_day": part}


# --- classify_intent: the classifier -----------------------------------------------------------


def classify_offline(inputs: Mapping[str, Any]) -> IntentAnswer:
    """The deterministic classifier: keyword and header evidence, softmax confidence."""
    headers = _parse_header_block(str(inputs.get("headers", "")))
    subject = str(inputs.get("subject", ""))
    # The trimming marker is our text, not the sender's ("quoted" is no request for a quote).
    body = strip_quoted(str(inputs.get("body", "")).replace(TRIMMED_MARKER, ""))
    text = _normalise(f"{bare_subject(subject)}\n{body}")
    text, injections = cut_injections(text)
    # A reply's subject is the thread's topic, not something asked now.
    new_text = cut_injections(_normalise(body))[0] if REPLY_PREFIX.match(subject) else text
    needs_reply = not is_courtesy(new_text)

    scores: dict[str, float] = {category: 0.0 for category in CATEGORIES}
    scores["other"] = OTHER_PRIOR
    evidence: list[tuple[float, str, str]] = []

    def add(category: str, weight: float, why: str) -> None:
        scores[category] += weight
        evidence.append((weight, category, why))

    for category, (pattern, weights) in _PHRASE_PATTERNS.items():
        seen: set[str] = set()
        for match in pattern.finditer(text):
            phrase = _SPACES.sub(" ", match.group(1))
            if phrase not in seen:
                seen.add(phrase)
                add(category, weights[phrase], f'"{match.group(0).strip()}"')
    _meeting_time_evidence(text, add)
    questions = min(text.count("?"), 2)
    if questions:
        add("inquiry", 0.75 * questions, f"{questions} question mark(s)")
    _header_evidence(headers, subject, str(inputs.get("sender_address", "")), add)

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
    """A templated reply per category that uses the context it is given."""
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
