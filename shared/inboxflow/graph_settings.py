"""Each graph's settings (``graphs.NAME`` of ``inboxflow.yaml``), typed, read once per process."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol, TypeVar, cast

from pydantic import BaseModel

S = TypeVar("S", bound=BaseModel)


class FromEnvironment(Protocol):
    """A settings class the deployment's environment overrides (``PipelineSettings``)."""

    @classmethod
    def from_env(cls, environ: Mapping[str, str], base: Mapping[str, Any] | None = None) -> Any:
        """The settings from ``base`` (the config's section) and ``environ``."""


class GraphSettings:
    """The settings of every graph, by graph name, as that graph's settings class.

    Args:
        section: the config's section for a graph (``InboxflowConfig.graph_settings``).
        environ: the deployment's environment, for classes with ``from_env``.
    """

    def __init__(
        self,
        section: Callable[[str], Mapping[str, Any] | None] = lambda graph: None,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self._section = section
        self._environ = dict(environ or {})
        self._by_graph: dict[str, BaseModel] = {}

    def of(self, graph: str, kind: type[S]) -> S:
        """The settings of ``graph`` as ``kind`` (validated on first access, then kept).

        Raises:
            pydantic.ValidationError: the config's section does not fit ``kind``.
        """
        found = self._by_graph.get(graph)
        if isinstance(found, kind):
            return found
        section = self._section(graph) or {}
        if hasattr(kind, "from_env"):
            built = cast(FromEnvironment, kind).from_env(self._environ, base=section)
        else:
            built = kind.model_validate(section)
        self._by_graph[graph] = built
        return cast(S, built)

    def use(self, graph: str, settings: BaseModel) -> None:
        """Use ``settings`` for ``graph`` from now on (a test's, a CLI option's)."""
        self._by_graph[graph] = settings
