"""The ``inboxflow`` command line."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import typer

from inboxflow.dev.cli import (
    approvals,
    check,
    dev,
    dlq,
    eval_shadow,
    evaluate,
    graphs,
    inbox,
    inspect,
    kb,
    local,
    mailbox,
    memory,
    outbox,
    person,
    repair,
    route,
    runs,
)
from inboxflow.dev.cli import tickets as support_tickets

app = typer.Typer(
    name="inboxflow",
    help="Email agents that run serverless on Google Cloud - and locally, in one command.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_show_locals=False,
)
COMMANDS: dict[str, Callable[..., Any]] = {
    "demo": local.demo,
    "run": local.run,
    "route": route.route,
    "eval": evaluate.evaluate,
    "shadow-report": eval_shadow.shadow_report,
    "graphs": graphs.graphs,
    "trace": inspect.trace,
    "traces": inspect.traces,
    "failures": inspect.failures,
    "replay": repair.replay,
    "retry": repair.retry,
    "runs": runs.runs,
    "send": dev.send,
    "approvals": approvals.approvals,
    "serve": approvals.serve,
    "inbox": inbox.inbox,
    "digest": inbox.digest,
    "outbox": outbox.outbox,
    "tickets": support_tickets.tickets,
    "ticket": support_tickets.ticket,
    "check": check.check,
    "person": person.person,
}
"""The commands, in the order ``inboxflow --help`` lists them."""
for command_name, command in COMMANDS.items():
    app.command(command_name)(command)

app.add_typer(kb.app, name="kb")
app.add_typer(mailbox.app, name="mailbox")
app.add_typer(memory.app, name="memory")
app.add_typer(dlq.app, name="dlq")
app.add_typer(dev.app, name="dev")

infra_app = typer.Typer(help="Terraform helpers.", no_args_is_help=True)
app.add_typer(infra_app, name="infra")


@infra_app.command("export")
def infra_export(
    path: str = typer.Option(
        "infra/graph.auto.tfvars.json", help="Where to write the tfvars file."
    ),
) -> None:
    """Write infra/graph.auto.tfvars.json from the graphs declared in code."""
    from inboxflow.dev.infra.export import write_graph_tfvars

    written = write_graph_tfvars(path)
    typer.echo(f"wrote {written}")


def main() -> None:
    """Console-script entry point (where spans go is read here, as the functions' entry does)."""
    from inboxflow import telemetry

    telemetry.configure(os.environ)
    app()
