"""A process's one configuration: built once, at start-up, from the environment and
``inboxflow.yaml``, and passed down.

An entry point (``entry/``, ``functions/main.py``, the dev CLI) reads ``os.environ``
and calls :meth:`Configuration.from_environ`; the composition root
(``services.build_runtime``) turns the result into adapters, and everything below
gets its part (the deployment's ``Settings``, the ``InboxflowConfig``, the
``ApprovalConfig``, the graphs' ``GraphSettings``) or a value of it. Nothing else reads
the process's environment (``tests/unit/test_configuration.py`` checks it).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .approvals.settings import ApprovalConfig
from .graph_settings import GraphSettings
from .settings import Settings

if TYPE_CHECKING:
    from .config import InboxflowConfig
    from .engine.graph import Graph


@dataclass(frozen=True)
class Configuration:
    """Everything a process is configured with, typed by part.

    Attributes:
        settings: the deployment (store, bus, tasks, node, home, the environment read).
        config: ``inboxflow.yaml`` (routing, profiles, reviewers, Gemini roles), validated
            against ``graphs``, with what the environment overrides applied.
        approvals: where review links point and what the approval function accepts.
        graph_settings: each graph's settings (``graphs.NAME`` of the config, the environment's
            overrides).
        graphs: the graphs the process serves (a node function: its own, the others on demand).
    """

    settings: Settings
    config: InboxflowConfig
    approvals: ApprovalConfig
    graph_settings: GraphSettings
    graphs: Mapping[str, Graph]

    @property
    def environ(self) -> Mapping[str, str]:
        """The environment the entry point read (credentials, endpoints)."""
        return self.settings.environ

    @classmethod
    def from_environ(cls, environ: Mapping[str, str]) -> Configuration:
        """The configuration ``environ`` (the entry point's ``os.environ``) describes.

        Raises:
            ValueError: a setting is not valid (``ConfigError`` for ``inboxflow.yaml``).
        """
        return cls.of(Settings.from_env(environ))

    @classmethod
    def of(cls, settings: Settings, config: InboxflowConfig | None = None) -> Configuration:
        """The configuration of ``settings``: ``config`` as given, else ``inboxflow.yaml`` read
        and checked against the graphs served (a node function: its own graph only)."""
        graphs = served_graphs(settings)
        if config is None:
            config = load_deployed_config(settings, graphs)
        return cls(
            settings=settings,
            config=config,
            approvals=ApprovalConfig.from_env(settings.environ),
            graph_settings=GraphSettings(config.graph_settings, settings.environ),
            graphs=graphs,
        )


def served_graphs(settings: Settings) -> Mapping[str, Graph]:
    """The graphs a process serves: a node function imports only its own graph's package."""
    from .graphs import graph_registry, node_graphs

    if settings.node is not None:
        return node_graphs(settings.node, settings.environ)
    return graph_registry(settings.environ)


def load_deployed_config(settings: Settings, graphs: Mapping[str, Graph]) -> InboxflowConfig:
    """``inboxflow.yaml`` for ``settings``, with ``INBOXFLOW_AUTHSERV_ID`` over its ``authserv_id``.

    A node function checks the config against its own graph only: the others stay unimported.
    """
    from .config import load_config
    from .graphs import NodeGraphs
    from .mail.authentication import AUTHSERV_ID_VARIABLE

    own = graphs.own if isinstance(graphs, NodeGraphs) else None
    config = load_config(
        None,
        {own.name: own} if own is not None else graphs,
        settings.environ,
        partial=own is not None,
    )
    authserv_id = settings.environ.get(AUTHSERV_ID_VARIABLE)
    if authserv_id:
        config = config.model_copy(update={"authserv_id": authserv_id})
    return config
