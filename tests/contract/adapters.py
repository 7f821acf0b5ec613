"""The adapters the contract suites run against: one entry per backend, nothing else to change.

Each suite (``test_checkpoint_store.py``, ``test_lease_takeover.py``,
``test_vector_index.py``) reads its adapters from a list here through the
fixtures of ``tests/contract/conftest.py``, never by name. A third adapter
runs the suites unchanged: add an ``Adapter`` to the list (or, in a package
of its own, import a suite's tests and define the ``make_store`` or
``make_index`` fixture in its conftest), as langgraph's checkpoint
conformance suite takes the saver under test from its caller.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, TypeVar

import pytest

from inboxflow.ports.checkpoint import DocumentCheckpointStore
from inboxflow.ports.vectors import VectorIndex

T = TypeVar("T")


@dataclass(frozen=True)
class Adapter(Generic[T]):
    """A backend under contract.

    Attributes:
        name: the test id.
        backend: given the test's request and ``tmp_path``, starts one shared
            backend (an emulator, a file) and returns what opens a new
            instance on it: each call a new connection or client, so the
            suites can test several writers on one backend.
        marks: pytest marks (``emulator``: the backend needs an emulator).
    """

    name: str
    backend: Callable[[pytest.FixtureRequest, Path], Callable[[], T]]
    marks: tuple[Any, ...] = field(default=())

    def param(self) -> Any:
        """This adapter as a fixture parameter."""
        return pytest.param(self, id=self.name, marks=self.marks)


def _sqlite_stores(request: pytest.FixtureRequest, tmp_path: Path) -> Callable[[], Any]:
    from inboxflow.adapters.sqlite_store import SqliteCheckpointStore

    return lambda: SqliteCheckpointStore(tmp_path / "store.sqlite")


def _firestore_stores(request: pytest.FixtureRequest, tmp_path: Path) -> Callable[[], Any]:
    request.getfixturevalue("firestore_env")
    from inboxflow.adapters.firestore_store import FirestoreCheckpointStore

    return lambda: FirestoreCheckpointStore.from_env(os.environ)


def _beside(stores: Callable[[], DocumentCheckpointStore]) -> Callable[[], VectorIndex]:
    """A vector index opened the way the composition root opens it: beside a store."""
    from inboxflow.services import make_vector_index

    return lambda: make_vector_index(stores())


STORES: list[Adapter[DocumentCheckpointStore]] = [
    Adapter("sqlite", _sqlite_stores),
    Adapter("firestore", _firestore_stores, (pytest.mark.emulator,)),
]
"""Backends of the documents and checkpoint ports (one class implements both)."""

VECTOR_INDEXES: list[Adapter[VectorIndex]] = [
    Adapter("sqlite", lambda request, tmp_path: _beside(_sqlite_stores(request, tmp_path))),
    Adapter(
        "firestore",
        lambda request, tmp_path: _beside(_firestore_stores(request, tmp_path)),
        (pytest.mark.emulator,),
    ),
]
"""Backends of the vector index port."""
