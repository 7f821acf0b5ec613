"""A step's new state JSON is its model's whole dump, byte for byte, also when only the updated
fields are dumped over a settled ``before`` (``Runtime._apply``, ``_fields_stand_alone``)."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any, Literal

from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, Field, computed_field, field_validator, model_validator

from inboxflow.engine.graph import Graph, Node
from inboxflow.engine.runtime import Runtime, _fields_stand_alone
from inboxflow.engine.step import END, Step


class Part(BaseModel):
    label: str = ""
    score: float = 0.0
    at: dt.datetime | None = None
    tags: list[str] = []


class Plain(BaseModel):
    """Fields that validate and dump on their own (like the graphs' states)."""

    schema_version: int = 1
    text: str = Field(default="", frozen=True)
    count: int = 0
    ratio: float | None = None
    kind: Literal["a", "b"] = "a"
    part: Part | None = None
    parts: list[Part] = []
    notes: dict[str, Any] = {}


class Derived(BaseModel):
    """``total`` follows ``count``: a model validator reads one field to set another."""

    count: int = 0
    total: int = 0

    @model_validator(mode="after")
    def _total(self) -> Derived:
        self.total = self.count * 10
        return self


class Computed(BaseModel):
    count: int = 0

    @computed_field  # type: ignore[prop-decorator]
    @property
    def double(self) -> int:
        return self.count * 2


class Checked(BaseModel):
    low: int = 0
    high: int = 0

    @field_validator("high")
    @classmethod
    def _at_least_low(cls, value: int, info: Any) -> int:
        return max(value, info.data.get("low", 0))


def _graph(model: type[BaseModel]) -> Graph:
    return Graph.build(
        model.__name__.lower(),
        "n",
        model,
        [Node("n", lambda state, ctx: Step(update={}, goto=END), routes=(END,))],
    )


def _settled(model: type[BaseModel], state: dict[str, Any]) -> dict[str, Any]:
    """``state`` as this runtime's own dump of its model: what a settled ``before`` is."""
    return model.model_validate(state).model_dump(mode="json")


def _both(graph: Graph, before: dict[str, Any], update: dict[str, Any]) -> tuple[str, str]:
    _, partial = Runtime._apply(graph, before, update, True)
    _, whole = Runtime._apply(graph, before, update, False)
    return json.dumps(partial), json.dumps(whole)  # key order included


texts = st.text(max_size=20)
floats = st.floats(allow_nan=False, allow_infinity=False, width=32)
times = st.datetimes(
    min_value=dt.datetime(2000, 1, 1), max_value=dt.datetime(2100, 1, 1), timezones=st.none()
)
parts = st.builds(
    Part,
    label=texts,
    score=floats,
    at=st.none() | times,
    tags=st.lists(texts, max_size=3),
)
part_data = parts.map(lambda part: part.model_dump(mode="json")) | parts
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | floats | texts,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(texts, inner, max_size=3),
    max_leaves=8,
)
updates = st.fixed_dictionaries(
    {},
    optional={
        "count": st.integers(),
        "ratio": st.none() | floats | st.integers(),
        "kind": st.sampled_from(["a", "b"]),
        "part": st.none() | part_data,
        "parts": st.lists(part_data, max_size=3),
        "notes": st.dictionaries(texts, json_values, max_size=4),
    },
)
states = st.fixed_dictionaries(
    {"text": texts},
    optional={
        "count": st.integers(),
        "part": st.none() | part_data,
        "parts": st.lists(part_data, max_size=2),
        "notes": st.dictionaries(texts, json_values, max_size=3),
    },
)


@settings(max_examples=300, deadline=None)
@given(states, updates)
def test_dumping_the_updated_fields_over_a_settled_state_is_the_whole_dump(state, update):
    before = _settled(
        Plain, {k: v.model_dump() if isinstance(v, BaseModel) else v for k, v in state.items()}
    )
    partial, whole = _both(_graph(Plain), before, update)
    assert partial == whole


def test_graph_states_dump_their_updated_fields_only():
    from inboxflow.graphs.pipeline.state import PipelineState

    assert _fields_stand_alone(Plain) and _fields_stand_alone(PipelineState)


def test_a_field_that_follows_another_is_dumped_whole():
    graph = _graph(Derived)
    before = _settled(Derived, {"count": 1})
    partial, whole = _both(graph, before, {"count": 2})
    assert partial == whole and json.loads(partial) == {"count": 2, "total": 20}
    assert not _fields_stand_alone(Derived)


def test_computed_fields_and_field_validators_are_dumped_whole():
    partial, whole = _both(_graph(Computed), _settled(Computed, {"count": 1}), {"count": 3})
    assert partial == whole and json.loads(partial)["double"] == 6
    partial, whole = _both(_graph(Checked), _settled(Checked, {"high": 1}), {"low": 5})
    assert partial == whole and json.loads(partial) == {"low": 5, "high": 5}
    assert not _fields_stand_alone(Computed) and not _fields_stand_alone(Checked)
