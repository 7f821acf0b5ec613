"""``Ports``: one typed field per port, ``Lazy`` parts built on first read, once, then the
real thing; a node reads only the ports it declares."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from pydantic import BaseModel

from inboxflow.adapters.embedded_crm import EmbeddedCRM
from inboxflow.adapters.store_workspace import StoreWorkspace
from inboxflow.engine.context import NodeContext
from inboxflow.engine.graph import Graph, Node
from inboxflow.engine.step import END, Step
from inboxflow.graphs import graph_registry
from inboxflow.graphs.planner.quoting import QUOTING
from inboxflow.graphs.support.crm import CUSTOMERS
from inboxflow.lazy import Lazy
from inboxflow.ports.notifier import Notification
from inboxflow.ports.wired import PORT_NAMES, Service, UndeclaredPort
from inboxflow.services import build_ports, build_runtime, declared_services
from inboxflow.settings import Settings
from tests.harness.runtimes import runtime_for


def _settings(tmp_path: Path) -> Settings:
    return Settings.from_env({"INBOXFLOW_HOME": str(tmp_path)})


def test_lazy_builds_once_on_first_get() -> None:
    built: list[int] = []
    part = Lazy(lambda: built.append(1) or len(built))
    assert not part.built and built == []
    assert part.get() == 1 and part.get() == 1
    assert part.built and built == [1]


def test_the_workspace_vectors_and_crm_are_built_on_first_access_once(tmp_path: Path) -> None:
    ports = build_ports(_settings(tmp_path))
    assert not ports.built("workspace") and not ports.built("vectors") and not ports.built("crm")
    workspace = ports.workspace
    assert isinstance(workspace, StoreWorkspace)
    assert ports.built("workspace") and ports.workspace is workspace
    crm = ports.service(CUSTOMERS)
    assert isinstance(crm, EmbeddedCRM) and ports.service(CUSTOMERS) is crm
    assert ports.vectors is ports.vectors


def test_a_part_given_is_used_as_given(tmp_path: Path) -> None:
    mine = EmbeddedCRM()
    ports = build_ports(_settings(tmp_path), crm=mine)
    assert ports.service(CUSTOMERS) is mine


def test_replace_gives_a_copy_with_the_part_swapped_and_the_rest_shared(tmp_path: Path) -> None:
    ports = build_ports(_settings(tmp_path))
    crm = EmbeddedCRM()
    other = ports.replace(crm=crm)

    assert other.service(CUSTOMERS) is crm and ports.service(CUSTOMERS) is not crm
    assert other.store is ports.store
    with pytest.raises(AttributeError, match="no such port: nonsense"):
        ports.replace(nonsense=1)


def test_a_name_that_is_not_a_port_is_refused(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match="not ports: \\['outbox'\\]"):
        build_ports(_settings(tmp_path), outbox=object())


def test_a_node_view_reads_only_what_the_node_declares(tmp_path: Path) -> None:
    ports = build_ports(_settings(tmp_path))
    view = ports.only(("crm",), "support.intake")
    assert view.service(CUSTOMERS) is ports.service(CUSTOMERS)
    assert view.store is ports.store and view.clock is ports.clock
    with pytest.raises(UndeclaredPort, match=r"node support\.intake reads the workspace port"):
        _ = view.workspace
    assert not ports.built("workspace")  # refused before anything was built


def test_the_notifier_is_built_on_first_send(tmp_path: Path) -> None:
    runtime = build_runtime(_settings(tmp_path))
    assert not runtime.ports.built("notifier")
    notifier = runtime.ports.approvals.notifier
    assert runtime.ports.built("notifier") and notifier is runtime.ports.notifier
    receipt = notifier.send(
        Notification("ana@example.test", "S", "text", "<p>h</p>", "trace-1:1:n", None)
    )
    assert notifier.find("trace-1:1:n")["id"] == receipt["id"]
    assert [m["to"] for m in notifier.messages()] == ["ana@example.test"]  # type: ignore[attr-defined]
    runtime.store.close()


def test_every_port_is_typed_and_named() -> None:
    assert {
        "store",
        "bus",
        "clock",
        "llm",
        "embedder",
        "vectors",
        "workspace",
        "tasks",
    } <= PORT_NAMES
    assert {
        "notifier",
        "approvals",
        "config",
    } <= PORT_NAMES
    # The graphs' business services are declared by their graphs, not ports (issue 40).
    assert {"crm", "drugs", "quoting", "web_search"} <= set(declared_services(graph_registry()))
    assert not {"crm", "drugs", "quoting", "web_search"} & PORT_NAMES


class _Empty(BaseModel):
    crm_found: bool = False


def _reads_the_crm(state: _Empty, ctx: NodeContext) -> Step:
    return Step(
        update={"crm_found": ctx.ports.service(CUSTOMERS).find_by_email("x@y.test") is None},
        goto=END,
    )


def _graph(ports: tuple[str, ...]) -> Graph:
    return Graph.build(
        "crm_reader",
        "read",
        _Empty,
        [Node("read", _reads_the_crm, routes=(END,), services=ports)],
        services=(CUSTOMERS,),
    )


def test_a_node_reading_a_port_it_does_not_declare_fails_its_step(tmp_path: Path) -> None:
    runtime = runtime_for(tmp_path, graphs={"crm_reader": _graph(())})
    trace_id = runtime.start("crm_reader", {})
    runtime.bus.drain()  # type: ignore[attr-defined]
    checkpoint = runtime.store.get_trace(trace_id)
    assert checkpoint is not None and checkpoint.status == "needs_review"
    assert "node crm_reader.read reads the crm port but does not declare it" in str(
        checkpoint.error
    )


def test_a_node_declaring_the_port_reads_it(tmp_path: Path) -> None:
    runtime = runtime_for(tmp_path, graphs={"crm_reader": _graph(("crm",))})
    trace_id = runtime.start("crm_reader", {})
    runtime.bus.drain()  # type: ignore[attr-defined]
    checkpoint = runtime.store.get_trace(trace_id)
    assert checkpoint is not None and checkpoint.status == "done", checkpoint
    assert checkpoint.state["crm_found"] is True


def test_a_node_declaring_an_unknown_port_is_refused() -> None:
    with pytest.raises(ValueError, match=r"node read: unknown ports \['outbox'\]"):
        Node("read", _reads_the_crm, routes=(END,), ports=("outbox",))


LOCATOR = re.compile(r"""\bservices(\[["']|\.get\(["']|\.extras\b)|\bctx\.services\b""")
"""The string-keyed service locator ``Ports`` replaced: ``services["crm"]``, ``services.get(...)``."""


def test_no_code_reaches_a_port_by_a_string_key() -> None:
    root = Path(__file__).resolve().parents[2]
    found = [
        f"{path.relative_to(root)}:{number}: {line.strip()}"
        for folder in ("shared", "functions", "bench", "tests")
        for path in sorted((root / folder).rglob("*.py"))
        if path != Path(__file__).resolve() and "infra" not in path.parts  # Terraform services
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if LOCATOR.search(line)
    ]
    assert found == []


def test_a_node_reading_a_service_its_graph_does_not_declare_is_refused() -> None:
    node = Node("read", _reads_the_crm, routes=(END,), services=("crm",))
    with pytest.raises(ValueError, match=r"read reads services \['crm'\] that the graph does not"):
        Graph.build("crm_reader", "read", _Empty, [node])


def test_a_service_named_as_a_port_is_refused() -> None:
    store = Service[object]("store", object)
    with pytest.raises(ValueError, match=r"services named as ports or twice: \['store'\]"):
        Graph.build(
            "x", "read", _Empty, [Node("read", _reads_the_crm, routes=(END,))], services=(store,)
        )


def test_the_root_builds_the_services_the_served_graphs_declare_only(tmp_path: Path) -> None:
    graphs = {"crm_reader": _graph(("crm",))}
    ports = build_ports(_settings(tmp_path), graphs=graphs)
    assert isinstance(ports.service(CUSTOMERS), EmbeddedCRM)
    with pytest.raises(KeyError, match="no served graph declares the quoting service"):
        ports.service(QUOTING)
    with pytest.raises(TypeError, match=r"not ports: \['quoting'\]"):
        build_ports(_settings(tmp_path), graphs=graphs, quoting=object())


def test_a_declared_service_without_a_factory_must_be_given(tmp_path: Path) -> None:
    mine = Service[object]("mine", object)
    graph = Graph.build(
        "x", "read", _Empty, [Node("read", _reads_the_crm, routes=(END,))], services=(mine,)
    )
    with pytest.raises(ValueError, match=r"no factory builds the declared services \['mine'\]"):
        build_ports(_settings(tmp_path), graphs={"x": graph})
    given = object()
    assert build_ports(_settings(tmp_path), graphs={"x": graph}, mine=given).service(mine) is given


def test_a_service_swapped_in_is_what_nodes_read(tmp_path: Path) -> None:
    ports = build_ports(_settings(tmp_path))
    mine = EmbeddedCRM()
    ports.set_service(CUSTOMERS, mine)
    assert ports.only(("crm",), "support.intake").service(CUSTOMERS) is mine


def test_a_node_function_builds_only_its_own_graphs_services(tmp_path: Path) -> None:
    settings = Settings.from_env(
        {"INBOXFLOW_HOME": str(tmp_path), "INBOXFLOW_NODE": "planner.tools"}
    )
    ports = build_ports(settings)
    assert not ports.built("quoting")
    with pytest.raises(KeyError, match="no served graph declares the crm service"):
        ports.service(CUSTOMERS)
