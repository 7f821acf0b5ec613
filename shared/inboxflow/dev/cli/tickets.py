"""``inboxflow tickets`` and ``inboxflow ticket ID``: the support desk's tickets in the store."""

from __future__ import annotations

import json

import typer
from rich.console import Console
from rich.table import Table

from inboxflow.graphs.support.tickets import TicketStore
from inboxflow.services import make_store
from inboxflow.settings import Settings

STATUSES = ("active", "completed")


def tickets(
    customer: str | None = typer.Option(None, help="Only this customer id (cus_...)."),
    status: str | None = typer.Option(None, help="Only this status: active or completed."),
    as_json: bool = typer.Option(False, "--json", help="One JSON object per ticket."),
) -> None:
    """Support tickets: customer, id, status, outcome or queue, messages, traces, subject."""
    if status is not None and status not in STATUSES:
        raise typer.BadParameter(f"--status must be active or completed, not {status!r}")
    found = TicketStore(make_store(Settings.from_env())).list(customer, status)  # type: ignore[arg-type]
    if as_json:
        for ticket in found:
            typer.echo(json.dumps(ticket.model_dump(), ensure_ascii=False))
        return
    table = Table(title=f"{len(found)} tickets")
    for column in ("ticket", "status", "outcome / queue", "messages", "traces", "subject"):
        table.add_column(column)
    for ticket in found:
        table.add_row(
            ticket.key,
            ticket.status,
            ticket.outcome or str(ticket.working.get("queue", "-")),
            str(len(ticket.messages)),
            str(len(ticket.traces)),
            ticket.subject[:60],
        )
    Console().print(table)


def ticket(
    ticket_id: str = typer.Argument(..., help="TKT- and 8 digits."),
    as_json: bool = typer.Option(False, "--json", help="The ticket as JSON."),
) -> None:
    """One ticket: its conversation (both directions) and the traces that worked on it."""
    found = TicketStore(make_store(Settings.from_env())).find(ticket_id)
    if found is None:
        typer.echo(f"no ticket {ticket_id}", err=True)
        raise typer.Exit(1)
    if as_json:
        typer.echo(json.dumps(found.model_dump(), ensure_ascii=False))
        return
    typer.echo(f"{found.key}  {found.status}  {found.outcome or ''}  {found.subject}")
    for message in found.messages:
        arrow = "<-" if message.direction == "in" else "->"
        typer.echo(f"\n{arrow} {message.at}\n{message.text.strip()}")
    typer.echo(f"\ntraces: {', '.join(found.traces)}")
    if found.working:
        typer.echo(f"working: {json.dumps(found.working, ensure_ascii=False)[:400]}")
