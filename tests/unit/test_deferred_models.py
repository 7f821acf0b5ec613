"""Cold start (issue 42): the pydantic models a node function imports at start are built on
first use (``defer_build``), not at import: a node builds the validators of the models it
validates (its state, the config, the checkpoint) and no others; deferred, they validate
exactly as before. A node's start imports no port it does not use."""

from __future__ import annotations

import subprocess
import sys

import pytest
from pydantic import ValidationError

from inboxflow.config import InboxflowConfig
from inboxflow.engine.waits import Approval
from inboxflow.graphs.planner.quoting import Applicant, Driver, Vehicle
from inboxflow.graphs.planner.state import PlannerState
from inboxflow.graphs.reply_learning import ResponseUpdate
from inboxflow.mail.model import Address, Email
from inboxflow.ports.checkpoint import Checkpoint

DEFERRED_MODULES = (
    "inboxflow.config",
    "inboxflow.mail.model",
    "inboxflow.ports.checkpoint",
    "inboxflow.graphs.agent.state",
    "inboxflow.graphs.assistant.state",
    "inboxflow.graphs.pipeline.state",
    "inboxflow.graphs.planner.state",
    "inboxflow.graphs.support.state",
    "inboxflow.engine.waits",  # the runtime imports it; a node's first event writes no approval
    "inboxflow.graphs.planner.quoting",  # the planner graph imports it for its QUOTING service
    "inboxflow.graphs.reply_learning",  # a node learns only from a reviewer's edit
)

_BUILT_AT_IMPORT = """
import importlib, sys
from pydantic import BaseModel
modules = sys.argv[1:]
for name in modules:
    importlib.import_module(name)
for name in modules:
    for value in vars(sys.modules[name]).values():
        if (
            isinstance(value, type) and issubclass(value, BaseModel)
            and value.__module__ == name and value.__pydantic_complete__
        ):
            print(f"{name}.{value.__qualname__}")
"""


def test_no_model_of_a_node_functions_start_modules_is_built_at_import() -> None:
    done = subprocess.run(
        [sys.executable, "-c", _BUILT_AT_IMPORT, *DEFERRED_MODULES],
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout.split() == []


def test_deferred_models_still_refuse_bad_input() -> None:
    with pytest.raises(ValidationError):
        Address.model_validate({"address": "no-at-sign"})
    with pytest.raises(ValidationError):
        Email.model_validate({"message_id": 1})
    with pytest.raises(ValidationError):
        Checkpoint.model_validate({"trace_id": "t"})
    with pytest.raises(ValidationError):
        PlannerState.model_validate({})
    with pytest.raises(ValidationError):
        InboxflowConfig.model_validate({"unknown_key": 1})


def test_deferred_approval_quoting_and_learning_models_still_refuse_bad_input() -> None:
    with pytest.raises(ValidationError):
        Approval.model_validate({"approval_id": "a", "trace_id": "t"})
    with pytest.raises(ValidationError):
        Applicant.model_validate(
            {
                "first_name": "A",
                "last_name": "B",
                "email": "a@b.c",
                "date_of_birth": "1990-01-01",
                "zip_code": "1234",
            }
        )
    with pytest.raises(ValidationError):
        Driver.model_validate({"first_name": "A", "license_state": "ca"})
    with pytest.raises(ValidationError):
        Vehicle.model_validate({"vin": "short", "year": 1900, "make": "M", "model": "X"})
    with pytest.raises(ValidationError):
        ResponseUpdate.model_validate({"profile": {"greeting": "Hi"}, "changed": True, "why": ""})
    applicant = Applicant.model_validate(
        {
            "first_name": "A",
            "last_name": "B",
            "email": "a@b.c",
            "date_of_birth": "1990-01-01",
            "zip_code": "12345",
        }
    )
    assert applicant.zip_code == "12345"
