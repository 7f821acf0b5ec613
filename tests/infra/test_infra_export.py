"""inboxflow.dev.infra: the graphs -> graph.auto.tfvars.json, and the source archive."""

from __future__ import annotations

import ast
import hashlib
import importlib
import importlib.util
import json
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from inboxflow.dev.infra import archive
from inboxflow.dev.infra import export as infra_export
from inboxflow.dev.infra.archive import source_archive_members
from inboxflow.naming import dead_letter_topic_name, function_name, topic_name
from tests.infra.deployed_imports import entry_points, reachable

REPO_ROOT = Path(__file__).resolve().parents[2]
COMMITTED = REPO_ROOT / "infra" / "graph.auto.tfvars.json"
PIPELINE_NODES = [
    "classify",
    "retrieve",
    "decide",
    "execute_tools",
    "generate",
    "review",
    "dispatch",
]


@dataclass
class FakeNode:
    name: str
    memory_mb: int = 512
    timeout_s: int = 60
    max_instances: int = 20
    min_instances: int = 0
    pauses: bool = False


@dataclass
class RoutedNode(FakeNode):
    routes: tuple[str, ...] = ()


@dataclass
class FakeGraph:
    name: str
    entry: str
    nodes: dict[str, FakeNode] = field(default_factory=dict)


def _pipeline() -> FakeGraph:
    nodes: dict[str, FakeNode] = {name: FakeNode(name) for name in PIPELINE_NODES}
    nodes["generate"] = FakeNode(
        "generate", memory_mb=1024, timeout_s=120, max_instances=5, min_instances=1
    )
    return FakeGraph("pipeline", "classify", nodes)


def test_every_node_gets_a_function_topic_dead_letter_and_identity() -> None:
    exported = infra_export.export_graph_tfvars([_pipeline()])
    nodes = exported["node_functions"]
    assert list(nodes) == sorted(f"pipeline.{name}" for name in PIPELINE_NODES)
    tools = nodes["pipeline.execute_tools"]
    assert tools["topic"] == topic_name("pipeline", "execute_tools")
    assert tools["dead_letter_topic"] == dead_letter_topic_name("pipeline", "execute_tools")
    assert (
        tools["function_name"]
        == function_name("pipeline", "execute_tools")
        == "inboxflow-pipeline-execute-tools"
    )
    assert tools["entry_point"] == "run_node"
    assert tools["service_account_id"] == "ibx-pipeline-execute-tools"
    assert nodes["pipeline.classify"]["is_entry"] and not tools["is_entry"]
    generate = nodes["pipeline.generate"]
    assert (
        generate["memory_mb"],
        generate["timeout_s"],
        generate["max_instances"],
        generate["min_instances"],
    ) == (
        1024,
        120,
        5,
        1,
    )


def test_service_functions_and_shared_settings() -> None:
    exported = infra_export.export_graph_tfvars([_pipeline()])
    services = exported["service_functions"]
    assert {name: entry["entry_point"] for name, entry in services.items()} == {
        "approve": "approve",
        "ingest": "ingest",
        "renew_watch": "renew_watch",
    }
    assert services["approve"]["public"] and services["approve"]["trigger"] == "http"
    assert services["ingest"]["topic"] == exported["gmail_topic"] == "inboxflow-gmail"
    assert not services["renew_watch"]["public"]
    assert exported["tasks_queue"] == "inboxflow-approvals"
    assert "traces" in exported["firestore_ttl_collections"]
    assert exported["firestore_vector_indexes"] == [
        {
            "collection": "kb_chunks",
            "prefix_fields": ["embedder"],
            "field_path": "embedding",
            "dimension": 768,
        },
        {
            "collection": "kb_chunks",
            "prefix_fields": ["embedder", "category"],
            "field_path": "embedding",
            "dimension": 768,
        },
        {
            "collection": "email_vectors",
            "prefix_fields": ["embedder"],
            "field_path": "embedding",
            "dimension": 768,
        },
    ]
    assert {"approvals", "approval_tokens", "effects", "traces"} <= set(
        exported["firestore_ttl_collections"]
    )
    json.dumps(exported)  # JSON-ready


