"""The offline model's deterministic policy for the planner's LLM task (see :mod:`.tasks`).

The offline policy reads the state as a model would (the ``$state`` JSON of the
prompt): the agency's feedback first, then the last tool's result (retry a
transient failure, ask the customer for a field the quoting service refused,
human review after repeated failures), then what is missing for the next step
of a quote: open it, add the driver, add the vehicle, rate it, send the summary.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from .extract import (
    DRIVER_FIELDS,
    REFUSABLE,
    REQUIRED_FIELDS,
    VEHICLE_FIELDS,
    extract,
    fields_named,
    missing,
    refusal,
)
from .request_kind import not_a_quote, request_kind
from .review_policy import ARG_FIELDS, FIELD_ORDER
from .state import CustomerFacts, CustomerInfo, Message
from .tasks import PlannerDecision


def _call(
    tool: str, args: Mapping[str, Any], reasoning: str, info: CustomerInfo, review: bool = False
) -> PlannerDecision:
    return PlannerDecision(
        reasoning=reasoning,
        customer_info=facts(info),
        action="call_tool",
        tool_name=tool,
        args_json=json.dumps(dict(args), sort_keys=True),
        request_review=review,
    )


def facts(info: CustomerInfo) -> CustomerFacts:
    """The facts of ``info`` as a model answers them: what was read, a refused VIN included
    (the planner node refuses it again through the same checks, and records it)."""
    read = CustomerFacts.model_validate(info.model_dump(exclude={"rejected"}))
    for name in REFUSABLE:
        if getattr(read, name) is None and info.rejected.get(name):
            setattr(read, name, info.rejected[name][-1])
    return read


def applicant_args(info: CustomerInfo) -> dict[str, Any]:
    """``quote_initiate``'s arguments from what is known."""
    return {
        "first_name": info.first_name,
        "last_name": info.last_name,
        "email": info.email,
        "date_of_birth": info.date_of_birth,
        "zip_code": info.zip_code,
    }


def driver_args(info: CustomerInfo, quote_id: str) -> dict[str, Any]:
    """``add_driver``'s arguments: the applicant drives."""
    return {
        "quote_id": quote_id,
        "first_name": info.first_name,
        "last_name": info.last_name,
        "date_of_birth": info.date_of_birth,
        "license_number": info.license_number,
        "license_state": info.license_state,
        "years_licensed": info.years_licensed,
        "accidents_last_5_years": info.accidents_last_5_years or 0,
    }


def vehicle_args(info: CustomerInfo, quote_id: str) -> dict[str, Any]:
    """``add_vehicle``'s arguments."""
    return {
        "quote_id": quote_id,
        "vin": info.vin,
        "year": info.vehicle_year,
        "make": info.vehicle_make,
        "model": info.vehicle_model,
        "annual_mileage": info.annual_mileage or 12000,
    }


