"""``inboxflow eval collect OUT``: reviewers' decisions as a data set (``dev/eval/collect.py``)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import NoReturn

import typer

from inboxflow.dev.cli.options import dev_option, home_option, use_home
from inboxflow.dev.eval.spans import parse_since

PROJECT = typer.Option(
    None, "--project", help="Read Firestore in this Google Cloud project (not the embedded store)."
)


def collect(
    out: Path = typer.Argument(
        ..., help="The data set's folder (cases.yaml, mail/, collected.json)."
    ),
    since: str = typer.Option("30d", help="Decisions of this last span: 30d, 12h, 90m."),
    graph: str | None = typer.Option(None, help="Only this graph's decisions."),
    mailbox: str | None = typer.Option(None, help="Only decisions on mail to this mailbox."),
    keep_text: bool = typer.Option(
        False, "--keep-text", help="Keep the bodies (pseudonymised); else they are withheld."
    ),
    check: bool = typer.Option(
        False, "--check", help="Check OUT, collected before, against the erasure records instead."
    ),
    project: str | None = PROJECT,
    home: Path = home_option(),
    dev: bool = dev_option(),
) -> None:
    """Write a data set of `inboxflow eval` from reviewers' decisions (approve, edit, reject).

    Addresses, names and message ids are pseudonymised with a key kept in the deployment's
    store; the mailbox's own address stays. A deadline's decision is no label; an erased
    person's decisions are never collected. --check: exit 1 naming the cases of OUT whose
    person was erased since. The format: docs/evaluating.md.
    """
    from inboxflow.clock import SystemClock
    from inboxflow.dev.eval.collect import CollectOptions
    from inboxflow.dev.eval.collect import collect as collect_set
    from inboxflow.dev.eval.collected_records import check_collected
    from inboxflow.graphs import graph_registry
    from inboxflow.services import make_store
    from inboxflow.settings import Settings

    try:
        span_s = parse_since(since)
    except ValueError as exc:
        _fail(f"--since {exc}")
    use_home(home, dev)
    if project:
        os.environ.update(INBOXFLOW_STORE="firestore", GOOGLE_CLOUD_PROJECT=project)
    settings = Settings.from_env(os.environ)
    store = make_store(settings)
    try:
        if check:
            try:
                problems = check_collected(store, out)
            except ValueError as exc:
                _fail(str(exc))
            for problem in problems:
                typer.echo(problem)
            typer.echo(f"{out}: {len(problems)} case(s) to remove" if problems else f"{out}: ok")
            raise typer.Exit(1 if problems else 0)
        now = SystemClock().now()
        options = CollectOptions(
            since=now - span_s,
            graph=graph,
            mailbox=mailbox,
            keep_text=keep_text,
            mail_in_store=settings.workspace == "store",
        )
        try:
            result = collect_set(store, graph_registry(os.environ), out, options, now)
        except ValueError as exc:
            _fail(str(exc))
    finally:
        store.close()
    skipped = ", ".join(f"{n} ({why})" for why, n in result.skipped.items())
    typer.echo(
        f"wrote {out}: {len(result.cases)} case(s)"
        + (f"; skipped {skipped}" if skipped else "")
        + ("" if keep_text else "; bodies withheld (--keep-text keeps them)")
    )


def _fail(message: str) -> NoReturn:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(2)
