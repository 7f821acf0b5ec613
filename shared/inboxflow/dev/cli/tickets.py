"""``inboxflow tickets`` and ``inboxflow ticket ID``: the support desk's tickets in the store."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.table import Table

from inboxflow.dev.cli.options import dev_option, home_option, home_store
from inboxflow.dev.cli.render import cli_console
from inboxflow.graphs.support.tickets import TicketStore

STATUSES = ("active", "completed")


def tickets(
    customer: str | None = typer.Option(
        None, help="Only this customer id (cus_..., or guest_... for a sender the CRM lacks)."
    ),
    status: str | None = typer.Option(None, help="Only this status: active or completed."),
    as_json: bool = typer.Option(False, "--json", help="One JSON object per ticket."),
    dev: bool = dev_option(),
    home: Path = home_option(),
) -> None:
    """Support tickets: customer, id, status, outcome or assigned queue, messages, traces, subject.

    A customer the CRM did not know is marked ``(unknown)``.
    """
    if status is not None and status not in STATUSES:
        raise typer.BadParameter(f"--status must be active or completed, not {status!r}")
    found = TicketStore(home_store(home, dev)).list(customer, status)  # type: ignore[arg-type]
    if as_json:
        for ticket in found:
            typer.echo(json.dumps(ticket.model_dump(), ensure_ascii=False))
        return
    table = Table(title=f"{len(found)} tickets")
    for column in ("ticket", "status", "outcome / queue", "messages", "traces", "subject"):
        table.add_column(column)
    for ticket in found:
        table.add_row(
            ticket.key + ("" if ticket.customer_known else " (unknown)"),
            ticket.status,
            ticket.outcome or (f"queue: {ticket.assigned_queue}" if ticket.assigned_queue else "-"),
            str(len(ticket.messages)),
            str(len(ticket.traces)),
            ticket.subject[:60],
        )
    cli_console().print(table)


def ticket(
    ticket_id: str = typer.Argument(..., help="TKT- and 8 digits."),
    as_json: bool = typer.Option(False, "--json", help="The ticket as JSON."),
    dev: bool = dev_option(),
    home: Path = home_option(),
) -> None:
    """One ticket: its conversation (both directions) and the traces that worked on it."""
    found = TicketStore(home_store(home, dev)).find(ticket_id)
    if found is None:
        typer.echo(f"no ticket {ticket_id}", err=True)
        raise typer.Exit(1)
    if as_json:
        typer.echo(json.dumps(found.model_dump(), ensure_ascii=False))
        return
    typer.echo(f"{found.key}  {found.status}  {found.outcome or ''}  {found.subject}")
    if not found.customer_known:
        typer.echo(f"customer: unknown sender {found.customer_email} (not in the CRM; guest)")
    if found.assignment is not None:
        told = ", ".join(found.assignment.notified) or "nobody"
        typer.echo(
            f"assigned to the {found.assignment.queue} queue at {found.assignment.assigned_at}"
            f" (told: {told})"
        )
    for message in found.messages:
        arrow = "<-" if message.direction == "in" else "->"
        typer.echo(f"\n{arrow} {message.at}\n{message.text.strip()}")
    typer.echo(f"\ntraces: {', '.join(found.traces)}")
    if found.working:
        typer.echo(f"working: {json.dumps(found.working, ensure_ascii=False)[:400]}")