def offline_plan(inputs: Mapping[str, Any]) -> PlannerDecision:
    """The deterministic planner the offline model plays (see the module docstring)."""
    view = json.loads(str(inputs["state"]))
    messages = [Message.model_validate(m) for m in view.get("messages", [])]
    info = extract(
        messages,
        CustomerInfo.model_validate(view.get("customer_info") or {}),
        view.get("sender", ""),
    )
    quote = view.get("quote_session") or None
    last = view.get("last_tool_outputs") or None
    feedback = view.get("human_feedback") or None
    failures: dict[str, int] = view.get("failures") or {}
    max_attempts = int(view.get("max_tool_attempts", 3))

    if feedback:
        tool = feedback.get("tool_name") or "?"
        comment = (feedback.get("comment") or "").strip()
        if feedback.get("edited_inputs") is not None:
            return _call(
                tool,
                feedback["edited_inputs"],
                f"the agency edited the {tool} inputs: run them as edited",
                info,
                review=True,
            )
        named = [name for name in fields_named(comment) if name in FIELD_ORDER]
        if named:  # the policy has marked their values wrong: ask the customer again
            reason = f"the agency found a problem with the {', '.join(named)}: {comment}"
            return _call(
                "ask_customer", {"fields": named, "reason": _customer_reason(named)}, reason, info
            )
        return _call(
            "request_human_review",
            {"reason": f"the agency rejected {tool}: {comment or 'no reason given'}"},
            "the agency's feedback names nothing the customer can fix",
            info,
        )

    last_error = last if last and last.get("status") == "error" else None
    if last_error and _corrected_since(last_error, info):
        last_error = None  # the customer already sent a new value: go on with it
    if last_error:
        last = last_error
        tool = str(last.get("tool"))
        field = ARG_FIELDS.get(str(last.get("field")), last.get("field"))
        if failures.get(tool, 0) >= max_attempts:
            return _call(
                "request_human_review",
                {"reason": f"{tool} failed {failures[tool]} times: {last.get('message')}"},
                "repeated failures",
                info,
            )
        if last.get("retryable"):
            return _call(
                tool,
                last.get("args") or {},
                f"{tool} failed for a moment ({last.get('message')}): retry",
                info,
            )
        if last.get("code") in ("invalid_vin", "invalid_input") and field in FIELD_ORDER:
            return _call(
                "ask_customer",
                {
                    "fields": [field],
                    "reason": _customer_reason([field], str(last.get("message") or "")),
                },
                f"{tool} refused {field}: ask the customer",
                info,
            )
        return _call(
            "request_human_review",
            {"reason": f"{tool} failed: {last.get('message')}"},
            "an error the customer cannot fix",
            info,
        )

    asked = last and last.get("tool") == "ask_customer" and last.get("status") == "success"
    if asked and not _replied_since_question(messages):
        return PlannerDecision(
            reasoning="the question is sent: wait for the customer's reply",
            customer_info=facts(info),
            action="wait_customer",
        )
    if last and last.get("tool") == "prepare_final_summary" and last.get("status") == "success":
        return PlannerDecision(
            reasoning="the customer has the quote summary",
            customer_info=facts(info),
            action="finish",
        )

    first = next((m for m in messages if m.role == "customer"), None)
    kind = request_kind(first.content) if quote is None and first is not None else None
    if first is not None and kind is not None and kind.for_the_agency:
        reason = f"not a quote request ({not_a_quote(first.content)}): the agency takes it"
        return _call("request_human_review", {"reason": reason}, reason, info)
    if kind is not None and kind.kind == "unclear" and not _asked_before(messages):
        reason = "the email asks for no quote and gives none of its details: a person reads it"
        return _call("request_human_review", {"reason": reason}, reason, info)
    needed = missing(info, _still_needed(quote))
    if needed:
        args: dict[str, Any] = {"fields": needed}
        invalid = _refused(info, needed)
        if invalid:
            args["reason"] = invalid
        return _call("ask_customer", args, f"missing: {', '.join(needed)}", info)
    if quote is None:
        return _call(
            "quote_initiate",
            applicant_args(info),
            "everything the quote needs is known: open it",
            info,
        )
    if not quote.get("drivers"):
        return _call(
            "add_driver", driver_args(info, quote["quote_id"]), "the applicant is the driver", info
        )
    if not quote.get("vehicles"):
        return _call("add_vehicle", vehicle_args(info, quote["quote_id"]), "add the car", info)
    if not quote.get("rate"):
        return _call(
            "get_rate",
            {"quote_id": quote["quote_id"]},
            "driver and vehicle are on the quote: rate it",
            info,
        )
    return _call(
        "prepare_final_summary",
        {"quote_id": quote["quote_id"]},
        "the quote is rated: send the customer the summary",
        info,
    )


def _refused(info: CustomerInfo, fields: list[str]) -> str:
    """Why the values given for ``fields`` were refused when read (a VIN's check digit), for
    the question: the customer sees what was wrong with what they sent."""
    problems = []
    for name in fields:
        for value in info.rejected.get(name, [])[-1:]:
            problem = refusal(name, value)
            if problem:
                problems.append(problem[0].upper() + problem[1:])
    if not problems:
        return ""
    return " ".join(f"{p}." for p in problems) + " Please check it on your documents."


def _corrected_since(error: Mapping[str, Any], info: CustomerInfo) -> bool:
    """Whether the field a call was refused for has a new value (not one found wrong)."""
    if error.get("code") not in ("invalid_vin", "invalid_input"):
        return False
    field = ARG_FIELDS.get(str(error.get("field")), error.get("field"))
    return field in FIELD_ORDER and getattr(info, str(field)) not in (None, "")


def _still_needed(quote: Mapping[str, Any] | None) -> tuple[str, ...]:
    if quote is None:
        return REQUIRED_FIELDS
    needed: tuple[str, ...] = ()
    if not quote.get("drivers"):
        needed += DRIVER_FIELDS
    if not quote.get("vehicles"):
        needed += VEHICLE_FIELDS
    return needed


def _asked_before(messages: list[Message]) -> bool:
    return any(message.role == "agent" for message in messages)


def _replied_since_question(messages: list[Message]) -> bool:
    for message in reversed(messages):
        if message.role == "customer":
            return True
        if message.role == "agent":
            return False
    return False


def _customer_reason(fields: list[str], detail: str = "") -> str:
    if fields == ["vin"]:
        return "The VIN we have for your car could not be verified; please check it on your registration."
    return detail or "What we have could not be verified; please check it."


__all__ = ["offline_plan"]
