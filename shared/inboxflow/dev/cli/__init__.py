"""The ``inboxflow`` command line."""

from __future__ import annotations

import typer

from inboxflow.dev.cli import (
    approvals,
    dev,
    graphs,
    inspect,
    kb,
    local,
    mailbox,
    memory,
    route,
    runs,
)

app = typer.Typer(
    name="inboxflow",
    help="Email agents that run serverless on Google Cloud - and locally, in one command.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_show_locals=False,
)
app.command("demo")(local.demo)
app.command("run")(local.run)
app.command("route")(route.route)
app.command("graphs")(graphs.graphs)
app.command("trace")(inspect.trace)
app.command("traces")(inspect.traces)
app.command("failures")(inspect.failures)
app.command("runs")(runs.runs)
app.command("dev")(dev.dev)
app.command("send")(dev.send)
app.command("approvals")(approvals.approvals)
app.command("serve")(approvals.serve)

app.add_typer(kb.app, name="kb")
app.add_typer(mailbox.app, name="mailbox")
app.add_typer(memory.app, name="memory")

infra_app = typer.Typer(help="Terraform helpers.", no_args_is_help=True)
app.add_typer(infra_app, name="infra")


@infra_app.command("export")
def infra_export(
    path: str = typer.Option(
        "infra/graph.auto.tfvars.json", help="Where to write the tfvars file."
    ),
) -> None:
    """Write infra/graph.auto.tfvars.json from the graphs declared in code."""
    from inboxflow.infra_export import write_graph_tfvars

    written = write_graph_tfvars(path)
    typer.echo(f"wrote {written}")


def main() -> None:
    """Console-script entry point."""
    app()
