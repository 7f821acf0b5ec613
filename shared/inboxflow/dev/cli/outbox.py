"""``inboxflow outbox``: what reviewers were sent, per channel (gmail, ses, webhook).

Locally (the demo, ``inboxflow run``) nothing leaves the machine: each
channel's notifications are kept in the store's outbox, links redacted.
Deployed, SES and webhook notifications leave the same redacted copy as their
receipt (with SES's message id); Gmail's are in the sender's Sent folder.
"""

from __future__ import annotations

import json
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich.table import Table

from inboxflow.config import CHANNELS
from inboxflow.dev.cli.options import dev_option, home_option, home_store
from inboxflow.dev.cli.render import cli_console

if TYPE_CHECKING:
    from inboxflow.ports.documents import DocumentStore


def channel_counts(store: DocumentStore) -> dict[str, int]:
    """How many notifications each channel holds in the outbox (every channel named, 0 too)."""
    from inboxflow.adapters.notifiers import outbox_messages

    counted = Counter(str(m.get("channel", "gmail")) for m in outbox_messages(store))
    return {channel: counted.get(channel, 0) for channel in CHANNELS}


def counts_line(store: DocumentStore) -> str:
    """``gmail 12 · ses 2 · webhook 1``."""
    return " · ".join(f"{channel} {count}" for channel, count in channel_counts(store).items())


def _when(epoch_s: float | None) -> str:
    return datetime.fromtimestamp(epoch_s, UTC).strftime("%Y-%m-%d %H:%M UTC") if epoch_s else "-"


def _delivered(message: dict[str, Any]) -> str:
    if not message.get("delivered"):
        return "kept locally"
    return f"sent, id {message['message_id']}" if message.get("message_id") else "sent"


def outbox(
    channel: str | None = typer.Option(
        None, "--channel", help=f"Only this channel: {', '.join(CHANNELS)}."
    ),
    to: str | None = typer.Option(None, "--to", help="Only notifications to this reviewer."),
    as_json: bool = typer.Option(False, "--json", help="One JSON object per notification."),
    home: Path = home_option(),
    dev: bool = dev_option(),
) -> None:
    """List the reviewer notifications sent, per channel (review links redacted)."""
    from inboxflow.adapters.notifiers import outbox_messages

    if channel is not None and channel not in CHANNELS:
        typer.echo(
            f"error: unknown channel {channel!r} (channels: {', '.join(CHANNELS)})", err=True
        )
        raise typer.Exit(2)
    store = home_store(home, dev)
    try:
        messages = outbox_messages(store, channel=channel, to=to)
        counts = counts_line(store)
    finally:
        store.close()
    if as_json:
        for message in messages:
            keep = (
                "channel",
                "to",
                "from",
                "subject",
                "sent_at",
                "delivered",
                "message_id",
                "text",
            )
            typer.echo(json.dumps({k: message.get(k) for k in keep}))
        return
    console = cli_console()
    console.print(f"outbox: {counts}")
    if not messages:
        console.print("no notifications" + (f" on channel {channel}" if channel else ""))
        return
    table = Table(title=f"{len(messages)} notifications", show_lines=False)
    for column in ("sent", "channel", "to", "subject", "delivery"):
        table.add_column(column, overflow="fold")
    for message in messages:
        table.add_row(
            _when(message.get("sent_at")),
            str(message.get("channel", "gmail")),
            str(message.get("to", "")),
            str(message.get("subject", "")),
            _delivered(message),
        )
    console.print(table)
