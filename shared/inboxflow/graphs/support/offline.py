"""The offline model's heuristics for the support graph's LLM tasks (see :mod:`.tasks`).

``support_match_ticket``: a ticket id named in the text is a high match;
shared topic words (and follow-up wording) a medium one. ``support_translate``:
no model, no translation (the original and a note saying so).
``support_supervise``: signals by the urgency rules' patterns; the type from the
signals; security and enterprise outages escalate. ``support_specialist``: a
question the articles answer gets an ``auto_respond`` built from the nearest
article; a reported problem (outage, disruption, billing error, data loss) goes
to the specialist queue; its confidence follows the article's relevance, not
the fact that one was found (``answer_confidence``). The offline model writes English only: for any other
language it says so in the reply and in the reasoning, and its confidence stays
below the auto-respond bar, so a human reviews it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from ...knowledge import excerpt
from ..language import UNKNOWN
from ..reply_learning import apply_preferences, read_preferences
from .tasks import (
    ExtractedInfo,
    IssueType,
    Supervision,
    TicketMatch,
    Translation,
    TriageResult,
    Urgency,
)
from .urgency import text_signals

# --- support_match_ticket --------------------------------------------------------------------


TICKET_REFERENCE = re.compile(r"\bTKT-\d{8}\b")
WORD = re.compile(r"[^\W\d_]{4,}", re.UNICODE)
FOLLOW_UP = re.compile(
    r"\b(still|again|follow(?:ing)?[- ]up|any update|update on|same (?:issue|problem)"
    r"|as (?:i|we) (?:said|mentioned|reported)|my (?:last|previous) (?:email|message)"
    r"|todavía|sigue|seguimos|de nuevo|otra vez|ยังคง|อีกครั้ง)\b",
    re.IGNORECASE,
)
STOPWORDS = frozenset(
    [
        "that",
        "this",
        "with",
        "from",
        "have",
        "your",
        "what",
        "when",
        "will",
        "would",
        "there",
        "their",
        "they",
        "about",
        "been",
        "please",
        "thanks",
        "hello",
        "regards",
        "could",
        "should",
        "which",
        "still",
        "again",
        "para",
        "como",
        "esta",
        "pero",
        "tengo",
        "hola",
        "gracias",
    ]
)


def _words(text: str) -> set[str]:
    return {w for w in (m.group(0).lower() for m in WORD.finditer(text)) if w not in STOPWORDS}


def match_offline(inputs: Mapping[str, Any]) -> TicketMatch:
    """Ticket id named in the text → high; shared topic words (and follow-up wording) → medium."""
    tickets = json.loads(str(inputs.get("tickets") or "[]"))
    text = f"{inputs.get('subject', '')}\n{inputs.get('text', '')}"
    known = {t["ticket_id"] for t in tickets}
    for ticket_id in TICKET_REFERENCE.findall(text):
        if ticket_id in known:
            return TicketMatch(
                ticket_id=ticket_id, confidence="high", reason=f"the message names {ticket_id}"
            )
    words = _words(text)
    best: tuple[float, str | None, list[str]] = (0.0, None, [])
    for ticket in tickets:
        shared = sorted(words & _words(str(ticket.get("summary", ""))))
        score = len(shared) + (1.0 if shared and FOLLOW_UP.search(text) else 0.0)
        if score > best[0]:
            best = (score, str(ticket["ticket_id"]), shared)
    score, ticket_id, shared = best
    if ticket_id is not None and score >= 3:
        return TicketMatch(
            ticket_id=ticket_id,
            confidence="medium",
            reason=f"same topic as {ticket_id}: {', '.join(shared[:5])}",
        )
    return TicketMatch(
        ticket_id=ticket_id if score else None,
        confidence="low",
        reason="no active ticket shares enough of the message's topic",
    )


# --- support_translate -----------------------------------------------------------------------


def translate_offline(inputs: Mapping[str, Any]) -> Translation:
    """No model, no translation: the original, and a note that says so plainly."""
    language = str(inputs.get("language", UNKNOWN))
    return Translation(
        text=str(inputs.get("text", "")),
        translated=False,
        note=(
            f"not translated: the offline model cannot translate from {language!r}; "
            "the agents read the original text"
        ),
    )


# --- support_supervise -----------------------------------------------------------------------


def supervise_offline(inputs: Mapping[str, Any]) -> Supervision:
    """Signals by pattern; type from the signals; escalate security and enterprise outages."""
    text = str(inputs.get("text", ""))
    signals = text_signals(text)
    if "billing_error" in signals or re.search(
        r"\b(invoice|billing|charge|payment|subscription|plan|price)\b", text, re.IGNORECASE
    ):
        issue_type: IssueType = "billing"
    elif signals & {"outage", "data_loss", "service_disruption", "security"} or re.search(
        r"\b(error|bug|api|crash\w*|sync|login|export|import)\b", text, re.IGNORECASE
    ):
        issue_type = "technical"
    else:
        issue_type = "general"
    urgency: Urgency = "medium" if signals - {"general_question"} else "low"
    escalate = "security" in signals or (
        inputs.get("plan") == "enterprise" and bool(signals & {"outage", "data_loss"})
    )
    return Supervision(
        urgency=urgency,
        issue_type=issue_type,
        requires_escalation=escalate,
        signals=sorted(signals),  # type: ignore[arg-type]
        reasoning=f"signals: {', '.join(sorted(signals)) or 'none'}",
    )


# --- support_specialist ----------------------------------------------------------------------


PROBLEMS = frozenset({"outage", "data_loss", "billing_error", "service_disruption"})
OFFLINE_ANSWER_CONFIDENCE = 0.85
"""The most the offline model claims for an answer from an article: a found article is not
confidence, its relevance is (``answer_confidence``)."""
OFFLINE_FOREIGN_CONFIDENCE = 0.4
OFFLINE_QUEUE_CONFIDENCE = 0.5


def answer_confidence(relevance: float) -> float:
    """How sure the offline model is of an answer built from an article this relevant.

    ``0.4 + relevance``, at most ``OFFLINE_ANSWER_CONFIDENCE``: an article that matches the
    message well (0.45 and up on the sample knowledge base) reaches the auto-respond bar
    (0.8); a weak match (the nearest article of an unrelated topic scores 0.1-0.3) stays
    well below it.
    """
    return round(min(OFFLINE_ANSWER_CONFIDENCE, 0.4 + max(relevance, 0.0)), 2)


def specialist_offline(inputs: Mapping[str, Any]) -> TriageResult:
    """Answer from the nearest article, or queue a reported problem; English only."""
    articles = json.loads(str(inputs.get("articles") or "[]"))
    signals = set(json.loads(str(inputs.get("signals") or "[]")))
    language = str(inputs.get("language", "en"))
    category = str(inputs.get("category", "general"))
    text = str(inputs.get("text", "")).lower()
    negative = any(w in text for w in ("angry", "unacceptable", "frustrat", "terrible"))
    info = ExtractedInfo(
        product_area=articles[0]["title"] if articles else category,
        issue_type=category,
        sentiment="negative" if negative or signals & PROBLEMS else "neutral",
        language=language,
    )
    sources = [str(a["source"]) for a in articles]
    if signals & PROBLEMS or not articles:
        why = (
            f"reported problem ({', '.join(sorted(signals & PROBLEMS))})"
            if signals & PROBLEMS
            else "no knowledge-base article answers it"
        )
        return TriageResult(
            urgency=inputs.get("urgency", "medium"),
            extracted_info=info,
            recommended_action="route_specialist",
            suggested_response="",
            relevant_articles=sources,
            reasoning=f"{why}: the {category} queue investigates",
            confidence=OFFLINE_QUEUE_CONFIDENCE,
        )
    body = (
        f"Hello,\n\nthank you for writing to us. {excerpt(str(articles[0]['text']))}\n\n"
        "If this does not answer your question, reply to this email and we will help further."
        "\n\nBest regards,\nSupport"
    )
    body = apply_preferences(body, read_preferences(str(inputs.get("preferences") or "{}")))
    relevance = float(articles[0].get("relevance", 0.0))
    reasoning = f"answered from {sources[0]} (relevance {relevance:.2f})"
    confidence = answer_confidence(relevance)
    if language != "en":
        body = (
            f"[offline model: cannot write in {language!r}; this reply is in English and "
            "must be translated before it is sent]\n\n" + body
        )
        reasoning += f"; the offline model cannot reply in {language!r}: a human reviews it"
        confidence = OFFLINE_FOREIGN_CONFIDENCE
    return TriageResult(
        urgency=inputs.get("urgency", "low"),
        extracted_info=info,
        recommended_action="auto_respond",
        suggested_response=body,
        relevant_articles=sources,
        reasoning=reasoning,
        confidence=confidence,
    )