def test_publish_grants_follow_declared_routes() -> None:
    graph = FakeGraph(
        "triage",
        "classify",
        {
            "classify": RoutedNode("classify", routes=("draft", "__end__")),
            "draft": RoutedNode("draft", routes=("__end__",)),
        },
    )
    nodes = infra_export.export_graph_tfvars([graph])["node_functions"]
    assert nodes["triage.classify"]["publishes_to"] == [topic_name("triage", "draft")]
    assert nodes["triage.draft"]["publishes_to"] == []
    # Without declared routes a node may publish to every node of its graph.
    unrouted = infra_export.export_graph_tfvars([_pipeline()])["node_functions"]["pipeline.review"]
    assert len(unrouted["publishes_to"]) == len(PIPELINE_NODES)


def test_pausing_nodes_resume_targets_and_entry_topics() -> None:
    review = RoutedNode("review", routes=("dispatch", "__end__"), pauses=True)
    graph = FakeGraph(
        "pipeline",
        "classify",
        {
            "classify": RoutedNode("classify", routes=("review",)),
            "review": review,
            "dispatch": RoutedNode("dispatch", routes=("__end__",)),
        },
    )
    other = FakeGraph("triage", "sort", {"sort": RoutedNode("sort", routes=("__end__",))})
    exported = infra_export.export_graph_tfvars([graph, other])
    nodes = exported["node_functions"]
    assert [key for key, node in nodes.items() if node["pauses"]] == ["pipeline.review"]
    assert exported["resume_topics"] == [topic_name("pipeline", "dispatch")]
    assert exported["entry_topics"] == [
        topic_name("pipeline", "classify"),
        topic_name("triage", "sort"),
    ]
    assert exported["shared_dead_letter_topic"] == "inboxflow-dead-letter"


@dataclass
class DeclaringNode(FakeNode):
    uses_llm: bool = False
    uses_gmail: bool = False


def test_llm_and_gmail_grants_follow_the_declarations_only() -> None:
    assert infra_export.uses_llm(DeclaringNode("a", uses_llm=True))
    assert not infra_export.uses_gmail(DeclaringNode("a", uses_llm=True))
    assert infra_export.uses_gmail(DeclaringNode("m", uses_gmail=True))
    assert not infra_export.uses_llm(DeclaringNode("m", uses_gmail=True))
    # Nothing declared: nothing granted (no guessing from the node's source).
    assert not infra_export.uses_llm(FakeNode("x")) and not infra_export.uses_gmail(FakeNode("x"))
    # A pausing node mails its reviewers.
    assert infra_export.uses_gmail(DeclaringNode("r", pauses=True))


def test_the_pipeline_declares_what_each_node_reaches() -> None:
    from inboxflow.graphs.pipeline.graph import PIPELINE

    llm = {name for name, node in PIPELINE.nodes.items() if infra_export.uses_llm(node)}
    gmail = {name for name, node in PIPELINE.nodes.items() if infra_export.uses_gmail(node)}
    # dispatch: a reviewer's edit or comment teaches the drafts (graphs/reply_learning.py)
    assert llm == {"classify", "retrieve", "decide", "generate", "dispatch"}
    assert gmail == {"retrieve", "execute_tools", "review", "dispatch"}


