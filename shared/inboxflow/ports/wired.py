"""``Ports``: every port a process is wired with, one typed field each.

Built only by the composition root (``inboxflow.services.build_ports``), which
chooses each adapter from the settings; a field may hold a ``Lazy`` part,
built on its first read. Nodes see ``ctx.ports``: a view that lets a node read
only the ports its ``Node(ports=...)`` declares (``UndeclaredPort`` otherwise),
as ``uses_llm`` guards the model.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Generic, TypeVar, overload

from ..errors import NodeFailed
from ..lazy import Lazy

if TYPE_CHECKING:
    from ..approvals.service import ApprovalService
    from ..clock import Clock
    from ..config import InboxflowConfig
    from ..graph_settings import GraphSettings
    from ..settings import Settings
    from .bus import MessageBus
    from .checkpoint import CheckpointStore, DocumentCheckpointStore
    from .crm import CRM
    from .documents import DocumentStore
    from .drugs import DrugCatalogue
    from .embeddings import Embedder
    from .gmail_reader import GmailReader
    from .llm import LanguageModel
    from .notifier import Notifier
    from .quoting import QuotingService
    from .tasks import TaskQueue
    from .vectors import VectorIndex
    from .web_search import WebSearch
    from .workspace import Workspace

T = TypeVar("T")

OPEN_TO_EVERY_NODE = frozenset({"settings", "clock", "store", "llm", "graph_settings"})
"""Ports any node may read without declaring them (the model is guarded by ``uses_llm``)."""


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
        crm: the support desk's customers.
        drugs: the pharmacy's catalogue and reservations.
        quoting: the insurance quoting service.
        web_search: what the agent's ``web_search`` tool asks.
        gmail_reader: what ingest lists history and fetches messages with.
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
    approvals: Port[ApprovalService] = Port()
    crm: Port[CRM] = Port()
    drugs: Port[DrugCatalogue] = Port()
    quoting: Port[QuotingService] = Port()
    web_search: Port[WebSearch] = Port()
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
        crm: CRM | Lazy[CRM],
        drugs: DrugCatalogue | Lazy[DrugCatalogue],
        quoting: QuotingService | Lazy[QuotingService],
        web_search: WebSearch | Lazy[WebSearch],
        gmail_reader: GmailReader | Lazy[GmailReader],
        approvals: ApprovalService | Lazy[ApprovalService] | None = None,
    ) -> None:
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
            "crm": crm,
            "drugs": drugs,
            "quoting": quoting,
            "web_search": web_search,
            "gmail_reader": gmail_reader,
            "approvals": approvals if approvals is not None else Lazy(_no_approvals),
        }
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

    def _read(self, name: str) -> Any:
        if self._declared is not None and name not in self._declared:
            raise UndeclaredPort(
                f"node {self._node} reads the {name} port but does not declare it: "
                f"Node(..., ports=({name!r}, ...))"
            )
        part = self._parts[name]
        if isinstance(part, Lazy):
            part = self._parts[name] = part.get()
        return part


PORT_NAMES = frozenset(name for name, value in vars(Ports).items() if isinstance(value, Port))
"""The names a node may declare in ``Node(ports=...)``."""


def _no_approvals() -> ApprovalService:
    raise RuntimeError("no approval service wired: build the runtime with build_runtime")
