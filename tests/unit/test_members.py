"""``engine.members.Member``: an attribute that reads and writes through its subclass."""

from __future__ import annotations

from typing import Any

import pytest

from inboxflow.engine.members import Member


class Doubled(Member[int]):
    def read(self, instance: Any) -> int:
        return int(instance.kept[self.name]) * 2


class Box:
    twice = Doubled("Twice what is kept.")
    fixed = Member[int]("Not assignable.")

    def __init__(self) -> None:
        self.kept = {"twice": 21}


def test_a_member_reads_through_its_subclass_under_its_own_name_and_carries_its_doc() -> None:
    assert Box().twice == 42
    assert Box.twice.__doc__ == "Twice what is kept." and Box.twice.name == "twice"


def test_a_member_without_write_cannot_be_assigned_and_without_read_cannot_be_read() -> None:
    box = Box()
    with pytest.raises(AttributeError, match=r"Box\.twice cannot be assigned"):
        box.twice = 1
    with pytest.raises(NotImplementedError):
        _ = box.fixed
