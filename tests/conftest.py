"""Shared fixtures: environment isolation, the gcloud emulators, and the emulator count.

Emulator fixtures start each emulator once per session and skip a test only
when that emulator is not installed here; an installed emulator that fails to
start is an error. Mark emulator-backed tests (or parameters) with
``pytest.mark.emulator``: the run ends with "emulator-backed tests: N ran, M skipped".

With ``INBOXFLOW_REQUIRE_EMULATORS=1`` (CI) a missing emulator fails instead,
and so does any skip of a test marked ``emulator`` or ``browser`` (see
``tests/harness/required.py``).

More fixtures live in plugin modules listed in ``pytest_plugins``.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator

import pytest

from inboxflow.dev import emulators, process_groups
from tests.harness.required import REQUIRE_VARIABLE, REQUIRED, skip_unless_required

pytest_plugins: list[str] = []

# Variables that would point a test at real services or at someone's emulators.
_OUTSIDE_VARIABLES = (
    "FIRESTORE_EMULATOR_HOST",
    "PUBSUB_EMULATOR_HOST",
    "CLOUD_TASKS_EMULATOR_HOST",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "GOOGLE_GENAI_USE_VERTEXAI",
)


@pytest.fixture(autouse=True)
def isolated_environ(monkeypatch: pytest.MonkeyPatch) -> Iterator[pytest.MonkeyPatch]:
    """Give each test its own ``os.environ``, without emulator hosts, API keys or INBOXFLOW_*.

    Whatever a test changes (through ``monkeypatch`` or ``os.environ``
    directly) is undone after it.
    """
    saved = dict(os.environ)
    for name in list(os.environ):
        if name in _OUTSIDE_VARIABLES or name.startswith("INBOXFLOW_"):
            monkeypatch.delenv(name)
    yield monkeypatch
    monkeypatch.undo()
    for name in set(os.environ) - set(saved):
        del os.environ[name]
    for name, value in saved.items():
        if os.environ.get(name) != value:
            os.environ[name] = value


# --- emulators (one process each per session) -----------------------------------------


@pytest.fixture(scope="session")
def emulator_journal() -> Iterator[process_groups.Journal]:
    """This run's journal of the process groups it starts (emulators, function servers).

    Before the first one starts, what earlier runs that were killed (SIGKILL, a
    closed terminal) left is stopped; runs still going on are left alone.
    """
    journal, stopped = process_groups.begin_run(process_groups.runs_dir())
    if stopped:
        print(f"\nstopped {stopped} process(es) that killed test runs had left")
    yield journal
    emulators.stop_all()
    process_groups.end(journal)


def _start(name: str) -> Iterator[emulators.Emulator]:
    reason = emulators.available()[name]
    if reason is not True:
        skip_unless_required(f"{name} emulator not installed: {reason}")
    emulator = emulators.START[name]()
    try:
        yield emulator
    finally:
        emulator.stop()


@pytest.fixture(scope="session")
def firestore_emulator(
    emulator_journal: process_groups.Journal,
) -> Iterator[emulators.Emulator]:
    """The Firestore emulator (skips when it is not installed)."""
    yield from _start(emulators.FIRESTORE)


@pytest.fixture(scope="session")
def pubsub_emulator(emulator_journal: process_groups.Journal) -> Iterator[emulators.Emulator]:
    """The Pub/Sub emulator (skips when it is not installed)."""
    yield from _start(emulators.PUBSUB)


@pytest.fixture(scope="session")
def tasks_emulator(emulator_journal: process_groups.Journal) -> Iterator[emulators.Emulator]:
    """The Cloud Tasks emulator (skips when it is not installed)."""
    yield from _start(emulators.TASKS)


@pytest.fixture
def firestore_env(
    firestore_emulator: emulators.Emulator, monkeypatch: pytest.MonkeyPatch
) -> emulators.Emulator:
    """Point this test at an empty Firestore emulator (project ``inboxflow-local``)."""
    emulators.reset_firestore(firestore_emulator, emulators.DEFAULT_PROJECT)
    monkeypatch.setenv("FIRESTORE_EMULATOR_HOST", firestore_emulator.address)
    monkeypatch.setenv("GOOGLE_CLOUD_PROJECT", emulators.DEFAULT_PROJECT)
    return firestore_emulator


@pytest.fixture
def pubsub_env(pubsub_emulator: emulators.Emulator, monkeypatch: pytest.MonkeyPatch) -> str:
    """Point this test at the Pub/Sub emulator under a project of its own; returns the project."""
    project = f"test-{uuid.uuid4().hex[:12]}"
    monkeypatch.setenv("PUBSUB_EMULATOR_HOST", pubsub_emulator.address)
    monkeypatch.setenv("GOOGLE_CLOUD_PROJECT", project)
    return project


@pytest.fixture
def tasks_env(tasks_emulator: emulators.Emulator, monkeypatch: pytest.MonkeyPatch) -> str:
    """Point this test at the Cloud Tasks emulator with a queue of its own; returns the queue id."""
    queue = f"test-{uuid.uuid4().hex[:12]}"
    monkeypatch.setenv("CLOUD_TASKS_EMULATOR_HOST", tasks_emulator.address)
    monkeypatch.setenv("GOOGLE_CLOUD_PROJECT", emulators.DEFAULT_PROJECT)
    monkeypatch.setenv("INBOXFLOW_TASKS_QUEUE", queue)
    return queue


# --- INBOXFLOW_REQUIRE_EMULATORS=1: no skip of an emulator or browser test ------------------

_REQUIRED_MARKERS = ("emulator", "browser")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """Under the switch, report a skipped ``emulator``/``browser`` test as failed.

    Catches the skips tests make themselves (``pytest.skip`` in the test body),
    not only those of the fixtures above.
    """
    outcome = yield
    report: pytest.TestReport = outcome.get_result()  # type: ignore[attr-defined]
    if not (REQUIRED and report.skipped) or hasattr(report, "wasxfail"):
        return
    marker = next((m for m in _REQUIRED_MARKERS if item.get_closest_marker(m)), None)
    if marker is None:
        return
    reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
    report.outcome = "failed"
    report.longrepr = f"{marker} test skipped ({reason}) but {REQUIRE_VARIABLE}=1 requires it"


# --- "emulator-backed tests: N ran, M skipped" -------------------------------------------

_emulator_outcomes: dict[str, str] = {}


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Remember the outcome of every test marked ``emulator``."""
    if "emulator" not in report.keywords:
        return
    if report.skipped:
        _emulator_outcomes[report.nodeid] = "skipped"
    elif report.when == "call":
        _emulator_outcomes.setdefault(report.nodeid, "ran")
    elif report.failed:
        _emulator_outcomes.setdefault(report.nodeid, "could not start")


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Say how many emulator-backed tests actually ran."""
    if not _emulator_outcomes:
        return
    outcomes = list(_emulator_outcomes.values())
    ran, skipped = outcomes.count("ran"), outcomes.count("skipped")
    broken = outcomes.count("could not start")
    failed_setup = f", {broken} failed in setup" if broken else ""
    terminalreporter.write_line(
        f"emulator-backed tests: {ran} ran, {skipped} skipped{failed_setup}"
    )
