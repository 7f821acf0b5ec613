"""Builds a Runtime from Settings: the only module that names adapters.

Google Cloud client libraries are imported here lazily, only for the
adapters the settings select, so an embedded run never loads them.
"""

from __future__ import annotations

from .adapters.inprocess_bus import InProcessBus
from .adapters.offline_llm import OfflineModel
from .clock import Clock, SystemClock
from .ports.bus import MessageBus
from .ports.checkpoint import CheckpointStore
from .ports.llm import LanguageModel
from .ports.tasks import TaskQueue
from .runtime import Runtime, RuntimeOptions
from .settings import Settings


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
    """The language model: the offline deterministic model until Gemini is configured."""
    return OfflineModel()


def build_runtime(settings: Settings | None = None, clock: Clock | None = None) -> Runtime:
    """Wire a Runtime for ``settings`` (default: from the environment)."""
    from .graphs import graph_registry
    from .pipeline.tools import pipeline_tools
    from .tools import ToolRegistry
    from .workspace import StoreWorkspace

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
        services={"workspace": StoreWorkspace(store), "settings": settings},
    )
    if isinstance(bus, InProcessBus):
        bus.handler = runtime.handle_message
    return runtime
