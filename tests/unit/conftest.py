"""Fixtures shared by the unit tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.harness.thread_chat import STORES, ChatWorld, chat_world


@pytest.fixture(params=STORES)
def chat(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[ChatWorld]:
    """The ``thread_chat`` plug-in's mailbox world, on SQLite and on the Firestore emulator."""
    yield from chat_world(request, tmp_path, monkeypatch)
