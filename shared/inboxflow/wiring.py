"""Builds a Runtime from Settings: the only module that names adapters.

Google Cloud client libraries are imported here lazily, only for the
adapters the settings select, so an embedded run never loads them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .adapters.inprocess_bus import InProcessBus
from .clock import Clock, SystemClock
from .ports.bus import MessageBus
from .ports.checkpoint import CheckpointStore
from .ports.embeddings import Embedder, EmbeddingPurpose
from .ports.llm import LanguageModel, LLMTask, LLMUsage, Out
from .ports.tasks import ScheduledTask, TaskQueue
from .runtime import Runtime, RuntimeOptions
from .settings import Settings

if TYPE_CHECKING:
    from .approvals.service import ApprovalService
    from .ports.notifier import Notifier


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
    return InProcessBus(clock=clock)


def make_task_queue(settings: Settings, store: CheckpointStore) -> TaskQueue:
    """The task queue the settings select."""
    if settings.tasks == "cloudtasks":
        from .adapters.cloud_tasks import CloudTasksQueue

        return CloudTasksQueue(project=settings.project, location=settings.region)
    from .adapters.sqlite_tasks import SqliteTaskQueue

    return SqliteTaskQueue(store)


def make_llm(settings: Settings) -> LanguageModel:
    """The language model: Gemini when configured (key or Vertex), else the offline model.

    Built on first use, so node functions that never call a model never import google.genai.
    """
    from .llm_selection import choose_llm

    return LazyModel(choose_llm)


def build_runtime(settings: Settings | None = None, clock: Clock | None = None) -> Runtime:
    """Wire a Runtime for ``settings`` (default: from the environment)."""
    from .graphs import graph_registry
    from .knowledge import default_embedder, make_vector_index
    from .workspace import workspace_from_env

    settings = settings or Settings.from_env()
    clock = clock or SystemClock()
    store = make_store(settings)
    bus = make_bus(settings, clock)
    runtime = Runtime(
        graphs=graph_registry(),
        store=store,
        bus=bus,
        llm=make_llm(settings),
        clock=clock,
        options=RuntimeOptions(only_node=settings.node),
        services={
            "workspace": workspace_from_env(store, clock=clock),
            "settings": settings,
            "embedder": LazyEmbedder(default_embedder),
            "vectors": make_vector_index(settings, store),
        },
    )
    if isinstance(bus, InProcessBus):
        bus.handler = runtime.handle_message
    approvals = make_approval_service(runtime, settings)
    runtime.services["approvals"] = approvals
    runtime.on_pause = approvals.after_pause
    return runtime


def make_notifier(workspace: Any, store: CheckpointStore, clock: Clock) -> Notifier:
    """How reviewers are emailed: through Gmail when the workspace is Gmail, else the outbox."""
    from .adapters.notifiers import GmailNotifier, OutboxNotifier

    if hasattr(workspace, "send_message"):
        return GmailNotifier(workspace)
    return OutboxNotifier(store, clock)


def make_approval_service(runtime: Runtime, settings: Settings) -> ApprovalService:
    """The approval service sharing ``runtime``'s store, clock and bus (tasks created lazily)."""
    from .approvals.service import ApprovalConfig, ApprovalService

    return ApprovalService(
        store=runtime.store,
        tasks=LazyTaskQueue(lambda: make_task_queue(settings, runtime.store)),
        notifier=make_notifier(runtime.services.get("workspace"), runtime.store, runtime.clock),
        resume=runtime.resume,
        clock=runtime.clock,
        config=ApprovalConfig.from_env(),
    )


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
