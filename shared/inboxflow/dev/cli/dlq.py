"""``inboxflow dlq list|show|replay``: the dead-letter subscriptions on Pub/Sub.

Reads the project of ``GOOGLE_CLOUD_PROJECT`` (Google Cloud, or the emulator
of ``PUBSUB_EMULATOR_HOST``), or with ``--dev`` the emulated cloud running on
``--home``. The embedded default has no Pub/Sub and so no dead-letter topics:
what fails there is recorded (``inboxflow failures``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.table import Table

from inboxflow.dev.cli.options import dev_option, home_option, use_home
from inboxflow.dev.cli.render import cli_console
from inboxflow.settings import Settings

if TYPE_CHECKING:
    from inboxflow.dev.ops.pubsub_dead_letters import DeadLetter, DeadLetterQueues

app = typer.Typer(
    help="Dead-letter subscriptions: list, show and replay what the functions could not take.",
    no_args_is_help=True,
)

HOME = home_option()
DEV = dev_option()
SUBSCRIPTION = typer.Option(
    None, "--subscription", "-s", help="Only this dead-letter subscription (default: all)."
)
LIMIT = typer.Option(100, help="At most this many messages per subscription.")


@contextmanager
def _queues(home: Path, dev: bool) -> Iterator[DeadLetterQueues]:
    use_home(home, dev)
    settings = Settings.from_env(os.environ)
    if settings.bus != "pubsub":
        typer.echo(
            "error: the embedded default has no Pub/Sub, so no dead-letter topics; what failed "
            "there is listed by `inboxflow failures`. Use --dev for `inboxflow dev`, or set "
            "GOOGLE_CLOUD_PROJECT (and INBOXFLOW_BUS=pubsub) for Google Cloud.",
            err=True,
        )
        raise typer.Exit(2)
    from inboxflow.adapters.pubsub_bus import PubSubAdmin
    from inboxflow.dev.ops.pubsub_dead_letters import DeadLetterQueues, dead_letter_subscriptions
    from inboxflow.graphs import graph_registry

    nodes = [(g.name, n) for g in graph_registry(os.environ).values() for n in g.nodes]
    admin = PubSubAdmin(settings.project)
    try:
        yield DeadLetterQueues(admin, dead_letter_subscriptions(nodes))
    finally:
        admin.close()


def _chosen(queues: DeadLetterQueues, subscription: str | None) -> list[str]:
    if subscription is None:
        return sorted(queues.subscriptions)
    try:
        queues.check(subscription)
    except KeyError as exc:
        typer.echo(f"error: {exc.args[0]}", err=True)
        raise typer.Exit(2) from None
    return [subscription]


def _when(epoch_s: float) -> str:
    return datetime.fromtimestamp(epoch_s, UTC).strftime("%Y-%m-%d %H:%M:%S")


def _row(letter: DeadLetter) -> list[str]:
    envelope = letter.envelope
    where = f"{envelope.trace_id} {envelope.node}#{envelope.step}" if envelope else "-"
    return [
        letter.subscription,
        letter.message_id,
        _when(letter.published_at),
        where,
        letter.reason,
    ]


@app.command("list")
def list_(
    subscription: str | None = SUBSCRIPTION,
    limit: int = LIMIT,
    as_json: bool = typer.Option(False, "--json", help="One JSON object per message."),
    home: Path = HOME,
    dev: bool = DEV,
) -> None:
    """Messages waiting in the dead-letter subscriptions (reading them changes nothing)."""
    with _queues(home, dev) as queues:
        letters = [m for s in _chosen(queues, subscription) for m in queues.peek(s, limit)]
    if as_json:
        for letter in letters:
            typer.echo(json.dumps(letter.summary(), ensure_ascii=False, default=str))
        return
    table = Table(title=f"{len(letters)} dead-lettered message(s)", expand=True)
    for column in ("subscription", "message", "published (UTC)", "trace node#step", "reason"):
        table.add_column(column, overflow="fold")
    for letter in letters:
        table.add_row(*_row(letter))
    cli_console().print(table)


@app.command("show")
def show(
    message_id: str = typer.Argument(..., help="A message id from `inboxflow dlq list`."),
    subscription: str | None = SUBSCRIPTION,
    limit: int = LIMIT,
    home: Path = HOME,
    dev: bool = DEV,
) -> None:
    """One dead-lettered message in full: attributes, body, why it is there."""
    with _queues(home, dev) as queues:
        for name in _chosen(queues, subscription):
            for letter in queues.peek(name, limit):
                if letter.message_id == message_id:
                    typer.echo(json.dumps(letter.summary(), indent=2, ensure_ascii=False))
                    return
    typer.echo(f"error: no dead-lettered message {message_id}", err=True)
    raise typer.Exit(1)


@app.command("replay")
def replay(
    message_ids: list[str] = typer.Argument(None, help="Message ids (default: every message)."),
    subscription: str | None = SUBSCRIPTION,
    limit: int = typer.Option(1000, help="At most this many messages per subscription."),
    home: Path = HOME,
    dev: bool = DEV,
) -> None:
    """Publish dead-lettered messages again, where they were going, once the cause is fixed.

    A replayed message is acknowledged (it leaves the dead-letter subscription).
    Replaying twice is harmless: a step that already ran is a duplicate the
    runtime drops. A message that is not an envelope stays where it is.
    """
    wanted = set(message_ids) if message_ids else None
    replayed: list[DeadLetter] = []
    stuck: list[DeadLetter] = []
    with _queues(home, dev) as queues:
        for name in _chosen(queues, subscription):
            done, left = queues.replay(name, wanted, limit)
            replayed += done
            stuck += [m for m in left if m.problem is not None]
    for letter in replayed:
        typer.echo(f"replayed {letter.message_id} from {letter.subscription}: {_row(letter)[3]}")
    for letter in stuck:
        typer.echo(f"left {letter.message_id} in {letter.subscription}: {letter.problem}")
    found = {m.message_id for m in replayed + stuck}
    missing = sorted((wanted or set()) - found)
    if missing:
        typer.echo(f"error: no dead-lettered message {', '.join(missing)}", err=True)
        raise typer.Exit(1)
    typer.echo(f"{len(replayed)} message(s) replayed, {len(stuck)} left")
