"""``inboxflow route FILE...``: which rule of inboxflow.yaml each email matches, and why not the others."""

from __future__ import annotations

import os
from pathlib import Path

import typer
from rich.markup import escape

from inboxflow.dev.cli.local import load_routing
from inboxflow.dev.cli.render import cli_console
from inboxflow.graphs import graph_registry
from inboxflow.mail import EmailParseError, load_email_file
from inboxflow.mail.loop_guard import auto_reply_block
from inboxflow.routing import route as decide


def route(
    files: list[Path] = typer.Argument(..., help=".eml or .json emails"),
    mailbox: str | None = typer.Option(
        None, help="Apply this mailbox's rules (default: the mailbox each email was sent to)."
    ),
) -> None:
    """Print, per email, the rule that matched (and for ``forwarded_from`` the signal that named
    the address), the graph and profile, and why earlier rules did not."""
    config = load_routing(graph_registry(os.environ))
    console = cli_console(highlight=False)
    console.print(
        f"rules: {escape(config.source or 'no inboxflow.yaml (every email to pipeline)')}"
    )
    errors = 0
    for path in files:
        try:
            email = load_email_file(path)
        except (EmailParseError, OSError) as exc:
            console.print(f"\n[red]{escape(str(path))}: cannot read: {escape(str(exc))}[/red]")
            errors += 1
            continue
        decision = decide(email, config, mailbox)
        console.print(
            f"\n[bold]{escape(str(path))}[/bold]  from {escape(email.sender.address)}  "
            f"subject {escape(repr(email.subject[:70]))}  mailbox {escape(decision.mailbox or '-')}"
        )
        for rule, why in decision.reasons_not_matched:
            console.print(f"  rule {escape(repr(rule))} did not match: {escape(why)}")
        matched = f"rule {decision.rule!r}" if decision.rule else "no rule matched (default)"
        console.print(
            f"  → {escape(matched)}: graph [bold]{escape(decision.graph)}[/bold]"
            f"  profile {escape(decision.profile or '-')}"
        )
        if decision.signal:
            console.print(f"    {escape(decision.signal)}")
        blocked = auto_reply_block(email)
        if blocked:
            console.print(f"  [magenta]loop protection: not answered ({escape(blocked)})[/magenta]")
    if errors:
        raise typer.Exit(1)