def test_composite_index_for_the_queries_the_code_runs() -> None:
    pending = infra_export.composite_index_for(
        "approvals",
        [("reviewers", "array_contains", "a@example.com"), ("status", "==", "pending")],
        order_by="deadline",
    )
    assert pending is not None and pending["fields"][0]["array_config"] == "CONTAINS"
    # approvals.service.pending() without a reviewer: every pending approval by deadline.
    every = infra_export.composite_index_for(
        "approvals", [("status", "==", "pending")], order_by="deadline"
    )
    assert every is not None and [f["field_path"] for f in every["fields"]] == [
        "status",
        "deadline",
    ]
    by_status = infra_export.composite_index_for(
        "traces", [("status", "==", "done")], order_by="updated_at", descending=True
    )
    assert by_status is not None and by_status["collection"] == "traces"
    # Single-field indexes serve these: no composite needed.
    assert infra_export.composite_index_for("traces", order_by="updated_at") is None
    assert infra_export.composite_index_for("mail_claims", [("mailbox", "==", "a")]) is None
    assert (
        infra_export.composite_index_for("approvals", [("reviewers", "array_contains", "a")])
        is None
    )
    # A shape nobody declared is refused with the fix in the message.
    with pytest.raises(LookupError, match=r"inboxflow\.schema"):
        infra_export.composite_index_for(
            "traces", [("status", "==", "done")], order_by="updated_at", descending=False
        )
    with pytest.raises(LookupError):
        infra_export.composite_index_for(
            "approvals", [("reviewers", "array_contains", "a")], order_by="deadline"
        )


def test_names_shared_with_the_code_agree() -> None:
    from inboxflow.ports.embeddings import EMBEDDING_DIMENSIONS

    assert {index["dimension"] for index in infra_export.VECTOR_INDEXES} == {EMBEDDING_DIMENSIONS}
    pubsub_bus = pytest.importorskip("inboxflow.adapters.pubsub_bus")
    assert infra_export.SHARED_DEAD_LETTER_TOPIC == pubsub_bus.SHARED_DEAD_LETTER_TOPIC
    assert pubsub_bus.dead_letter_topic_for(None) == infra_export.SHARED_DEAD_LETTER_TOPIC


def test_long_names_get_short_unique_service_account_ids() -> None:
    first = infra_export.service_account_id("support_triage-summarize_customer_thread")
    second = infra_export.service_account_id("support_triage-summarize_customer_threads")
    assert first != second
    for account in (first, second):
        assert 6 <= len(account) <= 30 and account.startswith("ibx-support-triage")


@pytest.mark.parametrize(
    "node",
    [
        FakeNode("classify", memory_mb=64),
        FakeNode("classify", timeout_s=4000),
        FakeNode("classify", min_instances=30),
    ],
)
def test_invalid_sizing_is_rejected(node: FakeNode) -> None:
    with pytest.raises(ValueError):
        infra_export.export_graph_tfvars([FakeGraph("pipeline", "classify", {"classify": node})])


def test_function_names_must_fit_cloud_functions() -> None:
    long_name = "x" * 60
    with pytest.raises(ValueError, match="Cloud Functions"):
        infra_export.export_graph_tfvars(
            [FakeGraph("pipeline", long_name, {long_name: FakeNode(long_name)})]
        )


def test_write_is_stable(tmp_path: Path) -> None:
    out = infra_export.write_graph_tfvars(tmp_path / "graph.auto.tfvars.json", graphs=[_pipeline()])
    first = out.read_bytes()
    infra_export.write_graph_tfvars(out, graphs=[_pipeline()])
    assert out.read_bytes() == first
    assert first.endswith(b"\n")


def test_committed_tfvars_match_the_code() -> None:
    """Fails when infra/graph.auto.tfvars.json differs from what the graphs generate."""
    importlib.import_module("inboxflow.graphs")
    expected = infra_export.render_graph_tfvars()
    committed = COMMITTED.read_text(encoding="utf-8")
    assert committed == expected, (
        "infra/graph.auto.tfvars.json is out of date with inboxflow.graphs: "
        "run `inboxflow infra export` "
        "(or `python -m inboxflow.dev.infra.export`) and commit the result"
    )


def _fake_source_tree(root: Path) -> None:
    (root / "functions").mkdir(parents=True)
    (root / "functions" / "main.py").write_text("from inboxflow.entry import run_node\n")
    (root / "requirements.txt").write_text("functions-framework>=3.8\n")
    (root / "inboxflow.yaml").write_text("routing:\n  rules: []\n")
    package = root / "shared" / "inboxflow"
    (package / "pipeline").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "pipeline" / "graph.py").write_text("PIPELINE = None\n")
    (package / "dev" / "infra").mkdir(parents=True)
    (package / "dev" / "__init__.py").write_text("")
    (package / "dev" / "infra" / "archive.py").write_text("# development tooling\n")
    (package / "__pycache__").mkdir()
    (package / "__pycache__" / "x.cpython-311.pyc").write_bytes(b"\0")


