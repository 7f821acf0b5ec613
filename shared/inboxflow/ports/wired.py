"""``Ports``: every port a process is wired with, one typed field each.

Built only by the composition root (``inboxflow.services.build_ports``), which
chooses each adapter from the settings; a field may hold a ``Lazy`` part,
built on its first read. Nodes see ``ctx.ports``: a view that lets a node read
only the ports its ``Node(ports=...)`` declares (``UndeclaredPort`` otherwise),
as ``uses_llm`` guards the model.

A graph's business services (what only that graph calls, an insurer's API or a
catalogue) are not ports: the graph declares each as a ``Service`` (its name and
protocol, in the graph's package) on ``Graph(services=...)`` and its nodes on
``Node(services=...)``; the root builds those the served graphs declare, and a
node reads one as ``ctx.ports.service(DECLARED)``, typed as its protocol.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar, overload

from ..errors import NodeFailed
from ..lazy import Lazy

if TYPE_CHECKING:
    from ..clock import Clock
    from ..config import InboxflowConfig
    from ..graph_settings import GraphSettings
    from ..settings import Settings
    from .bus import MessageBus
    from .checkpoint import CheckpointStore, DocumentCheckpointStore
    from .documents import DocumentStore
    from .embeddings import Embedder
    from .gmail_reader import GmailReader
    from .llm import LanguageModel
    from .notifier import Notifier
    from .tasks import TaskQueue
    from .vectors import VectorIndex
    from .workspace import Workspace

T = TypeVar("T")


class Service(Generic[T]):
    """A business service one graph declares: a name and the protocol its package defines.

    Declared as ``Service[Protocol]("name", Protocol)`` (an abstract class is no ``type[T]``).

    The graph lists it on ``Graph(services=...)``, each node that reads it on
    ``Node(services=(name, ...))``; the composition root builds it by its name
    (``services.SERVICE_FACTORIES``), so a graph never names an adapter.

    Attributes:
        name: the key the root builds it by, given by (``build_ports(name=...)``).
        protocol: what nodes read it as (``ctx.ports.service(declaration)``).
    """

    def __init__(self, name: str, protocol: type) -> None:
        self.name = name
        self.protocol = protocol

    def __repr__(self) -> str:
        return f"Service({self.name!r}, {self.protocol.__name__})"


OPEN_TO_EVERY_NODE = frozenset({"settings", "clock", "store", "llm", "graph_settings"})
"""Ports any node may read without declaring them (the model is guarded by ``uses_llm``)."""


class Approvals(Protocol):
    """What the ports promise of the approval service the root builds
    (``inboxflow.approvals.service.ApprovalService``); ports know no feature, so no more."""

    notifier: Notifier
    """The reviewers' channels (graphs send their own notices through it too)."""

    def after_pause(self, approval: Any) -> Any:
        """Notify the reviewers of a committed pause and schedule its deadline."""
        ...


class UndeclaredPort(NodeFailed):
    """A node read a port its ``Node(ports=...)`` does not declare."""


class Port(Generic[T]):
    """One typed field of ``Ports`` (a descriptor: reading it builds a ``Lazy`` part)."""

    name: str

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, ports: None, owner: type) -> Port[T]: ...

    @overload
    def __get__(self, ports: Ports, owner: type) -> T: ...

    def __get__(self, ports: Ports | None, owner: type) -> Port[T] | T:
        if ports is None:
            return self
        return ports._read(self.name)  # type: ignore[no-any-return]

    def __set__(self, ports: Ports, value: T | Lazy[T]) -> None:
        ports._parts[self.name] = value


