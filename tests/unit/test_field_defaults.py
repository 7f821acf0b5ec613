"""Cold start (issue 42): the models a node function builds take no builtin ``list`` or ``dict``
as a default factory (pydantic parses its text signature on every build, and the first one
asked costs about 2.7 ms more: ``field_defaults``)."""

from __future__ import annotations

import importlib

from pydantic import BaseModel

from inboxflow.field_defaults import empty_dict, empty_list

FIRST_EVENT_MODULES = (
    "inboxflow.config",
    "inboxflow.mail.model",
    "inboxflow.ports.checkpoint",
    "inboxflow.graphs.screen",
    "inboxflow.graphs.pipeline.state",
    "inboxflow.graphs.pipeline.tasks",
    "inboxflow.graphs.pipeline.tools",
    "inboxflow.graphs.assistant.state",
    "inboxflow.graphs.planner.state",
    "inboxflow.graphs.planner.settings",
    "inboxflow.graphs.planner.quoting",
    "inboxflow.graphs.agent.state",
    "inboxflow.graphs.support.state",
    "inboxflow.graphs.support.settings",
    "inboxflow.graphs.support.tasks",
    "inboxflow.graphs.support.tickets",
    "inboxflow.engine.waits",
    "inboxflow.approvals.digests",
    "inboxflow.ingest.mailboxes",
    "inboxflow.ports.tasks",
)


def test_node_models_use_plain_empty_factories() -> None:
    builtin = []
    for name in FIRST_EVENT_MODULES:
        for value in vars(importlib.import_module(name)).values():
            if isinstance(value, type) and issubclass(value, BaseModel):
                builtin += [
                    f"{value.__qualname__}.{field}"
                    for field, info in value.model_fields.items()
                    if info.default_factory in (list, dict)
                ]
    assert builtin == []


def test_empty_list_makes_a_new_list_each_time() -> None:
    first, second = empty_list(), empty_list()
    assert first == [] and first is not second


def test_empty_dict_makes_a_new_dict_each_time() -> None:
    first, second = empty_dict(), empty_dict()
    assert first == {} and first is not second
