"""The planner's tools. Each returns the status contract: ``{"status": "success", "data": ...}``
or ``{"status": "error", "message": ..., "code": ..., "field": ..., "retryable": ...}``.

| tool                  | what it does                                                    |
|-----------------------|-----------------------------------------------------------------|
| quote_initiate        | opens a quote for the applicant (quoting service)               |
| add_driver            | adds a driver to the quote                                      |
| add_vehicle           | adds a vehicle (the service checks the VIN's check digit)       |
| get_rate              | rates the quote (binding until ``valid_until``)                 |
| ask_customer          | emails the customer, in their thread, for the missing fields    |
| prepare_final_summary | emails the customer the rated quote                             |
| request_human_review  | tells the agency's reviewers; the trace then ends needs_review  |

The emails greet and sign off as the agency's edits taught (:mod:`..reply_learning`).
Every write happens once per trace step: quoting calls take the effect
journal's key as their idempotency key, emails are stamped with it and
found again by it after a crash (``ctx.effect``).

Each tool declares what it is bound to (``binds``), resolved per run by
``nodes.tools.bound_to`` from the thread and the state, never from the model:
emails go to the customer who wrote (the address is taken from the binding,
not from the arguments), quote calls name only the quote this conversation
opened, and human review requests go to the agency's reviewers. The runtime
refuses any other call and the trace ends ``needs_review``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field, field_validator

from ...engine.tools import Binding, Tool, ToolRegistry
from ...mail import Email, reply_subject
from ...mail.loop_guard import refuse_recipient
from ...notices import notify_once
from ..kit import workspace_of
from ..reply_learning import apply_preferences, learnt
from .extract import FIELD_LABELS
from .quoting import QUOTING, Applicant, Driver, QuotingError, QuotingService, Vehicle

if TYPE_CHECKING:
    from ...engine.context import NodeContext

CUSTOMER = Binding("customer", description="the customer who wrote (the thread's sender)")
THIS_QUOTE = Binding("quote", "quote_id", "id", "the quote this conversation opened")
AGENCY = Binding("agency", description="the agency's reviewers (planner settings)")


@dataclass(frozen=True)
class Thread:
    """What the email tools need of the conversation: where to write and to whom.

    Attributes:
        email: the first email (its thread, mailbox and sender).
        reply_to: the Message-ID of the customer's latest email (threading).
        references: Message-IDs of the thread so far, oldest first.
        first_name: how to greet the customer.
    """

    email: Email
    reply_to: str
    references: tuple[str, ...]
    first_name: str


def _thread(ctx: NodeContext) -> Thread:
    thread = ctx.subject  # the conversation the email tools write in
    if not isinstance(thread, Thread):
        raise RuntimeError("the planner's email tools run inside its tools node (no thread given)")
    return thread


def success(data: Any) -> dict[str, Any]:
    """The contract's success."""
    return {"status": "success", "data": data}


def failure(
    message: str, code: str = "error", field: str | None = None, retryable: bool = False
) -> dict[str, Any]:
    """The contract's error."""
    return {
        "status": "error",
        "message": message,
        "code": code,
        "field": field,
        "retryable": retryable,
    }


def _quoting(
    ctx: NodeContext, name: str, call: Callable[[QuotingService, str], BaseModel]
) -> dict[str, Any]:
    """``call`` on the quoting service once (the journal's key is its idempotency key).

    The effect is ``keyed``: the service applies a key once and answers a repeat with
    the first result (``QuotingService``), so the journal writes only ``done``, no
    ``started`` before the call (one write per call, not two).
    """

    def once(key: str) -> dict[str, Any]:
        return call(ctx.ports.service(QUOTING), key).model_dump(mode="json")

    try:
        return success(ctx.effect(name, once, keyed=True))
    except QuotingError as exc:
        return failure(exc.message, exc.code, exc.field, exc.retryable)


# --- quoting ---------------------------------------------------------------------------


class QuoteRef(BaseModel):
    """Arguments naming a quote."""

    quote_id: str = Field(min_length=1, description="The quote, as quote_initiate returned it.")


class AddDriverParams(Driver):
    """Arguments of ``add_driver``: the quote and the driver."""

    quote_id: str = Field(min_length=1)


class AddVehicleParams(Vehicle):
    """Arguments of ``add_vehicle``: the quote and the vehicle."""

    quote_id: str = Field(min_length=1)


def quote_initiate(params: Applicant, ctx: NodeContext) -> dict[str, Any]:
    """Open a quote for the applicant."""
    return _quoting(ctx, "quote_initiate", lambda quoting, key: quoting.initiate(params, key))


