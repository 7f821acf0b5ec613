"""``inboxflow graphs``: every graph the deployment serves, as declared; ``--mermaid NAME`` draws one."""

from __future__ import annotations

import os
import re

import typer
from rich.markup import escape
from rich.table import Table

from inboxflow.dev.cli.render import cli_console
from inboxflow.engine.graph import Graph, Node
from inboxflow.engine.step import END
from inboxflow.graphs import graph_registry


def mermaid(graph: Graph) -> str:
    """The graph as a Mermaid flowchart: entry, nodes with their capabilities, declared routes.

    A node that pauses is drawn as a hexagon; the pause's resume node is one of its routes.
    """
    ids = {name: _mermaid_id(name) for name in graph.nodes}
    lines = ["flowchart TD", '    __start__(["start"])', '    __end__(["end"])']
    for node in graph.nodes.values():
        flags = [flag for flag in capabilities(node) if not flag.startswith("tools")]
        if node.tools:
            flags.append(f"{len(node.tools)} tools")
        label = node.name + (f"<br/><small>{' · '.join(flags)}</small>" if flags else "")
        shape = '{{{{"{}"}}}}' if node.pauses else '["{}"]'
        lines.append(f"    {ids[node.name]}{shape.format(label)}")
    lines.append(f"    __start__ --> {ids[graph.entry]}")
    for node in graph.nodes.values():
        for target in node.routes:
            lines.append(f"    {ids[node.name]} --> {'__end__' if target == END else ids[target]}")
    return "\n".join(lines) + "\n"


def _mermaid_id(name: str) -> str:
    # "end" and friends are Mermaid keywords: every node id gets a prefix.
    return "n_" + re.sub(r"\W", "_", name)


def capabilities(node: Node) -> list[str]:
    """What a node is allowed to do, as declared (drives IAM and secrets)."""
    flags = [
        label
        for declared, label in (
            (node.uses_llm, "llm"),
            (node.uses_gmail, "gmail"),
            (node.pauses, "pauses"),
        )
        if declared
    ]
    if node.tools:
        flags.append("tools: " + ", ".join(node.tools))
    return flags


def graphs(
    mermaid_of: str | None = typer.Option(
        None, "--mermaid", metavar="NAME", help="Print graph NAME as a Mermaid flowchart."
    ),
) -> None:
    """Every graph: its nodes and routes, pause kinds (with their choices) and tools."""
    try:
        registry = graph_registry(os.environ)
    except ValueError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    if mermaid_of is not None:
        graph = registry.get(mermaid_of)
        if graph is None:
            typer.echo(
                f"error: unknown graph {mermaid_of!r}; graphs: {', '.join(sorted(registry))}",
                err=True,
            )
            raise typer.Exit(2)
        typer.echo(mermaid(graph), nl=False)
        return
    console = cli_console()
    for graph in registry.values():
        console.print(_describe(graph))
        console.print(_nodes(graph))


def _describe(graph: Graph) -> str:
    lines = [
        f"[bold]{escape(graph.name)}[/bold]  {escape(graph.description)}",
        f"  entry: {graph.entry}   takes a profile: {'yes' if graph.takes_profile else 'no'}",
    ]
    for kind in graph.pause_kinds.values():
        choices = ", ".join(choice.value for choice in kind.choices)
        editable = ", ".join(field.name for field in kind.editable)
        lines.append(
            f"  pause kind [bold]{escape(kind.name)}[/bold] ({escape(kind.title)}; waits for "
            f"{kind.waits_for}): choices {choices}" + (f"; editable {editable}" if editable else "")
        )
    tools = graph.tools.names()
    lines.append(f"  tools: {', '.join(tools) if tools else '(none)'}")
    return "\n".join(lines)


def _nodes(graph: Graph) -> Table:
    table = Table(expand=True, show_lines=False)
    for column in ("node", "routes to", "capabilities", "memory", "timeout"):
        table.add_column(column, overflow="fold")
    for node in graph.nodes.values():
        table.add_row(
            node.name,
            ", ".join("END" if target == END else target for target in node.routes),
            escape("; ".join(capabilities(node)) or "-"),
            f"{node.memory_mb} MB",
            f"{node.timeout_s} s",
        )
    return table
