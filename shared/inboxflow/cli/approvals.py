"""``inboxflow approvals`` and ``inboxflow serve``: human approval, locally."""

from __future__ import annotations

import logging
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.table import Table

from ..runtime import Runtime

DEFAULT_PORT = 8088


def _runtime(home: Path | None) -> Runtime:
    from ..entry import runtime
    from ..settings import Settings

    if home is not None:
        import os

        os.environ["INBOXFLOW_HOME"] = str(home)
    Settings.from_env()  # fail early on bad settings
    return runtime()


def pending_links(rt: Runtime, reviewer: str | None = None) -> list[dict[str, Any]]:
    """Pending approvals with a fresh review link each (for ``reviewer`` or the first reviewer).

    Minting a link stores a new token's hash; earlier links stay valid until
    used or expired.
    """
    from ..approvals.service import ApprovalService

    service: ApprovalService = rt.services["approvals"]
    rows = []
    for approval in service.pending(reviewer):
        candidates = approval.escalate_to if approval.round > 0 else approval.reviewers
        who = reviewer or (candidates[0] if candidates else None)
        rows.append(
            {
                "approval": approval,
                "reviewer": who,
                "link": service.issue_link(approval, who) if who else "",
            }
        )
    return rows


def approvals(
    reviewer: str = typer.Option(None, help="Only approvals this reviewer can decide."),
    home: Path = typer.Option(None, help="Folder of the embedded store (default INBOXFLOW_HOME)."),
) -> None:
    """List pending approvals with a review link each (open them with `inboxflow serve`)."""
    console = Console()
    rt = _runtime(home)
    rows = pending_links(rt, reviewer)
    if not rows:
        console.print("no pending approvals")
        return
    table = Table(title=f"{len(rows)} pending approvals", show_lines=True)
    for column in ("approval", "email", "reviewer", "deadline", "link"):
        table.add_column(column, overflow="fold")
    for row in rows:
        approval = row["approval"]
        deadline = datetime.fromtimestamp(approval.deadline, UTC).strftime("%Y-%m-%d %H:%M UTC")
        email = f"{approval.context.get('sender', '')}\n{approval.context.get('subject', '')}"
        table.add_row(approval.approval_id, email, row["reviewer"] or "-", deadline, row["link"])
    console.print(table)


def serve(
    port: int = typer.Option(DEFAULT_PORT, help="Port of the approval function."),
    host: str = typer.Option("127.0.0.1", help="Interface to listen on."),
    home: Path = typer.Option(None, help="Folder of the embedded store (default INBOXFLOW_HOME)."),
) -> None:
    """Run the approval function locally (and fire due deadline tasks of the embedded queue)."""
    import os

    from ..approvals.headers import hardened_request_handler
    from ..approvals.logs import redact_access_logs

    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    redact_access_logs()  # the request log would otherwise show each link's token
    os.environ.setdefault("INBOXFLOW_APPROVAL_URL", f"http://{host}:{port}")
    rt = _runtime(home)
    app = approval_app()
    stop = threading.Event()
    fire_due_tasks_in_background(rt, stop)
    Console().print(
        f"approval function on [bold]http://{host}:{port}[/bold] "
        f"(links from `inboxflow approvals`); Ctrl-C stops"
    )
    try:
        app.run(
            host=host,
            port=port,
            threaded=True,
            use_reloader=False,
            request_handler=hardened_request_handler(),
        )
    finally:
        stop.set()


def approval_app() -> Any:
    """The approval function's handler in a Flask app, as functions-framework wraps ``approve``."""
    from flask import Flask, request

    from ..approvals.app import install_hardening
    from ..entry import handle_approval_request

    app = Flask("inboxflow-approve")
    install_hardening(app)
    methods = ["GET", "HEAD", "POST", "PUT", "DELETE"]

    @app.route("/", defaults={"path": ""}, methods=methods)
    @app.route("/<path:path>", methods=methods)
    def approve(path: str) -> Any:
        return handle_approval_request(request)

    return app


def fire_due_tasks_in_background(rt: Runtime, stop: threading.Event, every_s: float = 1.0) -> None:
    """On the embedded task queue, POST due tasks to their URLs, as Cloud Tasks would."""
    from ..adapters.sqlite_tasks import SqliteTaskQueue, post_json

    queue = rt.services["approvals"].tasks.queue
    if not isinstance(queue, SqliteTaskQueue):
        return

    def loop() -> None:
        while not stop.wait(every_s):
            try:
                queue.run_due(rt.clock.now(), post_json)
            except Exception:
                logging.getLogger(__name__).exception("firing due tasks failed")

    threading.Thread(target=loop, name="inboxflow-tasks", daemon=True).start()