def add_driver(params: AddDriverParams, ctx: NodeContext) -> dict[str, Any]:
    """Add a driver to the quote."""
    driver = Driver.model_validate(params.model_dump(exclude={"quote_id"}))
    return _quoting(
        ctx, "add_driver", lambda quoting, key: quoting.add_driver(params.quote_id, driver, key)
    )


def add_vehicle(params: AddVehicleParams, ctx: NodeContext) -> dict[str, Any]:
    """Add a vehicle to the quote."""
    vehicle = Vehicle.model_validate(params.model_dump(exclude={"quote_id"}))
    return _quoting(
        ctx, "add_vehicle", lambda quoting, key: quoting.add_vehicle(params.quote_id, vehicle, key)
    )


def get_rate(params: QuoteRef, ctx: NodeContext) -> dict[str, Any]:
    """Rate the quote (binding)."""
    return _quoting(ctx, "get_rate", lambda quoting, key: quoting.rate(params.quote_id, key))


# --- email to the customer ---------------------------------------------------------------


class AskCustomerParams(BaseModel):
    """Arguments of ``ask_customer``."""

    fields: list[str] = Field(min_length=1, description="The fields to ask for.")
    reason: str = Field(default="", max_length=1000, description="Why, for the customer.")

    @field_validator("fields")
    @classmethod
    def _known(cls, value: list[str]) -> list[str]:
        unknown = [name for name in value if name not in FIELD_LABELS]
        if unknown:
            raise ValueError(f"unknown fields {unknown}; fields: {sorted(FIELD_LABELS)}")
        return list(dict.fromkeys(value))


def question_text(first_name: str, fields: list[str], reason: str, signature: str) -> str:
    """The question email's body."""
    greeting = f"Hi {first_name}," if first_name else "Hello,"
    lines = [
        greeting,
        "",
        "Thank you for asking us for a car insurance quote. To prepare it we still need:",
        "",
        *[f"- {FIELD_LABELS[name]}" for name in fields],
        "",
    ]
    if reason:
        lines += [reason, ""]
    lines += ["Just reply to this email with these details.", "", "Best regards,", signature]
    return "\n".join(lines)


def _send(ctx: NodeContext, name: str, subject: str, body: str) -> dict[str, Any]:
    """Send ``body`` to the customer in their thread, once (journal + trace header)."""
    thread = _thread(ctx)
    email = thread.email
    to = ctx.bound_subject(CUSTOMER.subject)
    refused = refuse_recipient(to, email)
    if refused:
        return failure(f"not sent (loop protection): {refused}", "refused")
    workspace = workspace_of(ctx, email.mailbox)

    def receipt(message: dict[str, Any] | None) -> dict[str, Any] | None:
        if message is None:
            return None
        return {"message_id": message.get("id"), "to": to, "subject": subject, "body": body}

    sent = ctx.effect(
        name,
        lambda key: (
            receipt(
                workspace.send_reply(
                    to,
                    subject,
                    body,
                    email.thread_id,
                    key,
                    in_reply_to=thread.reply_to,
                    references=list(thread.references),
                )
            )
            or {}
        ),
        lambda key: receipt(workspace.find_by_trace_key(key)),
    )
    return success(sent)


def question_draft(ctx: NodeContext, thread: Thread, params: AskCustomerParams) -> str:
    """The question email as it goes out: :func:`question_text` with the greeting and
    sign-off the agency's edits taught (:mod:`..reply_learning`)."""
    body = question_text(thread.first_name, params.fields, params.reason, thread.email.mailbox)
    return apply_preferences(body, learnt(ctx, thread.email.mailbox, thread.first_name))


def ask_customer(params: AskCustomerParams, ctx: NodeContext) -> dict[str, Any]:
    """Email the customer, in their thread, for the missing fields (once)."""
    thread = _thread(ctx)
    body = question_draft(ctx, thread, params)
    result = _send(ctx, "ask_customer", reply_subject(thread.email.subject), body)
    if result["status"] == "success":
        result["data"]["fields"] = params.fields
    return result


def _dollars(cents: int) -> str:
    return f"${cents / 100:,.2f}"


