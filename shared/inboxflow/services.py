"""The composition root: every adapter and service a process uses, chosen in one place.

``build_runtime`` (node functions, the approval function, ingest, the CLI,
tests and benches alike) reads ``Settings`` once and builds a typed
``Services``; any part can be overridden (a test's store, a fake clock, a
Gmail double's workspace). Google client libraries are imported lazily, only
for the adapters the settings select, and the model, the embedder, the
task queue, the workspace, the vector index, the CRM and the reviewers'
notifier are built on first use: a node that never asks a model never
imports ``google.genai``, one that never reads mail no workspace adapter.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any

from .clock import Clock, SystemClock
from .ports.bus import MessageBus
from .ports.checkpoint import CheckpointStore
from .ports.embeddings import Embedder, EmbeddingPurpose
from .ports.llm import AgentTurn, ChatMessage, ChatSettings, LanguageModel, LLMTask, LLMUsage, Out
from .ports.notifier import Notifier
from .ports.tasks import ScheduledTask, TaskQueue
from .runtime import Runtime, RuntimeOptions
from .settings import Settings

if TYPE_CHECKING:
    from .approvals.service import ApprovalService
    from .config import InboxflowConfig
    from .graph import Graph
    from .graphs.pipeline.settings import PipelineSettings
    from .ports.gmail_reader import GmailReader
    from .ports.quoting import QuotingService
    from .ports.vectors import VectorIndex
    from .ports.workspace import Workspace


class Later:
    """A part of ``Services`` built on its first access (its adapter is imported only then)."""

    __slots__ = ("build",)

    def __init__(self, build: Callable[[], Any]) -> None:
        self.build = build


@dataclass
class Services:
    """What nodes, the approval function, ingest and the CLI reach the world through.

    Nodes see it as ``ctx.services``; ``services["workspace"]`` and
    ``services.workspace`` are the same thing (node code reads by name so a
    unit test can hand a node a plain dict of the parts it uses).

    Attributes:
        settings: the deployment settings everything was chosen from.
        clock: the time source.
        store: the checkpoint store.
        bus: the message bus.
        llm: the language model (built on first call).
        embedder: the embedder (built on first call).
        vectors: the vector index beside the store.
        workspace: the mailbox and calendar (Gmail or the embedded one).
        tasks: the deadline task queue (built on first use).
        pipeline_settings: the pipeline graph's settings.
        config: ``inboxflow.yaml`` (routing rules, profiles, graph settings), validated.
        approvals: the approval service (set by ``build_runtime``).
        extras: anything else a test or graph wires in, by name (``quoting``: the
            quoting API's client when ``INBOXFLOW_QUOTING_URL`` is set).
    """

    settings: Settings
    clock: Clock
    store: CheckpointStore
    bus: MessageBus
    llm: LanguageModel
    embedder: Embedder
    vectors: VectorIndex
    workspace: Workspace
    tasks: TaskQueue
    pipeline_settings: PipelineSettings
    config: InboxflowConfig
    approvals: ApprovalService | None = None
    extras: dict[str, Any] = field(default_factory=dict)

    def __getattribute__(self, name: str) -> Any:
        value = object.__getattribute__(self, name)
        if type(value) is Later:
            value = value.build()
            object.__setattr__(self, name, value)
        return value

    def __getitem__(self, name: str) -> Any:
        if name in self.extras:
            value = self.extras[name]
            if type(value) is Later:
                value = self.extras[name] = value.build()
            return value
        if name in _FIELDS and name != "extras":
            value = getattr(self, name)
            if value is not None:
                return value
        raise KeyError(name)

    def __setitem__(self, name: str, value: Any) -> None:
        if name in _FIELDS and name != "extras":
            setattr(self, name, value)
        else:
            self.extras[name] = value

    def __contains__(self, name: object) -> bool:
        try:
            self[str(name)]
        except KeyError:
            return False
        return True

    def __iter__(self) -> Iterator[str]:
        return iter(
            [name for name in _FIELDS if name != "extras" and name in self] + list(self.extras)
        )

    def get(self, name: str, default: Any = None) -> Any:
        """``services[name]``, or ``default``."""
        try:
            return self[name]
        except KeyError:
            return default

    @property
    def gmail_reader(self) -> GmailReader:
        """The Gmail reader ingest lists history and fetches messages with."""
        reader = self.extras.get("gmail_reader")
        if reader is None:
            from .adapters.google_gmail_reader import GoogleApiGmailReader

            reader = self.extras["gmail_reader"] = GoogleApiGmailReader()
        return reader  # type: ignore[no-any-return]


_FIELDS = frozenset(f.name for f in fields(Services))


def make_store(settings: Settings) -> CheckpointStore:
    """The checkpoint store the settings select."""
    if settings.store == "firestore":
        from .adapters.firestore_store import FirestoreCheckpointStore

        return FirestoreCheckpointStore(project=settings.project)
    from .adapters.sqlite_store import SqliteCheckpointStore

    return SqliteCheckpointStore(settings.sqlite_path)


def make_bus(settings: Settings, clock: Clock) -> MessageBus:
    """The message bus the settings select."""
    if settings.bus == "pubsub":
        from .adapters.pubsub_bus import PubSubBus

        return PubSubBus(project=settings.project)
    from .adapters.inprocess_bus import InProcessBus

    return InProcessBus(clock=clock)


def make_task_queue(settings: Settings, store: CheckpointStore) -> TaskQueue:
    """The task queue the settings select."""
    if settings.tasks == "cloudtasks":
        from .adapters.cloud_tasks import CloudTasksQueue

        return CloudTasksQueue(project=settings.project, location=settings.region)
    from .adapters.sqlite_tasks import SqliteTaskQueue

    return SqliteTaskQueue(store)


def make_workspace(settings: Settings, store: CheckpointStore, clock: Clock) -> Workspace:
    """Gmail and Calendar through the Google API (or its local double), else the embedded one."""
    if settings.workspace == "google":
        from .adapters.google_workspace import GoogleWorkspace

        return GoogleWorkspace.from_env(store, settings.environ, clock=clock)
    from .adapters.store_workspace import StoreWorkspace

    return StoreWorkspace(store, clock)


def make_notifier(
    settings: Settings,
    workspace: Workspace,
    store: CheckpointStore,
    clock: Clock,
    config: InboxflowConfig | None = None,
) -> Notifier:
    """Each reviewer through the channel ``inboxflow.yaml`` gives them (``adapters.channels``);
    Gmail when the workspace is Gmail, else the outbox, for everyone else."""
    from .adapters.channels import ChannelNotifier, channel_factory
    from .adapters.notifiers import GmailNotifier
    from .config import InboxflowConfig

    gmail = GmailNotifier(workspace) if settings.workspace == "google" else None
    build = channel_factory(store, clock, settings.environ, gmail)
    return ChannelNotifier(config or InboxflowConfig(), build, store, gmail)


def _pipeline_settings(settings: Settings, config: InboxflowConfig) -> PipelineSettings:
    from .graphs.pipeline.settings import PipelineSettings

    return PipelineSettings.from_env(settings.environ, base=config.graph_settings("pipeline"))


def build_services(
    settings: Settings | None = None, *, clock: Clock | None = None, **overrides: Any
) -> Services:
    """Choose every adapter for ``settings`` (default: from the environment).

    Args:
        settings: what to build; ``Settings.from_env()`` when omitted.
        clock: the time source (default the system clock).
        **overrides: ready-made parts by ``Services`` field name (``store``,
            ``workspace``, ``llm``, ...); other names land in ``extras``.
    """
    from .config import load_config
    from .graphs import NodeGraphs

    settings = settings or Settings.from_env()
    clock = clock or SystemClock()
    given = {name: overrides.pop(name) for name in list(overrides) if name in _FIELDS}
    config = given.get("config")
    if config is None:
        # A node function checks the config against its own graph only: the others stay unimported.
        graphs = served_graphs(settings)
        own = graphs.own if isinstance(graphs, NodeGraphs) else None
        config = load_config(
            graphs={own.name: own} if own is not None else graphs,
            environ=settings.environ,
            partial=own is not None,
        )
    # ``is None``, not ``or``: an empty in-process bus is falsy (it has a length).
    store = given.get("store")
    store = make_store(settings) if store is None else store
    defaults: dict[str, Callable[[], Any]] = {
        "bus": lambda: make_bus(settings, clock),
        "llm": lambda: LazyModel(lambda: _choose_llm(settings, config)),
        "embedder": lambda: LazyEmbedder(lambda: _choose_embedder(settings, config)),
        "vectors": lambda: Later(store.vector_index),
        "workspace": lambda: Later(lambda: make_workspace(settings, store, clock)),
        "tasks": lambda: LazyTaskQueue(lambda: make_task_queue(settings, store)),
        # Read on first use: a function serving another graph never imports the pipeline.
        "pipeline_settings": lambda: Later(lambda: _pipeline_settings(settings, config)),
    }
    parts: dict[str, Any] = {"settings": settings, "clock": clock, "store": store, "config": config}
    for name, build in defaults.items():
        part = given.get(name)
        parts[name] = build() if part is None else part
    if settings.quoting_url and "quoting" not in overrides:
        # Unset otherwise: the planner then quotes with EmbeddedQuoting(store, clock).
        from .adapters.lazy_quoting import LazyQuoting

        overrides["quoting"] = LazyQuoting(lambda: _http_quoting(settings))
    if "crm" not in overrides:  # the support desk's customers: services["crm"]
        overrides["crm"] = Later(lambda: _choose_crm(settings))
    return Services(**parts, extras=overrides)


def build_runtime(
    settings: Settings | None = None,
    clock: Clock | None = None,
    *,
    graphs: Mapping[str, Graph] | None = None,
    options: RuntimeOptions | None = None,
    notifier: Notifier | None = None,
    **overrides: Any,
) -> Runtime:
    """A runtime with its services and approval service, for ``settings`` (default: the environment).

    Args:
        settings: what to build; ``Settings.from_env()`` when omitted.
        clock: the time source.
        graphs: the graphs served (default the registry).
        options: runtime tunables (default: serve ``settings.node`` only, when set).
        notifier: how reviewers are emailed (default: chosen from the settings).
        **overrides: parts of ``Services`` to use as given (see ``build_services``).
    """
    from .approvals.service import ApprovalService
    from .approvals.settings import ApprovalConfig

    settings = settings or Settings.from_env()
    services = build_services(settings, clock=clock, **overrides)
    runtime = Runtime(
        graphs=graphs if graphs is not None else served_graphs(settings),
        store=services.store,
        bus=services.bus,
        llm=services.llm,
        clock=services.clock,
        options=options or RuntimeOptions(only_node=settings.node),
        services=services,
    )
    if is_inprocess_bus(services.bus) and services.bus.handler is None:  # type: ignore[attr-defined]
        services.bus.handler = runtime.handle_message  # type: ignore[attr-defined]
    approvals = ApprovalService(
        store=services.store,
        tasks=services.tasks,
        notifier=notifier
        or LazyNotifier(
            lambda: make_notifier(
                settings, services.workspace, services.store, services.clock, services.config
            )
        ),
        resume=runtime.resume,
        clock=services.clock,
        config=ApprovalConfig.from_env(settings.environ),
    )
    services.approvals = approvals
    runtime.on_pause = approvals.after_pause
    return runtime


def served_graphs(settings: Settings) -> Mapping[str, Graph]:
    """The graphs a process serves: a node function imports only its own graph's package."""
    from .graphs import graph_registry, node_graphs

    if settings.node is not None:
        return node_graphs(settings.node, settings.environ)
    return graph_registry(settings.environ)


def __getattr__(name: str) -> Any:
    if name == "LazyQuoting":  # kept out of start-up: it imports the quoting port's models
        from .adapters.lazy_quoting import LazyQuoting

        return LazyQuoting
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def is_inprocess_bus(bus: MessageBus) -> bool:
    """Whether ``bus`` is the embedded in-process bus (without importing it when it is not)."""
    module = sys.modules.get("inboxflow.adapters.inprocess_bus")
    return module is not None and isinstance(bus, module.InProcessBus)


def _choose_llm(settings: Settings, config: InboxflowConfig | None = None) -> LanguageModel:
    from .llm_selection import choose_llm

    return choose_llm(settings.environ, config.gemini.by_role() if config else None)


def _choose_crm(settings: Settings) -> Any:
    """The HTTP CRM when ``INBOXFLOW_CRM_URL`` is set, else the embedded sample customers."""
    if settings.environ.get("INBOXFLOW_CRM_URL", "").strip():
        from .adapters.http_crm import choose_crm

        return choose_crm(settings.environ)
    from .adapters.embedded_crm import EmbeddedCRM

    return EmbeddedCRM()


def _choose_embedder(settings: Settings, config: InboxflowConfig | None = None) -> Embedder:
    from .adapters.offline_embedder import OfflineEmbedder
    from .llm_selection import choose_embedder

    configured = config.gemini.by_role() if config else None
    return choose_embedder(settings.environ, configured) or OfflineEmbedder()


def _http_quoting(settings: Settings) -> QuotingService:
    from .adapters.http_quoting import HttpQuoting

    return HttpQuoting.from_env(
        {**settings.environ, "INBOXFLOW_QUOTING_URL": settings.quoting_url or ""}
    )


class LazyNotifier(Notifier):
    """The reviewers' notifier, built on first send (only pausing and notifying nodes send)."""

    def __init__(self, build: Callable[[], Notifier]) -> None:
        self._build = build
        self._notifier: Notifier | None = None

    @property
    def notifier(self) -> Notifier:
        """The underlying notifier (built now if needed)."""
        if self._notifier is None:
            self._notifier = self._build()
        return self._notifier

    def send(
        self,
        to: str,
        subject: str,
        text: str,
        html: str,
        trace_key: str,
        sender: str | None = None,
        link: str | None = None,
    ) -> dict[str, Any]:
        return self.notifier.send(to, subject, text, html, trace_key, sender, link)

    def find(self, trace_key: str, sender: str | None = None) -> dict[str, Any] | None:
        return self.notifier.find(trace_key, sender)

    def __getattr__(self, name: str) -> Any:
        """The built notifier's own API (``messages()`` of the outbox channel)."""
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self.notifier, name)


