"""The planner's review policy: what holds whatever the model says.

Every ``ask_customer`` and every ``get_rate`` is reviewed by the agency, and so
are the tools the settings list and any plan made from the agency's feedback;
values the agency's rejection names or the quoting service refused are wrong
until the customer sends new ones.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .extract import REQUIRED_FIELDS, fields_named

ALWAYS_REVIEWED = frozenset({"ask_customer", "get_rate"})
"""Plans the agency always reviews, whatever the model and the settings say: every question
to the customer and every binding rate."""
MAILS_THE_CUSTOMER = frozenset({"ask_customer", "prepare_final_summary"})
"""Plans that send mail to the customer: unreviewed only where the no-relay rule allows
(``bindings.relay_refusal``: the authenticated sender, or an address already written to)."""
ARG_FIELDS = {"year": "vehicle_year", "make": "vehicle_make", "model": "vehicle_model"}
"""Tool argument names that differ from the customer_info field they come from."""


FIELD_ORDER = (*REQUIRED_FIELDS, "annual_mileage", "accidents_last_5_years")


def rejections(feedback: Mapping[str, Any] | None, last: Mapping[str, Any] | None) -> list[str]:
    """The fields whose current values are wrong: named by the agency's rejection, or refused
    by the quoting service (``invalid_vin``, ``invalid_input`` with a field)."""
    if feedback:
        if feedback.get("edited_inputs") is not None:
            return []
        return [
            name for name in fields_named(str(feedback.get("comment") or "")) if name in FIELD_ORDER
        ]
    if (
        last
        and last.get("status") == "error"
        and last.get("code") in ("invalid_vin", "invalid_input")
    ):
        field = ARG_FIELDS.get(str(last.get("field")), last.get("field"))
        return [str(field)] if field in FIELD_ORDER else []
    return []


def review_reasons(
    tool: str, model_asked: bool, review_tools: list[str], after_feedback: bool
) -> list[str]:
    """Why the agency must review a plan to call ``tool`` (empty: it runs without review).

    ``ask_customer`` and ``get_rate`` are always reviewed; the settings add tools; the
    model may ask; a plan made from the agency's feedback goes back to the agency.
    """
    if tool == "request_human_review":
        return []
    reasons = []
    if tool in ALWAYS_REVIEWED:
        reasons.append(
            "every question to the customer is reviewed"
            if tool == "ask_customer"
            else "every binding rate is reviewed"
        )
    if tool in review_tools:
        reasons.append(f"the agency reviews every {tool} (settings)")
    if model_asked:
        reasons.append("the planner asked for a review")
    if after_feedback:
        reasons.append("replanned from the agency's feedback")
    return reasons


__all__ = [
    "ALWAYS_REVIEWED",
    "ARG_FIELDS",
    "FIELD_ORDER",
    "MAILS_THE_CUSTOMER",
    "rejections",
    "review_reasons",
]
