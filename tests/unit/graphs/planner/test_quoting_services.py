"""Which quoting service the composition root wires: the HTTP client only when configured."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from inboxflow.adapters.embedded_quoting import EmbeddedQuoting
from inboxflow.adapters.http_quoting import HttpQuoting
from inboxflow.clock import FakeClock
from inboxflow.dev.doubles.quoting_api import QuotingApiDouble
from inboxflow.graphs.planner.quoting import QUOTING
from inboxflow.services import build_ports
from tests.harness.runtimes import embedded_settings
from tests.unit.adapters.test_embedded_quoting import applicant


def test_without_a_quoting_url_the_embedded_service_is_wired(tmp_path: Path) -> None:
    ports = build_ports(embedded_settings(tmp_path))
    assert ports.settings.quoting_url is None
    assert isinstance(ports.service(QUOTING), EmbeddedQuoting)


def test_with_a_quoting_url_the_http_client_is_wired_and_reaches_the_api(tmp_path: Path) -> None:
    with QuotingApiDouble(clock=FakeClock(), api_key="k-secret") as double:
        environ = {"INBOXFLOW_QUOTING_URL": double.url, "INBOXFLOW_QUOTING_API_KEY": "k-secret"}
        ports = build_ports(embedded_settings(tmp_path, environ=environ))
        assert not ports.built("quoting")
        quoting = ports.service(QUOTING)
        assert isinstance(quoting, HttpQuoting)
        session = quoting.initiate(applicant(), key="k1")
        assert quoting.get(session.quote_id).applicant == applicant()
    assert [call.status for call in double.calls] == [201, 200]  # the key was accepted


def test_the_http_client_is_imported_only_when_first_used(tmp_path: Path) -> None:
    script = (
        "import sys\n"
        "from inboxflow.settings import Settings\n"
        "from inboxflow.services import build_ports\n"
        "from inboxflow.graphs.planner.quoting import QUOTING\n"
        "settings = Settings.from_env({'INBOXFLOW_QUOTING_URL': 'http://127.0.0.1:9',"
        " 'INBOXFLOW_STORE': 'sqlite', 'INBOXFLOW_HOME': sys.argv[1]})\n"
        "ports = build_ports(settings)\n"
        "print('inboxflow.adapters.http_quoting' in sys.modules)\n"
        "ports.service(QUOTING)\n"
        "print('inboxflow.adapters.http_quoting' in sys.modules)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["False", "True"]
