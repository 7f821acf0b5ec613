"""What a pipeline node's code imports: classify's first event loads none of the tools.

Cold start (issue 42): the classify node imports the pipeline's tasks, and the
tasks need only the ``Weekday`` names (``weekdays``); importing ``tools`` would
build the tools' parameter models on a node that never calls a tool.
"""

from __future__ import annotations

import subprocess
import sys

import pytest


def _imported_after(module: str, wanted: str) -> list[str]:
    script = (
        "import sys, importlib\n"
        f"importlib.import_module({module!r})\n"
        f"print({wanted!r} in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    return done.stdout.split()


def test_the_classify_node_imports_no_pipeline_tools() -> None:
    assert _imported_after(
        "inboxflow.graphs.pipeline.nodes.classify", "inboxflow.graphs.pipeline.tools"
    ) == ["False"]


def test_the_tools_and_the_tasks_share_one_weekday_type() -> None:
    from inboxflow.graphs.pipeline import tasks, tools, weekdays

    assert tools.Weekday is tasks.Weekday is weekdays.Weekday
    assert tools.WEEKDAYS == weekdays.WEEKDAYS


def test_no_task_output_model_is_built_at_import() -> None:
    # Each node builds the answer model of the task it runs (classify: IntentAnswer only).
    from tests.unit.test_deferred_models import _BUILT_AT_IMPORT

    done = subprocess.run(
        [sys.executable, "-c", _BUILT_AT_IMPORT, "inboxflow.graphs.pipeline.tasks"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout.split() == []


def test_deferred_task_answers_still_refuse_bad_input() -> None:
    from pydantic import ValidationError

    from inboxflow.graphs.pipeline.tasks import IntentAnswer, ReplyDraft, ToolDecision

    with pytest.raises(ValidationError):
        IntentAnswer.model_validate({"category": "inquiry", "confidence": 1.5})
    with pytest.raises(ValidationError):
        ToolDecision.model_validate({"tools": [{"name": "delete_everything"}]})
    with pytest.raises(ValidationError):
        ReplyDraft.model_validate({})
    assert IntentAnswer(category="spam", confidence=0.9).needs_reply
