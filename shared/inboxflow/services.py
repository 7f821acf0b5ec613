"""The composition root: every adapter a process uses, chosen in one place.

``build_runtime`` (node functions, the approval function, ingest, the CLI,
tests and benches alike) takes the process's ``Configuration`` (built once by
the entry point from the environment and ``inboxflow.yaml``) and builds the typed
``Ports``; any port can be given ready-made (a test's store, a fake clock, a
Gmail double's workspace). No adapter is built anywhere else. Google client
libraries are imported lazily, only for the adapters the settings select,
and the model, the embedder, the task queue, the workspace, the vector
index, the reviewers' notifier and the business services the served graphs
declare (``Graph(services=...)``, built by ``SERVICE_FACTORIES``) are ``Lazy``
parts built on first use: a node that never asks a model never imports
``google.genai``, one that never reads mail no workspace adapter.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from .clock import Clock, SystemClock
from .configuration import Configuration, served_graphs
from .engine.runtime import Runtime, RuntimeOptions
from .lazy import Lazy
from .ports.bus import MessageBus
from .ports.checkpoint import DocumentCheckpointStore
from .ports.documents import DocumentStore
from .ports.wired import PORT_NAMES, Ports
from .settings import Settings

if TYPE_CHECKING:
    from .approvals.service import ApprovalService
    from .config import InboxflowConfig
    from .engine.graph import Graph
    from .graphs.agent.drugs import DrugCatalogue
    from .graphs.agent.web_search import WebSearch
    from .graphs.planner.quoting import QuotingService
    from .graphs.support.crm import CRM
    from .ports.embeddings import Embedder
    from .ports.gmail_reader import GmailReader
    from .ports.llm import LanguageModel
    from .ports.notifier import Notifier
    from .ports.tasks import TaskQueue  # its ScheduledTask model: built only where tasks are
    from .ports.vectors import VectorIndex
    from .ports.wired import Service
    from .ports.workspace import Workspace


def make_store(settings: Settings) -> DocumentCheckpointStore:
    """The database the settings select: the documents and the checkpoint ports on one backend."""
    if settings.store == "firestore":
        from .adapters.firestore_store import FirestoreCheckpointStore

        return FirestoreCheckpointStore.from_env(settings.environ, project=settings.project)
    from .adapters.sqlite_store import SqliteCheckpointStore

    return SqliteCheckpointStore(settings.sqlite_path)


def make_vector_index(store: DocumentStore) -> VectorIndex:
    """The vector index beside ``store``: in the same SQLite file, or on the same Firestore client.

    Raises:
        NotImplementedError: ``store`` keeps no vectors (a test double).
    """
    # A store's adapter module is loaded already: test that one only, import no other client.
    if "inboxflow.adapters.sqlite_store" in sys.modules:
        from .adapters.sqlite_store import SqliteCheckpointStore

        if isinstance(store, SqliteCheckpointStore):
            from .adapters.sqlite_vectors import SqliteVectorIndex

            return SqliteVectorIndex(store.path)
    if "inboxflow.adapters.firestore_store" in sys.modules:
        from .adapters.firestore_store import FirestoreCheckpointStore

        if isinstance(store, FirestoreCheckpointStore):
            from .adapters.firestore_vectors import FirestoreVectorIndex

            return FirestoreVectorIndex(client=store.client)
    raise NotImplementedError(f"{type(store).__name__} keeps no vector index")


def make_bus(settings: Settings, clock: Clock) -> MessageBus:
    """The message bus the settings select."""
    if settings.bus == "pubsub":
        from .adapters.pubsub_bus import PubSubBus

        return PubSubBus(project=settings.project)
    from .adapters.inprocess_bus import InProcessBus

    return InProcessBus(clock=clock)


def make_task_queue(settings: Settings, store: DocumentStore) -> TaskQueue:
    """The task queue the settings select."""
    if settings.tasks == "cloudtasks":
        from .adapters.cloud_tasks import CloudTasksQueue

        local_token = None
        if settings.environ.get("CLOUD_TASKS_EMULATOR_HOST"):  # no OIDC: the home's token
            from .approvals.task_auth import local_task_token

            local_token = local_task_token(settings.home)
        return CloudTasksQueue.from_env(
            settings.environ,
            project=settings.project,
            location=settings.region,
            local_token=local_token,
        )
    from .adapters.sqlite_tasks import SqliteTaskQueue

    return SqliteTaskQueue(store)


def make_workspace(
    settings: Settings,
    store: DocumentStore,
    clock: Clock,
    scopes_for: Callable[[str], tuple[str, ...]] | None = None,
) -> Workspace:
    """Gmail and Calendar through the Google API (or its local double), else the embedded one;
    each mailbox's credentials ask for ``scopes_for(mailbox)`` (``mailbox_scopes_for``)."""
    if settings.workspace == "google":
        from .adapters.google_workspace import GoogleWorkspace

        return GoogleWorkspace.from_env(store, settings.environ, clock=clock, scopes_for=scopes_for)
    from .adapters.store_workspace import StoreWorkspace

    return StoreWorkspace(store, clock)


