"""choose_llm / choose_embedder: Gemini when configured, else offline; announced once."""

from __future__ import annotations

import logging
import os
import subprocess
import sys

import pytest

from inboxflow import llm_selection
from inboxflow.adapters.gemini_embedder import GeminiEmbedder
from inboxflow.adapters.gemini_llm import GeminiModel
from inboxflow.adapters.offline_llm import OfflineModel
from inboxflow.llm_selection import choose_embedder, choose_llm, gemini_settings


@pytest.fixture(autouse=True)
def fresh_announcements():
    llm_selection._reset_announcements()
    yield
    llm_selection._reset_announcements()


def announcements(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "inboxflow.llm"]


def test_offline_without_credentials_announced_once(caplog):
    caplog.set_level(logging.INFO, logger="inboxflow.llm")

    first, second = choose_llm({}), choose_llm({})

    assert isinstance(first, OfflineModel) and isinstance(second, OfflineModel)
    assert announcements(caplog) == [
        "LLM: offline deterministic model (no GEMINI_API_KEY / Vertex settings)"
    ]
    assert choose_embedder({}) is None


def test_offline_in_a_deployed_function_is_a_warning(caplog):
    caplog.set_level(logging.INFO, logger="inboxflow.llm")
    choose_llm({"K_SERVICE": "pipeline-classify"})
    (record,) = [r for r in caplog.records if r.name == "inboxflow.llm"]
    assert record.levelno == logging.WARNING


def test_api_key_selects_gemini_and_announces_it_once(caplog):
    caplog.set_level(logging.INFO, logger="inboxflow.llm")
    env = {"GEMINI_API_KEY": "secret-key-123", "INBOXFLOW_GEMINI_BASE_URL": "http://127.0.0.1:9"}

    llm = choose_llm(env)
    choose_llm(env)

    assert isinstance(llm, GeminiModel)
    assert llm.settings.mode == "api_key" and llm.name == "gemini-3.5-flash-lite"
    messages = announcements(caplog)
    assert messages == [
        "LLM: Gemini gemini-3.5-flash-lite on Gemini API (API key) via http://127.0.0.1:9; "
        "chat gemini-3.8-flash"
    ]
    assert "secret-key-123" not in caplog.text
    embedder = choose_embedder(env)
    assert isinstance(embedder, GeminiEmbedder) and embedder.name == "gemini-embedding-001"


def test_vertex_switches_select_vertex_client():
    llm = choose_llm(
        {
            "GOOGLE_GENAI_USE_VERTEXAI": "true",
            "GOOGLE_CLOUD_PROJECT": "inboxflow-prod",
            "GOOGLE_CLOUD_LOCATION": "europe-west1",
            "INBOXFLOW_GEMINI_BASE_URL": "http://127.0.0.1:9",
        }
    )
    assert isinstance(llm, GeminiModel)
    client = llm.clients.for_role(llm.settings.role("task"))._api_client
    assert client.vertexai is True
    assert (client.project, client.location) == ("inboxflow-prod", "europe-west1")


def test_inboxflow_llm_forces_a_choice():
    assert isinstance(choose_llm({"INBOXFLOW_LLM": "offline", "GEMINI_API_KEY": "k"}), OfflineModel)
    with pytest.raises(ValueError, match="INBOXFLOW_LLM=gemini but neither"):
        gemini_settings({"INBOXFLOW_LLM": "gemini"})
    with pytest.raises(ValueError, match="expected offline or gemini"):
        gemini_settings({"INBOXFLOW_LLM": "gpt"})


def test_choose_llm_reads_os_environ_by_default(monkeypatch):
    monkeypatch.setenv("GOOGLE_API_KEY", "k")
    assert isinstance(choose_llm(os.environ), GeminiModel)


def test_selecting_does_not_import_google_genai_until_gemini_is_built():
    script = (
        "import sys\n"
        "from inboxflow import llm_selection, services\n"
        "from inboxflow.graphs.pipeline import graph\n"
        "assert 'google.genai' not in sys.modules, 'imported at module import'\n"
        "llm_selection.choose_llm({})\n"
        "assert 'google.genai' not in sys.modules, 'imported for the offline model'\n"
        "llm_selection.choose_llm({'GEMINI_API_KEY': 'k'})\n"
        "assert 'google.genai' in sys.modules\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
