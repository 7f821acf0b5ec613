"""Builds a Runtime from Settings: the only module that names adapters.

Google Cloud client libraries are imported here lazily, only for the
adapters the settings select, so an embedded run never loads them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .adapters.inprocess_bus import InProcessBus
from .clock import Clock, SystemClock
from .ports.bus import MessageBus
from .ports.checkpoint import CheckpointStore
from .ports.llm import LanguageModel
from .ports.tasks import ScheduledTask, TaskQueue
from .runtime import Runtime, RuntimeOptions
from .settings import Settings

if TYPE_CHECKING:
    from .approvals.notify import Notifier
    from .approvals.service import ApprovalService


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
    """The language model: Gemini when configured (key or Vertex), else the offline model."""
    from .llm_selection import choose_llm

    return choose_llm()


def build_runtime(settings: Settings | None = None, clock: Clock | None = None) -> Runtime:
    """Wire a Runtime for ``settings`` (default: from the environment)."""
    from .graphs import graph_registry
    from .pipeline.tools import pipeline_tools
    from .tools import ToolRegistry
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
        tools=ToolRegistry(pipeline_tools()),
        clock=clock,
        options=RuntimeOptions(only_node=settings.node),
        services={"workspace": workspace_from_env(store, clock=clock), "settings": settings},
    )
    if isinstance(bus, InProcessBus):
        bus.handler = runtime.handle_message
    approvals = make_approval_service(runtime, settings)
    runtime.services["approvals"] = approvals
    runtime.on_pause = approvals.after_pause
    return runtime


def make_notifier(workspace: Any, store: CheckpointStore, clock: Clock) -> Notifier:
    """How reviewers are emailed: through Gmail when the workspace is Gmail, else the outbox."""
    from .approvals.notify import GmailNotifier, OutboxNotifier

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
