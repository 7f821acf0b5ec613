"""``Member``: a documented attribute whose value is kept elsewhere (a port, a lazy part).

``Runtime`` names its ports (``runtime.clock`` is ``runtime.ports.clock``) and the
approval parts their lazily built ports (``deadlines.tasks``) with subclasses that
say where the value is (``read``) and how assigning replaces it (``write``).
"""

from __future__ import annotations

from typing import Any, Generic, TypeVar, overload

T = TypeVar("T")


class Member(Generic[T]):
    """A class attribute that reads ``read(owner)`` and assigns with ``write(owner, value)``.

    Args:
        doc: what the member is (its docstring).
    """

    def __init__(self, doc: str) -> None:
        self.__doc__ = doc
        self.name = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, instance: None, owner: type) -> Member[T]: ...

    @overload
    def __get__(self, instance: object, owner: type | None = None) -> T: ...

    def __get__(self, instance: object | None, owner: Any = None) -> T | Member[T]:
        return self if instance is None else self.read(instance)

    def __set__(self, instance: object, value: Any) -> None:
        self.write(instance, value)

    def read(self, instance: Any) -> T:
        """The member's value on ``instance``."""
        raise NotImplementedError

    def write(self, instance: Any, value: Any) -> None:
        """Replace the member's value on ``instance`` (by default it cannot be)."""
        raise AttributeError(f"{type(instance).__name__}.{self.name} cannot be assigned")
