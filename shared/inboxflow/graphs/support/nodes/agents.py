"""translator, supervisor, the three specialists and escalate.

| node        | inputs                         | outputs      | LLM task            | routes     |
|-------------|--------------------------------|--------------|---------------------|------------|
| translator  | ticket (its customer messages) | translation  | support_translate   | supervisor |
|             |                                |              | (non-English only)  |            |
| supervisor  | customer, translation          | supervision  | support_supervise   | escalate / |
|             |                                |              | + the urgency rules | billing /  |
|             |                                |              |                     | technical /|
|             |                                |              |                     | general    |
| billing ... | supervision, translation, KB,  | triage       | support_specialist  | act        |
|             | the learnt reply preferences   |              |                     |            |
| escalate    | supervision                    | triage       | none                | act        |
"""

from __future__ import annotations

import json

from ....engine.context import NodeContext
from ....engine.graph import NodeFn
from ....engine.step import Step
from ....errors import NodeFailed
from ....knowledge import knowledge_base_for
from ...language import detect_language
from ...reply_learning import learnt, prompt_preferences
from ..kb import kb_search
from ..signals import text_signals
from ..state import SupportState, TranslationResult
from ..tasks import SPECIALIST, SUPERVISE, TRANSLATE, ExtractedInfo, IssueType, TriageResult
from ..tickets import TicketStore

KB_ARTICLES = 3


def translator(state: SupportState, ctx: NodeContext) -> Step:
    """Detect the ticket's language; translate non-English messages for the agents."""
    if state.ticket is None:
        raise NodeFailed("translator needs a ticket")
    ticket = TicketStore(ctx.store).get(state.ticket.customer_id, state.ticket.ticket_id)
    if ticket is None:
        raise NodeFailed(f"ticket {state.ticket.key} is not in the store")
    originals = [m.text for m in ticket.messages if m.direction == "in"]
    language = detect_language("\n".join(originals))
    translated, notes = list(originals), []
    if language != "en":
        translated = []
        for text in originals:
            answer = ctx.generate(TRANSLATE, {"language": language, "text": text})
            translated.append(answer.text)
            if not answer.translated:
                notes.append(answer.note or f"not translated from {language!r}")
    result = TranslationResult(
        original_language=language,
        is_english=language == "en",
        original_messages=originals,
        translated_messages=translated,
        notes=sorted(set(notes)),
    )
    return Step(update={"translation": result}, goto="supervisor")


def supervisor(state: SupportState, ctx: NodeContext) -> Step:
    """Classify urgency and type (the seed's rules over the model); route."""
    customer, translation = state.customer, state.translation
    if customer is None or translation is None:
        raise NodeFailed("supervisor needs the customer and the translation")
    text = "\n\n".join(translation.translated_messages)
    answer = ctx.generate(
        SUPERVISE,
        {
            "plan": customer.plan,
            "tenure_months": customer.tenure_months,
            "seats": customer.seats,
            "region": customer.region,
            "text": text,
        },
    )
    found = text_signals(state.email.subject, *translation.original_messages, text)
    answer = answer.model_copy(update={"signals": sorted(set(answer.signals) | found)})
    # The seed's urgency rules are this node's guards (graph.py): they hold over the answer.
    goto = "escalate" if answer.requires_escalation else answer.issue_type
    return Step(update={"supervision": answer}, goto=goto)


def specialist_node(category: IssueType) -> NodeFn:
    """The node of one specialist: KB articles, then a ``TriageResult``."""

    def specialist(state: SupportState, ctx: NodeContext) -> Step:
        supervision, translation = state.supervision, state.translation
        if supervision is None or translation is None or state.customer is None:
            raise NodeFailed(f"{category} needs the supervision, translation and customer")
        text = "\n\n".join(translation.translated_messages)
        kb = knowledge_base_for(ctx.ports)
        articles = kb_search(kb, text, category, KB_ARTICLES)
        relevance: dict[str, float] = {}
        for article in articles:
            relevance[article["source"]] = max(
                relevance.get(article["source"], 0.0), article["relevance"]
            )
        result = ctx.generate(
            SPECIALIST,
            {
                "category": category,
                "language": translation.original_language,
                "plan": state.customer.plan,
                "urgency": supervision.urgency,
                "signals": json.dumps(supervision.signals),
                "articles": json.dumps(articles, ensure_ascii=False),
                "text": text,
                "preferences": prompt_preferences(
                    learnt(ctx, state.email.mailbox, state.customer_address.first_name)
                ),
            },
        )
        # The supervisor's urgency (with the seed's rules) is the ticket's, whatever it says.
        result = result.model_copy(update={"urgency": supervision.urgency})
        return Step(update={"triage": result, "kb_relevance": relevance}, goto="act")

    specialist.__name__ = category
    return specialist


billing = specialist_node("billing")
technical = specialist_node("technical")
general = specialist_node("general")


def escalate(state: SupportState, ctx: NodeContext) -> Step:
    """A human takes the ticket: ``escalate_human`` without a specialist."""
    supervision, translation = state.supervision, state.translation
    if supervision is None or translation is None:
        raise NodeFailed("escalate needs the supervision and the translation")
    result = TriageResult(
        urgency=supervision.urgency,
        extracted_info=ExtractedInfo(
            product_area=supervision.issue_type,
            issue_type=supervision.issue_type,
            sentiment="negative",
            language=translation.original_language,
        ),
        recommended_action="escalate_human",
        reasoning=f"escalated by the supervisor: {supervision.reasoning}",
        confidence=1.0,
    )
    return Step(update={"triage": result}, goto="act")