def test_source_archive_layout_and_reproducibility(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    _fake_source_tree(root)
    first = archive.build_source_archive(tmp_path / "a.zip", root=root)
    # Touch every file: timestamps must not change the archive.
    for path in root.rglob("*"):
        if path.is_file():
            path.write_bytes(path.read_bytes())
    second = archive.build_source_archive(tmp_path / "b.zip", root=root)
    assert (
        hashlib.sha256(first.read_bytes()).digest() == hashlib.sha256(second.read_bytes()).digest()
    )
    with zipfile.ZipFile(first) as built:
        assert built.namelist() == [
            "inboxflow.yaml",
            "inboxflow.yaml.json",  # its compiled form (config.compile_config)
            "inboxflow/__init__.py",
            "inboxflow/pipeline/graph.py",
            "main.py",
            "requirements.txt",
        ]
    (root / "shared" / "inboxflow" / "__init__.py").write_text("# changed\n")
    third = archive.build_source_archive(tmp_path / "c.zip", root=root)
    assert third.read_bytes() != first.read_bytes()


def test_source_archive_requires_the_entry_points(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    _fake_source_tree(root)
    (root / "functions" / "main.py").unlink()
    with pytest.raises(FileNotFoundError, match=r"main\.py"):
        archive.build_source_archive(tmp_path / "a.zip", root=root)


def _imported(tree: ast.Module, package: str) -> set[str]:
    """The absolute names of the modules a module of ``package`` imports."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")
            if node.level:
                base = base[: len(base) - node.level + 1]
                module = ".".join([*base, node.module] if node.module else base)
            else:
                module = node.module or ""
            names.add(module)
            names.update(f"{module}.{alias.name}" for alias in node.names)
    return names


def test_nothing_deployed_imports_the_development_tooling() -> None:
    """The archive leaves ``inboxflow/dev/`` out, so no deployed module may import it."""
    members = source_archive_members()
    assert not [name for name, _ in members if name.startswith("inboxflow/dev/")]
    offenders = []
    for name, path in members:
        if not name.endswith(".py"):
            continue
        package = ".".join(name.split("/")[:-1])  # "inboxflow.approvals"; "" for main.py
        imported = _imported(ast.parse(path.read_text(encoding="utf-8")), package)
        if any(m == "inboxflow.dev" or m.startswith("inboxflow.dev.") for m in imported):
            offenders.append(name)
    assert offenders == []


def _archived_modules() -> set[str]:
    """The dotted names of the ``inboxflow`` modules in the source archive."""
    names = set()
    for name, _ in source_archive_members():
        if name.startswith("inboxflow/") and name.endswith(".py"):
            parts = name.removesuffix(".py").split("/")
            names.add(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names


def test_only_what_the_entry_points_load_is_deployed() -> None:
    """No module under ``inboxflow/dev/`` is archived, and every archived module is loaded,
    directly or through others, by ``functions/main.py`` or ``inboxflow/entry/`` (imports at
    module level, in functions, under ``TYPE_CHECKING``, and the ``module:attribute`` strings
    graphs and tasks import at run time). A module only the tooling or the tests use belongs
    under ``inboxflow/dev/``."""
    archived = _archived_modules()
    assert "inboxflow.entry" in archived
    assert not {m for m in archived if m == "inboxflow.dev" or m.startswith("inboxflow.dev.")}
    deployed = reachable(entry_points())
    assert "inboxflow.graphs.pipeline.nodes.classify" in deployed  # by a lazy(f"...") string
    assert "inboxflow.graphs.pipeline.offline" in deployed  # by an offline_heuristic string
    assert sorted(archived - deployed) == []
