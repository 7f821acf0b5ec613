"""``LazyMember``: a part's port built on first read, replaced by assigning a value or a ``Lazy``."""

from __future__ import annotations

from inboxflow.approvals.grounds import LazyMember
from inboxflow.lazy import Lazy


class Holder:
    port = LazyMember[str]("A port (built on first use).")

    def __init__(self, port: str | Lazy[str]) -> None:
        self.port = port


def test_a_lazy_member_is_built_on_first_read_only_and_once() -> None:
    built: list[str] = []
    holder = Holder(Lazy(lambda: built.append("x") or "client"))
    assert built == []
    assert holder.port == "client" and holder.port == "client"
    assert built == ["x"]


def test_assigning_a_value_replaces_the_member_and_the_class_attribute_carries_the_doc() -> None:
    holder = Holder("first")
    holder.port = "double"
    assert holder.port == "double" and Holder("other").port == "other"
    assert Holder.port.__doc__ == "A port (built on first use)."
