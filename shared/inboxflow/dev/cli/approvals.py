"""``inboxflow approvals`` and ``inboxflow serve``: human approval, locally."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import typer
from rich.table import Table

from inboxflow.dev.cli.options import dev_option, home_option, use_home
from inboxflow.dev.cli.render import cli_console
from inboxflow.engine.runtime import Runtime

from ...approvals.service import approval_service

DEFAULT_PORT = 8088


SERVE_FILE = "serve.json"
"""Under the home: the URL and pid of the running ``inboxflow serve``."""


def _runtime(home: Path, dev: bool = False) -> Runtime:
    from inboxflow.entry import runtime
    from inboxflow.settings import Settings

    use_home(home, dev)
    Settings.from_env(os.environ)  # fail early on bad settings
    return runtime()


def serving_url(home: Path) -> str | None:
    """The URL of the ``inboxflow serve`` running on ``home``, or None (none runs, or it died)."""
    from inboxflow.dev import process_groups

    try:
        record = json.loads((home / SERVE_FILE).read_text())
    except (OSError, ValueError):
        return None
    return str(record["url"]) if process_groups.running(int(record.get("pid") or 0)) else None


def _base_url(value: str | None) -> str | None:
    if value is not None and urlsplit(value).scheme not in ("http", "https"):
        raise typer.BadParameter(f"{value!r} is not an http(s) URL", param_hint="--base-url")
    return value


LINKS_HELP = (
    "Links to this approval function (default: the `inboxflow serve` running on "
    "--home, or with --dev the emulated cloud's, else INBOXFLOW_APPROVAL_URL)."
)


def base_url_option(help: str = LINKS_HELP) -> Any:
    """``--base-url URL``: where the links a command prints point (an http(s) URL)."""
    return typer.Option(None, "--base-url", callback=_base_url, help=help)


def point_links(home: Path, dev: bool, base_url: str | None) -> None:
    """Links to the approval function that runs: ``--base-url``, the home's ``inboxflow serve``
    or (``--dev``) the emulated cloud's."""
    use_home(home, dev)
    url = base_url or (None if dev else serving_url(home))
    if url:
        os.environ["INBOXFLOW_APPROVAL_URL"] = url


def pending_links(rt: Runtime, reviewer: str | None = None) -> list[dict[str, Any]]:
    """Pending approvals with a fresh review link each (for ``reviewer`` or the first reviewer).

    Minting a link stores a new token's hash; earlier links stay valid until
    used or expired.
    """
    from inboxflow.approvals.service import ApprovalService

    service: ApprovalService = approval_service(rt.ports)
    rows = []
    for approval in service.pending(reviewer):
        candidates = approval.escalate_to if approval.round > 0 else approval.reviewers
        who = reviewer or (candidates[0] if candidates else None)
        rows.append(
            {
                "approval": approval,
                "reviewer": who,
                "link": service.tokens.issue_link(approval, who) if who else "",
            }
        )
    return rows


