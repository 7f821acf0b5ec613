"""review: may the draft go out on its own, or does a human approve it?

| node     | review                                                                       |
|----------|------------------------------------------------------------------------------|
| inputs   | classification, tool_results, draft                                          |
| outputs  | review {auto_dispatch, reasons}; draft under the edit rules when it pauses   |
| LLM task | none                                                                         |
| routes   | confidence >= 0.8 and not a complaint -> dispatch;                           |
|          | otherwise Pause(approve_draft, resume_node=dispatch) -> status ``waiting``   |

Besides the confidence and category rule, a draft also waits for a human
when the classifier flagged the email (a prompt-injection attempt), when the
category is spam (low-confidence spam reaches this point), or when a tool
failed and the draft was written without its data; and, with ``auto_send``,
when the reply would go to anyone but the authenticated sender or an address
the mailbox has already written to (a ``Reply-To`` elsewhere: the no-relay
rule, ``bindings.relay_refusal``). The reviewers come from
the settings; by default the mailbox owner reviews their own agent. The pause
says what approving does (a Gmail draft, or a sent reply with ``auto_send``).
"""

from __future__ import annotations

from ....engine.context import NodeContext
from ....engine.step import Pause, Step
from ....errors import NodeFailed
from ...kit import unreviewed_send_refusal
from ..pauses import APPROVE_DRAFT_KIND, SAVES_DRAFT, SENDS
from ..settings import AUTO_DISPATCH_CONFIDENCE, pipeline_settings
from ..state import COMPLAINT_FLAG, PipelineState, Review

APPROVE_DRAFT = APPROVE_DRAFT_KIND.name
REVIEW_BODY_CHARS = 20_000
"""The email as shown to the reviewer (longer mail is cut with a visible marker)."""


def review(state: PipelineState, ctx: NodeContext) -> Step:
    """Dispatch a confident draft; pause every other one for approval."""
    classification, draft = state.classification, state.draft
    if classification is None or draft is None:
        raise NodeFailed("review needs a classification and a draft")
    reasons: list[str] = []
    if classification.is_complaint:
        reasons.append("complaints are always approved by a human")
    if classification.category == "spam":
        reasons.append("possible spam: a human decides whether to answer")
    if classification.confidence < AUTO_DISPATCH_CONFIDENCE:
        reasons.append(
            f"confidence {classification.confidence:.2f} is below {AUTO_DISPATCH_CONFIDENCE:.2f}"
        )
    reasons.extend(f"flagged: {flag}" for flag in classification.flags if flag != COMPLAINT_FLAG)
    failed = [result.name for result in state.tool_results if not result.ok]
    if failed:
        reasons.append(f"tools failed: {', '.join(failed)}")
    settings = pipeline_settings(ctx.ports)
    # What approving will do, as dispatch decides it: complaints are never sent on their own.
    sends = settings.auto_send and not classification.is_complaint
    if sends and not reasons and (relay := unreviewed_send_refusal(ctx, draft.to, state.email)):
        reasons.append(relay)

    if not reasons:
        verdict = Review(
            auto_dispatch=True,
            reasons=[
                f"{classification.category} with confidence {classification.confidence:.2f} "
                f">= {AUTO_DISPATCH_CONFIDENCE:.2f}"
            ],
        )
        return Step(update={"review": verdict}, goto="dispatch")

    # The reviewer sees, and an unedited approval dispatches, the draft under the edit rules.
    payload = APPROVE_DRAFT_KIND.clean_payload(
        {"draft": draft.body, "to": draft.to, "subject": draft.subject}
    )
    draft = draft.model_copy(
        update={"body": payload["draft"], "to": payload["to"], "subject": payload["subject"]}
    )
    pause = Pause(
        kind=APPROVE_DRAFT,
        payload=payload,
        resume_node="dispatch",
        reviewers=settings.reviewers or (state.email.mailbox,),
        deadline_s=settings.approval_deadline_s,
        on_timeout=settings.approval_on_timeout,
        escalate_to=settings.escalate_to,
        context={
            "mailbox": state.email.mailbox,
            "sender": state.email.sender.formatted(),
            "subject": state.email.subject,
            "received_at": state.email.received_at.isoformat(),
            "email_text": state.email.body_for_model(REVIEW_BODY_CHARS),
            "category": classification.category,
            "confidence": classification.confidence,
            "reasons": reasons,
            **(SENDS if sends else SAVES_DRAFT),
        },
    )
    review_verdict = Review(auto_dispatch=False, reasons=reasons)
    return Step(update={"review": review_verdict, "draft": draft}, goto=pause)