class Ports:
    """What nodes, the approval service, ingest and the CLI reach the world through.

    Attributes:
        settings: the deployment settings everything was chosen from.
        clock: the time source.
        store: the database: the documents and the checkpoint ports on one backend
            (read it through ``documents`` or ``checkpoints``, typed as the narrow port).
        bus: the message bus.
        llm: the language model.
        embedder: the embedder.
        vectors: the vector index beside the store.
        workspace: the mailbox and calendar (Gmail or the embedded one).
        tasks: the deadline task queue.
        notifier: how reviewers are told (each through their channel).
        config: ``inboxflow.yaml`` (routing rules, profiles, graph settings), validated.
        graph_settings: each graph's settings, typed.
        approvals: the approval service (wired by ``build_runtime``).
        gmail_reader: what ingest lists history and fetches messages with.

    Beside them, the business services the served graphs declare (``service``).
    """

    settings: Port[Settings] = Port()
    clock: Port[Clock] = Port()
    store: Port[DocumentCheckpointStore] = Port()
    bus: Port[MessageBus] = Port()
    llm: Port[LanguageModel] = Port()
    embedder: Port[Embedder] = Port()
    vectors: Port[VectorIndex] = Port()
    workspace: Port[Workspace] = Port()
    tasks: Port[TaskQueue] = Port()
    notifier: Port[Notifier] = Port()
    config: Port[InboxflowConfig] = Port()
    graph_settings: Port[GraphSettings] = Port()
    approvals: Port[Approvals] = Port()
    gmail_reader: Port[GmailReader] = Port()

    def __init__(
        self,
        *,
        settings: Settings | Lazy[Settings],
        clock: Clock | Lazy[Clock],
        store: DocumentCheckpointStore | Lazy[DocumentCheckpointStore],
        bus: MessageBus | Lazy[MessageBus],
        llm: LanguageModel | Lazy[LanguageModel],
        embedder: Embedder | Lazy[Embedder],
        vectors: VectorIndex | Lazy[VectorIndex],
        workspace: Workspace | Lazy[Workspace],
        tasks: TaskQueue | Lazy[TaskQueue],
        notifier: Notifier | Lazy[Notifier],
        config: InboxflowConfig | Lazy[InboxflowConfig],
        graph_settings: GraphSettings | Lazy[GraphSettings],
        gmail_reader: GmailReader | Lazy[GmailReader],
        approvals: Approvals | Lazy[Approvals] | None = None,
        services: Mapping[str, Any] | None = None,
    ) -> None:
        """The ports, and ``services``: the declared business services by name (or ``Lazy``)."""
        self._parts: dict[str, Any] = {
            "settings": settings,
            "clock": clock,
            "store": store,
            "bus": bus,
            "llm": llm,
            "embedder": embedder,
            "vectors": vectors,
            "workspace": workspace,
            "tasks": tasks,
            "notifier": notifier,
            "config": config,
            "graph_settings": graph_settings,
            "gmail_reader": gmail_reader,
            "approvals": approvals if approvals is not None else Lazy(_no_approvals),
        }
        clash = sorted(set(self._parts) & set(services or ()))
        if clash:
            raise ValueError(f"services named as ports: {clash}")
        self._parts.update(services or {})
        self._declared: frozenset[str] | None = None
        self._node = ""

    def replace(self, **parts: Any) -> Ports:
        """A copy with ``parts`` (by port name) in place of its own; the rest are shared."""
        unknown = set(parts) - set(self._parts)
        if unknown:
            raise AttributeError(f"no such port: {', '.join(sorted(unknown))}")
        other = copy.copy(self)
        other._parts = {**self._parts, **parts}
        return other

    @property
    def documents(self) -> DocumentStore:
        """The documents port: where features keep their records."""
        return self.store

    @property
    def checkpoints(self) -> CheckpointStore:
        """The checkpoint port: the step protocol (traces, leases, commits, step logs)."""
        return self.store

    def service(self, service: Service[T]) -> T:
        """The business service ``service`` declares, built on first read, typed as its protocol.

        Raises:
            UndeclaredPort: a node's view, and the node does not declare it (``Node(services=...)``).
            KeyError: no graph served here declares it (the root did not build it).
        """
        if service.name in PORT_NAMES:
            raise KeyError(f"{service.name} is a port, not a service")
        if service.name not in self._parts:
            raise KeyError(f"no served graph declares the {service.name} service")
        return self._read(service.name, "services")  # type: ignore[no-any-return]

    def set_service(self, service: Service[T], part: T | Lazy[T]) -> None:
        """Wire ``part`` as ``service`` in place of what the root built (as a port is assigned)."""
        if service.name not in self._parts or service.name in PORT_NAMES:
            raise KeyError(f"no served graph declares the {service.name} service")
        self._parts[service.name] = part

    def only(self, declared: Iterable[str], node: str) -> Ports:
        """A view for ``node`` that reads only ``declared`` (and ``OPEN_TO_EVERY_NODE``).

        The view shares this object's parts: a part it builds is built for all.
        """
        view = object.__new__(Ports)
        view._parts = self._parts
        view._declared = OPEN_TO_EVERY_NODE | frozenset(declared)
        view._node = node
        return view

    def built(self, name: str) -> bool:
        """Whether the part ``name`` is built (not a ``Lazy`` part still waiting)."""
        part = self._parts[name]
        return not isinstance(part, Lazy) or part.built

    def _read(self, name: str, declaration: str = "ports") -> Any:
        if self._declared is not None and name not in self._declared:
            raise UndeclaredPort(
                f"node {self._node} reads the {name} port but does not declare it: "
                f"Node(..., {declaration}=({name!r}, ...))"
            )
        part = self._parts[name]
        if isinstance(part, Lazy):
            part = self._parts[name] = part.get()
        return part


PORT_NAMES = frozenset(name for name, value in vars(Ports).items() if isinstance(value, Port))
"""The names a node may declare in ``Node(ports=...)``."""


def _no_approvals() -> Approvals:
    raise RuntimeError("no approval service wired: build the runtime with build_runtime")
