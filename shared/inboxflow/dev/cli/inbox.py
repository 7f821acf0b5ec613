"""``inboxflow inbox REVIEWER`` (a sign-in link to a reviewer's inbox) and ``inboxflow digest``."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import typer
from rich.table import Table

from inboxflow.dev.cli.approvals import _runtime, base_url_option, point_links
from inboxflow.dev.cli.options import dev_option, home_option
from inboxflow.dev.cli.render import cli_console

from ...approvals.service import approval_service


def inbox(
    reviewer: str = typer.Argument(..., help="The reviewer, as approvals list them (an address)."),
    home: Path = home_option(),
    dev: bool = dev_option(),
    base_url: str | None = base_url_option(
        "Link to this approval function (default: the `inboxflow serve` running on "
        "--home, or with --dev the emulated cloud's, else INBOXFLOW_APPROVAL_URL)."
    ),
) -> None:
    """Print a sign-in link to REVIEWER's inbox: every decision waiting for them on one page.

    The link signs in once, within 10 minutes (opening it changes nothing until the
    page's button is pressed); run the command again for a new one.
    """
    from inboxflow.approvals.sign_in import SIGN_IN_TTL_S

    reviewer = reviewer.strip()
    if not reviewer or any(character.isspace() for character in reviewer):
        raise typer.BadParameter("a reviewer is an address or a name without spaces")
    point_links(home, dev, base_url)
    service = approval_service(_runtime(home).ports)
    waiting = len(service.pending(reviewer))
    link = service.sign_in_link(reviewer)
    console = cli_console()
    console.print(
        f"{waiting} pending approval{'' if waiting == 1 else 's'} for {reviewer}. "
        f"Sign in to the inbox (once, within {SIGN_IN_TTL_S // 60} minutes):"
    )
    typer.echo(link)  # on a line of its own, never wrapped


def digest(
    now: bool = typer.Option(
        False, "--now", help="Send the digests due now, as the scheduled sweep does."
    ),
    home: Path = home_option(),
    dev: bool = dev_option(),
    base_url: str | None = base_url_option(
        "Sign-in links to this approval function (default as for `inboxflow inbox`)."
    ),
) -> None:
    """Reviewers' digests (`notify: digest` or `both` in inboxflow.yaml): when the last went out;
    with --now, send those due (the daily summary, approvals held back by the interval)."""
    point_links(home, dev, base_url)
    service = approval_service(_runtime(home).ports)
    console = cli_console()
    reviewers = service.settings.digest_reviewers()
    if not reviewers:
        console.print(
            "no reviewer takes digests (reviewers: NAME: {notify: digest} in inboxflow.yaml)"
        )
        return
    if now:
        for outcome in service.digests.sweep():
            counts = ", ".join(f"{graph} {count}" for graph, count in outcome.counts.items())
            detail = f" ({outcome.detail})" if outcome.detail else ""
            console.print(
                f"{outcome.reviewer}: {outcome.action.replace('_', ' ')}"
                f"{f' - {counts}' if counts else ''}{detail}"
            )
        return
    table = Table(title="reviewer digests")
    for column in ("reviewer", "notify", "pending", "last sent", "digests sent"):
        table.add_column(column)
    for reviewer in reviewers:
        record = service.digests.record(reviewer)
        last = record.last_sent_at if record is not None else None
        table.add_row(
            reviewer,
            service.settings.notify_mode(reviewer),
            str(len(service.pending(reviewer))),
            "-"
            if last is None
            else datetime.fromtimestamp(last, UTC).strftime("%Y-%m-%d %H:%M UTC"),
            str(len(record.sent)) if record is not None else "0",
        )
    console.print(table)