class LazyTaskQueue(TaskQueue):
    """Builds the real queue on first use: most functions never schedule a task."""

    def __init__(self, build: Callable[[], TaskQueue]) -> None:
        self._build = build
        self._queue: TaskQueue | None = None

    @property
    def queue(self) -> TaskQueue:
        """The underlying queue (built now if needed)."""
        if self._queue is None:
            self._queue = self._build()
        return self._queue

    def schedule(self, task: ScheduledTask) -> bool:
        return self.queue.schedule(task)


class LazyModel(LanguageModel):
    """A language model built on its first call."""

    def __init__(self, build: Callable[[], LanguageModel]) -> None:
        self._build = build
        self._model: LanguageModel | None = None

    @property
    def model(self) -> LanguageModel:
        """The underlying model (built now if needed)."""
        if self._model is None:
            self._model = self._build()
        return self._model

    @property
    def name(self) -> str:  # type: ignore[override]
        return self.model.name

    def generate(self, task: LLMTask[Out], inputs: Mapping[str, Any]) -> tuple[Out, LLMUsage]:
        return self.model.generate(task, inputs)

    def chat(
        self, messages: list[ChatMessage], tools: list[dict[str, Any]], settings: ChatSettings
    ) -> AgentTurn:
        return self.model.chat(messages, tools, settings)


class LazyEmbedder(Embedder):
    """An embedder built on its first call."""

    def __init__(self, build: Callable[[], Embedder]) -> None:
        self._build = build
        self._embedder: Embedder | None = None

    @property
    def embedder(self) -> Embedder:
        """The underlying embedder (built now if needed)."""
        if self._embedder is None:
            self._embedder = self._build()
        return self._embedder

    @property
    def name(self) -> str:  # type: ignore[override]
        return self.embedder.name

    @property
    def dimensions(self) -> int:  # type: ignore[override]
        return self.embedder.dimensions

    def embed(
        self, texts: Sequence[str], purpose: EmbeddingPurpose = "document"
    ) -> list[list[float]]:
        return self.embedder.embed(texts, purpose)
