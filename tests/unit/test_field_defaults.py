"""Cold start (issue 42): the models a node's first event builds take no builtin ``list`` as a
default factory (pydantic parses its text signature on every build: ``field_defaults``)."""

from __future__ import annotations

import importlib

from pydantic import BaseModel

from inboxflow.field_defaults import empty_list

FIRST_EVENT_MODULES = (
    "inboxflow.config",
    "inboxflow.mail.model",
    "inboxflow.ports.checkpoint",
    "inboxflow.graphs.screen",
    "inboxflow.graphs.pipeline.state",
    "inboxflow.graphs.pipeline.tasks",
    "inboxflow.graphs.pipeline.tools",
    "inboxflow.graphs.assistant.state",
)


def test_first_event_models_use_a_plain_empty_list_factory() -> None:
    builtin = []
    for name in FIRST_EVENT_MODULES:
        for value in vars(importlib.import_module(name)).values():
            if isinstance(value, type) and issubclass(value, BaseModel):
                builtin += [
                    f"{value.__qualname__}.{field}"
                    for field, info in value.model_fields.items()
                    if info.default_factory is list
                ]
    assert builtin == []


def test_empty_list_makes_a_new_list_each_time() -> None:
    first, second = empty_list(), empty_list()
    assert first == [] and first is not second