def summary_text(first_name: str, quote: dict[str, Any], signature: str) -> str:
    """The final summary email's body, from the rated quote."""
    rate = quote["rate"]
    lines = [
        f"Hi {first_name}," if first_name else "Hello,",
        "",
        f"Here is your car insurance quote {quote['quote_id']}:",
        "",
    ]
    for driver in quote["drivers"]:
        lines.append(
            f"- Driver: {driver['first_name']} {driver['last_name']}, licensed "
            f"{driver['years_licensed']} years ({driver['license_state']})"
        )
    for vehicle in quote["vehicles"]:
        lines.append(
            f"- Vehicle: {vehicle['year']} {vehicle['make']} {vehicle['model']}, VIN {vehicle['vin']}"
        )
    lines += [
        "",
        f"Premium: {_dollars(rate['annual_premium_cents'])} a year "
        f"({_dollars(rate['monthly_premium_cents'])} a month), {rate['term_months']}-month term.",
        f"This price holds until {rate['valid_until']}.",
        "",
        "Reply to this email to go ahead or with any question.",
        "",
        "Best regards,",
        signature,
    ]
    return "\n".join(lines)


def prepare_final_summary(params: QuoteRef, ctx: NodeContext) -> dict[str, Any]:
    """Email the customer the rated quote (once)."""
    thread = _thread(ctx)
    try:
        quote = ctx.ports.service(QUOTING).get(params.quote_id).model_dump(mode="json")
    except QuotingError as exc:
        return failure(exc.message, exc.code, exc.field, exc.retryable)
    if quote.get("rate") is None:
        return failure(f"quote {params.quote_id} is not rated yet", "not_ratable")
    body = summary_text(thread.first_name, quote, thread.email.mailbox)
    body = apply_preferences(body, learnt(ctx, thread.email.mailbox, thread.first_name))
    subject = reply_subject(thread.email.subject)
    result = _send(ctx, "final_summary", subject, body)
    if result["status"] == "success":
        result["data"]["quote_id"] = params.quote_id
    return result


# --- the agency ----------------------------------------------------------------------------


class HumanReviewParams(BaseModel):
    """Arguments of ``request_human_review``."""

    reason: str = Field(min_length=1, max_length=2000, description="What a human must look at.")


def request_human_review(params: HumanReviewParams, ctx: NodeContext) -> dict[str, Any]:
    """Tell each of the agency's reviewers, once (the tools node then ends the trace)."""
    thread = _thread(ctx)
    email = thread.email
    reviewers = list(ctx.bound.get(AGENCY.subject, ()))
    approvals = ctx.ports.approvals
    notifier = getattr(approvals, "notifier", None)
    told: list[str] = []
    if notifier is not None:
        subject = f"Quote needs a human: {email.subject}"
        text = (
            f"The quoting assistant stopped on the request of {email.sender.formatted()} "
            f"(trace {ctx.trace_id}).\nWhy: {params.reason}\n\n"
            f"The customer wrote:\n{email.body_for_model(4000)}\n"
        )
        told = notify_once(ctx, notifier, reviewers, subject, text, "human_review_notice_{index}")
    at = datetime.fromtimestamp(ctx.clock.now(), UTC).isoformat()
    return success({"reason": params.reason, "notified": told, "at": at})


PLANNER_TOOLS = ToolRegistry(
    [
        Tool(
            "quote_initiate",
            "Open a PPA quote for the applicant.",
            Applicant,
            quote_initiate,
            action=True,
            binds=CUSTOMER,
        ),
        Tool(
            "add_driver",
            "Add a driver to the quote.",
            AddDriverParams,
            add_driver,
            action=True,
            binds=THIS_QUOTE,
        ),
        Tool(
            "add_vehicle",
            "Add a vehicle to the quote (the VIN is checked).",
            AddVehicleParams,
            add_vehicle,
            action=True,
            binds=THIS_QUOTE,
        ),
        Tool(
            "get_rate",
            "Rate the quote (binding).",
            QuoteRef,
            get_rate,
            action=True,
            binds=THIS_QUOTE,
        ),
        Tool(
            "ask_customer",
            "Email the customer, in their thread, for the missing fields; then wait for the reply.",
            AskCustomerParams,
            ask_customer,
            action=True,
            binds=CUSTOMER,
        ),
        Tool(
            "prepare_final_summary",
            "Email the customer the rated quote.",
            QuoteRef,
            prepare_final_summary,
            action=True,
            binds=(CUSTOMER, THIS_QUOTE),
        ),
        Tool(
            "request_human_review",
            "Stop and hand the conversation to the agency (it ends the trace needs_review).",
            HumanReviewParams,
            request_human_review,
            action=True,
            binds=AGENCY,
        ),
    ]
)
"""The planner graph's tool registry."""
