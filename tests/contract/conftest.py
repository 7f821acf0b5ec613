"""The contract suites' fixtures: each parametrized over the adapters ``tests/contract/adapters.py`` lists."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.contract.adapters import STORES, VECTOR_INDEXES, Adapter

from inboxflow.ports.checkpoint import DocumentCheckpointStore
from inboxflow.ports.vectors import VectorIndex

StoreFactory = Callable[[], DocumentCheckpointStore]
IndexFactory = Callable[[], VectorIndex]


def _opened(adapter: Adapter[Any], request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    """Yield a factory of instances on the adapter's backend; close them all afterwards."""
    opened: list[Any] = []
    open_one = adapter.backend(request, tmp_path)

    def make() -> Any:
        instance = open_one()
        opened.append(instance)
        return instance

    yield make
    for instance in opened:
        instance.close()


@pytest.fixture(params=[adapter.param() for adapter in STORES])
def make_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[StoreFactory]:
    """Opens stores on one shared backend (a new connection or client each call)."""
    yield from _opened(request.param, request, tmp_path)


@pytest.fixture
def store(make_store: StoreFactory) -> DocumentCheckpointStore:
    return make_store()


@pytest.fixture(params=[adapter.param() for adapter in VECTOR_INDEXES])
def make_index(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[IndexFactory]:
    """Opens vector indexes on one shared backend (a new connection or client each call)."""
    yield from _opened(request.param, request, tmp_path)


@pytest.fixture
def index(make_index: IndexFactory) -> VectorIndex:
    return make_index()