def approvals(
    reviewer: str = typer.Option(None, help="Only approvals this reviewer can decide."),
    home: Path = home_option(),
    dev: bool = dev_option(),
    base_url: str | None = base_url_option(),
) -> None:
    """List pending approvals with a review link each (open them with `inboxflow serve`)."""
    console = cli_console()
    point_links(home, dev, base_url)
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
    home: Path = home_option(),
) -> None:
    """Run the approval function locally (and fire due deadline tasks of the embedded queue and
    send reviewers' digests when due, each minute, as Cloud Scheduler's sweep does)."""
    from inboxflow.approvals.http_headers import hardened_request_handler
    from inboxflow.approvals.task_auth import describe, local_task_token
    from inboxflow.dev.process_groups import ctrl_c_stops
    from inboxflow.redaction import redact_access_logs

    ctrl_c_stops()
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    redact_access_logs()  # the request log would otherwise show each link's token
    os.environ.setdefault("INBOXFLOW_APPROVAL_URL", f"http://{host}:{port}")
    rt = _runtime(home)
    stop = threading.Event()
    record = _record_serving(home, os.environ["INBOXFLOW_APPROVAL_URL"])
    try:  # from here on a Ctrl-C at any point forgets the record: serve.json names a live server
        app = approval_app()
        token = local_task_token(rt.ports.settings.home)
        fire_due_tasks_in_background(rt, stop, bearer=token)
        sweep_digests_in_background(rt, stop)
        console = cli_console()
        console.print(
            f"approval function on [bold]http://{host}:{port}[/bold] "
            f"(links from `inboxflow approvals`); Ctrl-C stops"
        )
        console.print(describe(rt.ports.settings.home, rt.ports.settings.environ))
        if not _loopback(host):
            console.print(
                f"[yellow]listening on {host}, not loopback only: anyone who reaches it can open "
                "review links; /timeout and /digest still need the token[/yellow]"
            )
        app.run(
            host=host,
            port=port,
            threaded=True,
            use_reloader=False,
            request_handler=hardened_request_handler(),
        )
    finally:
        stop.set()
        _forget_serving(record)


def _loopback(host: str) -> bool:
    """Whether ``host`` is a loopback interface (``127.0.0.1``, ``::1``, ``localhost``)."""
    import ipaddress

    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _record_serving(home: Path, url: str) -> Path:
    """Write ``home/serve.json`` so that ``inboxflow approvals`` links to this server."""
    home.mkdir(parents=True, exist_ok=True)
    record = home / SERVE_FILE
    record.write_text(json.dumps({"url": url.rstrip("/"), "pid": os.getpid()}))
    return record


def _forget_serving(record: Path) -> None:
    with contextlib.suppress(OSError, ValueError):
        if json.loads(record.read_text()).get("pid") == os.getpid():
            record.unlink()


def approval_app() -> Any:
    """The approval function's handler in a Flask app, as functions-framework wraps ``approve``."""
    from flask import Flask, request

    from inboxflow.approvals.app import install_hardening
    from inboxflow.entry import handle_approval_request

    app = Flask("inboxflow-approve")
    install_hardening(app)
    methods = ["GET", "HEAD", "POST", "PUT", "DELETE"]

    @app.route("/", defaults={"path": ""}, methods=methods)
    @app.route("/<path:path>", methods=methods)
    def approve(path: str) -> Any:
        return handle_approval_request(request)

    return app


def fire_due_tasks_in_background(
    rt: Runtime, stop: threading.Event, every_s: float = 1.0, bearer: str | None = None
) -> None:
    """On the embedded task queue, POST due tasks to their URLs, as Cloud Tasks would
    (with ``bearer``: the local task token ``/timeout`` checks)."""
    from inboxflow.adapters.sqlite_tasks import SqliteTaskQueue, post_json

    queue = approval_service(rt.ports).tasks
    if not isinstance(queue, SqliteTaskQueue):
        return

    def post(task: Any) -> None:
        post_json(task, bearer)

    def loop() -> None:
        while not stop.wait(every_s):
            try:
                queue.run_due(rt.clock.now(), post)
            except Exception:
                logging.getLogger(__name__).exception("firing due tasks failed")

    threading.Thread(target=loop, name="inboxflow-tasks", daemon=True).start()


def sweep_digests_in_background(rt: Runtime, stop: threading.Event, every_s: float = 60.0) -> None:
    """Send reviewers' digests when due (``POST /digest``'s sweep), as Cloud Scheduler would."""
    if not approval_service(rt.ports).settings.digest_reviewers():
        return

    def loop() -> None:
        while not stop.wait(every_s):
            try:
                approval_service(rt.ports).digests.sweep()
            except Exception:
                logging.getLogger(__name__).exception("sending digests failed")

    threading.Thread(target=loop, name="inboxflow-digests", daemon=True).start()