def workspace_from_env(
    store: DocumentStore, environ: Mapping[str, str], clock: Any = None
) -> Workspace:
    """The workspace adapter the environment selects (``make_workspace`` from ``Settings``).

    ``GoogleWorkspace`` when ``INBOXFLOW_GOOGLE_API_URL`` (the local Gmail and
    Calendar double) or Google credentials (``INBOXFLOW_GMAIL_CREDENTIALS`` or
    ``INBOXFLOW_GMAIL_CREDENTIALS_SECRET``) are configured, bound to
    ``INBOXFLOW_MAILBOX`` by default (``for_mailbox`` switches); otherwise
    ``StoreWorkspace``.

    Args:
        store: the checkpoint store (contacts; the whole workspace for ``StoreWorkspace``).
        environ: variables to read (the entry point's environment).
        clock: time source (anything with ``now()``).
    """
    return make_workspace(Settings.from_env(environ), store, clock)


def mailbox_scopes_for(
    settings: Settings, store: DocumentStore, config: InboxflowConfig
) -> Callable[[str], tuple[str, ...]]:
    """``address -> scopes`` its credentials ask for, whatever their type: those the graphs its
    mail can reach need (``mailbox_scopes``: ``calendar.events`` only where one uses the
    calendar), from its entry in the mailbox registry, read when its credentials are built.

    An address that is not a registered mailbox (a reviewer notice's sender), or one whose
    graph is not served here, gets Gmail and Calendar, as before per-mailbox scopes.
    """

    def scopes(address: str) -> tuple[str, ...]:
        from .adapters.google_credentials import SCOPES
        from .ingest.mailboxes import MailboxRegistry
        from .mailbox_scopes import mailbox_scopes

        try:
            mailbox = MailboxRegistry(store).get(address)
        except ValueError:  # not an address
            mailbox = None
        if mailbox is None:
            return SCOPES
        try:
            return mailbox_scopes(mailbox.address, mailbox.graph, served_graphs(settings), config)
        except KeyError:
            return SCOPES

    return scopes


