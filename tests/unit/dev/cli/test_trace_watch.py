"""`inboxflow dev`'s trace watcher rides out the store's errors: a Firestore stream removed,
a deadline, the emulator frozen. It says so once, backs off, and goes on."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from google.api_core.exceptions import DeadlineExceeded, ServiceUnavailable

from inboxflow.adapters.sqlite_store import SqliteCheckpointStore
from inboxflow.dev.cli.trace_watch import MAX_BACKOFF_S, POLL_S, TraceWatcher


class FlakyStore:
    """A store whose ``list`` raises the errors it is given, one per call, then answers."""

    def __init__(self, store: SqliteCheckpointStore, errors: list[Exception]) -> None:
        self.store = store
        self.errors = errors

    def list(self, *args: Any, **kwargs: Any) -> Any:
        if self.errors:
            raise self.errors.pop(0)
        return self.store.list(*args, **kwargs)

    def step_logs(self, trace_id: str) -> Any:
        return self.store.step_logs(trace_id)


def test_a_removed_stream_is_said_once_retried_with_backoff_and_then_traces_show_again(
    tmp_path: Path,
) -> None:
    from tests.harness.runtimes import runtime_for

    runtime = runtime_for(tmp_path)
    trace_id = runtime.start("pipeline", _state(runtime))
    errors: list[Exception] = [ServiceUnavailable("Stream removed")] * 3 + [
        DeadlineExceeded("Deadline Exceeded")
    ]
    said: list[str] = []
    watcher = TraceWatcher(FlakyStore(runtime.store, errors), said.append, since=0)
    delays = [watcher.poll() for _ in range(4)]
    assert delays == [1.0, 2.0, 4.0, 8.0]  # backing off, never raising
    assert len(said) == 1 and "ServiceUnavailable" in said[0] and "Stream removed" in said[0]
    assert watcher.poll() == POLL_S
    assert "answers again (after 4 failed polls)" in said[1]
    assert trace_id in said[2] and "running" in said[2]
    assert watcher.poll() == POLL_S and len(said) == 3  # nothing changed, nothing said


def test_the_backoff_stops_growing_and_a_long_outage_is_said_now_and_then(tmp_path: Path) -> None:
    store = SqliteCheckpointStore(tmp_path / "w.db")
    said: list[str] = []
    watcher = TraceWatcher(FlakyStore(store, [ServiceUnavailable("down")] * 20), said.append)
    delays = [watcher.poll() for _ in range(20)]
    assert max(delays) == MAX_BACKOFF_S and delays[-1] == MAX_BACKOFF_S
    assert 1 < len(said) < 6


def _state(runtime: Any) -> dict[str, Any]:
    from inboxflow.dev.cli.local import sample_inbox
    from inboxflow.mail import load_email_file

    email = load_email_file(sample_inbox()[0])
    return {"email": email.model_dump(mode="json")}
