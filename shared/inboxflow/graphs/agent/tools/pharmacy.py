"""The pharmacy profile's own tools: ``search_drugs`` and ``manage_reservation``.

Both use the drug service (``ctx.ports.service(DRUGS)``; the composition root's default is
the embedded catalogue over the checkpoint store). A new reservation goes through the effect journal
with an id derived from its key: a re-run step finds it instead of reserving twice.
``manage_reservation`` is bound to the person who asked: it acts on their
reservations only, the patient taken from the binding, never from the arguments.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field

from ....engine.tools import Binding, Tool
from ..drugs import DRUGS
from .common import REQUESTER
from .view import view_of

if TYPE_CHECKING:
    from ....engine.context import NodeContext


class SearchDrugsParams(BaseModel):
    """Arguments of ``search_drugs``."""

    query: str = Field(min_length=1, description="Drug name or active substance.")
    limit: int = Field(default=5, ge=1, le=20, description="How many drugs at most.")


def search_drugs(params: SearchDrugsParams, ctx: NodeContext) -> dict[str, Any]:
    """Drugs matching the query with their stock per pharmacy."""
    return {"drugs": ctx.ports.service(DRUGS).search(params.query, params.limit)}


class ReservationParams(BaseModel):
    """Arguments of ``manage_reservation``."""

    action: Literal["create", "check", "cancel"] = Field(description="What to do.")
    drug_name: str = Field(min_length=1, description="The drug, as search_drugs names it.")
    pharmacy_id: str | None = Field(
        default=None, description="Pharmacy to reserve at (default: the first with stock)."
    )


def manage_reservation(params: ReservationParams, ctx: NodeContext) -> dict[str, Any]:
    """Create, check or cancel the asking patient's reservation of a drug."""
    view = view_of(ctx)
    patient = ctx.bound_subject(REQUESTER)
    drugs = ctx.ports.service(DRUGS)
    if params.action == "check":
        return {"reservations": drugs.reservations(patient, params.drug_name)}
    if params.action == "cancel":
        return ctx.effect(
            f"cancel_reservation#{view.call_index}",
            lambda key: drugs.cancel(patient, params.drug_name),
        )
    return ctx.effect(
        f"reservation#{view.call_index}",
        lambda key: drugs.reserve(patient, params.drug_name, params.pharmacy_id, key),
    )


PHARMACY_TOOLS = (
    Tool(
        "search_drugs",
        "Find drugs by name or active substance, with stock in each pharmacy.",
        SearchDrugsParams,
        search_drugs,
    ),
    Tool(
        "manage_reservation",
        "Create, check or cancel the patient's reservation of a drug at a pharmacy.",
        ReservationParams,
        manage_reservation,
        action=True,
        binds=Binding(REQUESTER, description="the patient who asked (the inquiry's reply_to)"),
    ),
)
