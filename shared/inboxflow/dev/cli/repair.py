"""``inboxflow replay TRACE --from-step K`` and ``inboxflow retry TRACE``: repair a trace.

Both act on the configured store and bus: the embedded default under
``--home`` (the trace then runs in this process, to its end or its next
pause), the emulated cloud with ``--dev``, or Google Cloud when the
environment says so (the node functions run it; the command returns once it is
published).
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import typer
from rich.console import Console

from inboxflow.dev.cli.options import dev_option, home_option, use_home
from inboxflow.dev.cli.render import cli_console
from inboxflow.engine.runtime import Runtime
from inboxflow.settings import Settings

WAIT_S = 120.0


def _runtime(home: Path, dev: bool) -> Runtime:
    use_home(home, dev)
    settings = Settings.from_env(os.environ)
    if settings.bus == "inprocess":
        from inboxflow.dev.cli.local import embedded_runtime

        return embedded_runtime(home)
    from inboxflow.services import build_runtime

    return build_runtime(settings)


def _finish(runtime: Runtime, trace_id: str, wait: bool, console: Console) -> None:
    """Run (embedded) or wait for (``wait``) the trace to stop, then show where it is."""
    from inboxflow.adapters.inprocess_bus import InProcessBus
    from inboxflow.dev.cli.render import summary_row, trace_table

    if isinstance(runtime.bus, InProcessBus):
        runtime.bus.drain()
    elif wait:
        deadline = time.monotonic() + WAIT_S
        while time.monotonic() < deadline:
            checkpoint = runtime.store.get_trace(trace_id)
            if checkpoint is not None and checkpoint.status != "running":
                break
            time.sleep(0.5)
    checkpoint = runtime.store.get_trace(trace_id)
    assert checkpoint is not None
    console.print(trace_table([summary_row(runtime.store, checkpoint, runtime.graphs)], trace_id))
    console.print(f"status {checkpoint.status}")


def replay(
    trace_id: str = typer.Argument(..., help="The trace to fork."),
    from_step: int = typer.Option(
        ...,
        "--from-step",
        help="Start from the state after this step (`inboxflow trace TRACE` lists them); "
        "the node it routed to runs next.",
    ),
    wait: bool = typer.Option(True, help="On the cloud, wait until the fork stops and show it."),
    dev: bool = dev_option(),
    home: Path = home_option(),
) -> None:
    """Fork a trace from the stored state of one of its steps (new trace id, linked both ways).

    For a fix that changes what a node does (a prompt, a rule): the fork runs the
    fixed code from that step on. Its side effects are its own: a fork that sends
    mail sends it again.
    """
    from inboxflow.dev.ops.repair import RepairRefused, fork

    console = cli_console()
    runtime = _runtime(home, dev)
    try:
        fork_id = fork(runtime, trace_id, from_step)
    except RepairRefused as exc:
        console.print(f"[red]cannot fork:[/red] {exc}")
        raise typer.Exit(1) from None
    console.print(f"forked {trace_id} at step {from_step} into trace {fork_id}")
    _finish(runtime, fork_id, wait, console)


def retry(
    trace_id: str = typer.Argument(..., help="A needs_review or a stuck running trace."),
    wait: bool = typer.Option(True, help="On the cloud, wait until the trace stops and show it."),
    dev: bool = dev_option(),
    home: Path = home_option(),
) -> None:
    """Run the failed step of a needs_review trace again (after the cause is fixed), or
    publish again the step of a stuck running trace (`inboxflow traces --stuck`)."""
    from inboxflow.dev.ops.repair import RepairRefused
    from inboxflow.dev.ops.repair import retry as retry_trace

    console = cli_console()
    runtime = _runtime(home, dev)
    try:
        envelope = retry_trace(runtime, trace_id)
    except RepairRefused as exc:
        console.print(f"[red]cannot retry:[/red] {exc}")
        raise typer.Exit(1) from None
    console.print(f"retrying step {envelope.step} ({envelope.node}) of trace {trace_id}")
    _finish(runtime, trace_id, wait, console)