def make_notifier(
    settings: Settings,
    workspace: Workspace,
    store: DocumentStore,
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


SERVICE_FACTORIES: Mapping[str, Callable[[Ports], Any]] = {
    "crm": lambda ports: _choose_crm(ports.settings),
    "drugs": lambda ports: _embedded_drugs(ports.store, ports.clock),
    "quoting": lambda ports: _choose_quoting(ports.settings, ports.store, ports.clock),
    "web_search": lambda ports: _knowledge_base_search(ports),
}
"""How the root builds each business service a graph may declare (``Service.name``), from the
other ports: the adapter is chosen here, never in the graph."""


def declared_services(graphs: Mapping[str, Graph]) -> dict[str, Service[Any]]:
    """The business services ``graphs`` declare, by name (a node function's: its own graph's).

    Raises:
        ValueError: two graphs declare one name with different protocols.
    """
    from .graphs import NodeGraphs

    served = [graphs.own] if isinstance(graphs, NodeGraphs) else list(graphs.values())
    found: dict[str, Service[Any]] = {}
    for graph in served:
        for service in graph.services:
            if found.setdefault(service.name, service).protocol is not service.protocol:
                raise ValueError(f"two graphs declare the {service.name} service differently")
    return found


def _service_part(build: Callable[[Ports], Any], ports: Callable[[], Ports]) -> Lazy[Any]:
    """A service built by ``build`` from the ports on its first read."""
    return Lazy(lambda: build(ports()))


def build_ports(
    configuration: Configuration | Settings,
    *,
    clock: Clock | None = None,
    graphs: Mapping[str, Graph] | None = None,
    **given: Any,
) -> Ports:
    """Choose every adapter for ``configuration``.

    Each part is built on first use (a ``Lazy`` part) but the settings, the
    clock, the store and the config: a node that never asks a model never
    imports ``google.genai``, one that never reads mail no workspace adapter.

    Args:
        configuration: what to build (the entry point's ``Configuration``); a
            ``Settings`` is completed with ``Configuration.of`` (``inboxflow.yaml``
            read for it unless ``given`` has the ``config``).
        clock: the time source (default the system clock).
        graphs: the graphs served, whose business services are built (default
            the configuration's).
        **given: ready-made parts by ``Ports`` field or service name (``store``,
            ``workspace``, ``llm``, ``quoting``...), used as given.

    Raises:
        TypeError: a name in ``given`` is neither a port nor a service the graphs declare.
        ValueError: a graph declares a service the root has no factory for, and none is given.
    """
    if isinstance(configuration, Settings):
        configuration = Configuration.of(configuration, given.get("config"))
    settings = configuration.settings
    config = configuration.config
    clock = clock or SystemClock()
    declared = declared_services(configuration.graphs if graphs is None else graphs)
    unknown = sorted(set(given) - PORT_NAMES - set(declared))
    if unknown:
        raise TypeError(f"not ports: {unknown}; ports: {sorted(PORT_NAMES)}")
    unbuilt = sorted(set(declared) - set(SERVICE_FACTORIES) - set(given))
    if unbuilt:
        raise ValueError(f"no factory builds the declared services {unbuilt}")
    # ``is None``, not ``or``: an empty in-process bus is falsy (it has a length).
    store = given.get("store")
    store = make_store(settings) if store is None else store
    bus = given.get("bus")
    bus = make_bus(settings, clock) if bus is None else bus
    scopes = mailbox_scopes_for(settings, store, config)
    parts: dict[str, Any] = dict(
        settings=settings,
        clock=clock,
        store=store,
        config=config,
        bus=bus,
        llm=Lazy(lambda: _choose_llm(settings, config)),
        embedder=Lazy(lambda: _choose_embedder(settings, config)),
        vectors=Lazy(lambda: make_vector_index(store)),
        workspace=Lazy(lambda: make_workspace(settings, store, clock, scopes)),
        tasks=Lazy(lambda: make_task_queue(settings, store)),
        notifier=Lazy(lambda: make_notifier(settings, ports.workspace, store, clock, ports.config)),
        graph_settings=configuration.graph_settings,
        gmail_reader=Lazy(lambda: _google_gmail_reader(settings, scopes)),
        services={
            name: given[name]
            if given.get(name) is not None
            else _service_part(SERVICE_FACTORIES[name], lambda: ports)
            for name in declared
        },
    )
    ports_given = {n: p for n, p in given.items() if p is not None and n in PORT_NAMES}
    ports = Ports(**{**parts, **ports_given})
    return ports


def build_runtime(
    configuration: Configuration | Settings,
    clock: Clock | None = None,
    *,
    graphs: Mapping[str, Graph] | None = None,
    options: RuntimeOptions | None = None,
    **given: Any,
) -> Runtime:
    """A runtime with its ports and approval service, for ``configuration``.

    Args:
        configuration: what to build (the entry point's ``Configuration``, or ``Settings``
            completed as in ``build_ports``).
        clock: the time source.
        graphs: the graphs served (default the configuration's).
        options: runtime tunables (default: serve ``settings.node`` only, when set).
        **given: ports to use as given (see ``build_ports``).
    """
    if isinstance(configuration, Settings):
        configuration = Configuration.of(configuration, given.get("config"))
    settings = configuration.settings
    served = graphs if graphs is not None else configuration.graphs
    # Built on first use, from the parts and the graphs below (the closure reads ``ports``).
    given.setdefault("approvals", Lazy(lambda: _approval_service(configuration, ports, served)))
    ports = build_ports(configuration, clock=clock, graphs=served, **given)
    return Runtime(
        graphs=served,
        ports=ports,
        options=options or RuntimeOptions(only_node=settings.node),
        on_pause=lambda approval: ports.approvals.after_pause(approval),
        shadow_llm=_shadow_llm(settings, configuration.config),
    )


def _approval_service(
    configuration: Configuration, ports: Ports, graphs: Mapping[str, Graph]
) -> ApprovalService:
    """The approval service of a runtime: its decisions resume through the bus
    (``waits.publish_resume``), checked against the pause kinds ``graphs`` declare."""
    from .approvals.service import ApprovalService
    from .engine.waits import publish_resume

    return ApprovalService(
        store=ports.store,
        tasks=Lazy(lambda: ports.tasks),
        notifier=Lazy(lambda: ports.notifier),
        resume=lambda trace_id, decision: publish_resume(
            ports.checkpoints, ports.bus, ports.clock, trace_id, decision
        ),
        clock=ports.clock,
        config=configuration.approvals,
        settings=ports.config,
        graphs=graphs,
    )


def is_inprocess_bus(bus: MessageBus) -> bool:
    """Whether ``bus`` is the embedded in-process bus (without importing it when it is not)."""
    module = sys.modules.get("inboxflow.adapters.inprocess_bus")
    return module is not None and isinstance(bus, module.InProcessBus)


def _shadow_llm(settings: Settings, config: InboxflowConfig) -> Lazy[LanguageModel] | None:
    """The model of ``shadow:`` (built on first use), or None when the shadow keeps the live one."""
    shadow = config.shadow
    if shadow is None or not shadow.changes_model:
        return None
    roles = config.gemini.by_role()
    if shadow.gemini is not None:
        roles = {role: {**roles[role], **own} for role, own in shadow.gemini.by_role().items()}
    environ = {**settings.environ, "INBOXFLOW_LLM": shadow.model_choice()}

    def build() -> LanguageModel:
        from .llm_selection import choose_llm

        return choose_llm(environ, roles)

    return Lazy(build)


def _choose_llm(settings: Settings, config: InboxflowConfig | None = None) -> LanguageModel:
    from .llm_selection import choose_llm

    return choose_llm(settings.environ, config.gemini.by_role() if config else None)


def _choose_crm(settings: Settings) -> CRM:
    """The HTTP CRM when ``INBOXFLOW_CRM_URL`` is set, else the embedded sample customers."""
    if settings.environ.get("INBOXFLOW_CRM_URL", "").strip():
        from .adapters.http_crm import choose_crm

        return choose_crm(settings.environ)
    from .adapters.embedded_crm import EmbeddedCRM

    return EmbeddedCRM()


def _choose_embedder(settings: Settings, config: InboxflowConfig | None = None) -> Embedder:
    return default_embedder(settings.environ, config.gemini.by_role() if config else None)


def default_embedder(
    environ: Mapping[str, str], configured: Mapping[str, Any] | None = None
) -> Embedder:
    """Gemini embeddings when configured (``llm_selection.choose_embedder``), else offline."""
    from .adapters.offline_embedder import OfflineEmbedder
    from .llm_selection import choose_embedder

    chosen = choose_embedder(environ, configured) if configured else choose_embedder(environ)
    return chosen if chosen is not None else OfflineEmbedder()


def _choose_quoting(settings: Settings, store: DocumentStore, clock: Clock) -> QuotingService:
    """The quoting API's client when ``INBOXFLOW_QUOTING_URL`` is set, else the embedded one."""
    if settings.quoting_url:
        from .adapters.http_quoting import HttpQuoting

        return HttpQuoting.from_env(
            {**settings.environ, "INBOXFLOW_QUOTING_URL": settings.quoting_url}
        )
    from .adapters.embedded_quoting import EmbeddedQuoting

    return EmbeddedQuoting(store, clock)


def _embedded_drugs(store: DocumentStore, clock: Clock) -> DrugCatalogue:
    from .adapters.embedded_drugs import EmbeddedDrugs

    return EmbeddedDrugs(store, clock=clock)


def _knowledge_base_search(ports: Ports) -> WebSearch:
    """Offline search over the knowledge base (the embedder and the index of ``ports``)."""
    from .adapters.kb_web_search import KnowledgeBaseSearch
    from .knowledge import KnowledgeBase

    return KnowledgeBaseSearch(KnowledgeBase(ports.embedder, ports.vectors))


def _google_gmail_reader(
    settings: Settings, scopes_for: Callable[[str], tuple[str, ...]]
) -> GmailReader:
    from .adapters.google_api import google_api_url, mailbox_credentials
    from .adapters.google_gmail_reader import GoogleApiGmailReader

    return GoogleApiGmailReader(
        api_url=google_api_url(settings.environ),
        credentials=mailbox_credentials(settings.environ, scopes_for),
    )
