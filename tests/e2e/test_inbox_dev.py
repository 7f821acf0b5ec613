"""`inboxflow inbox REVIEWER --dev`: a sign-in link to the emulated cloud's approval function
that signs the reviewer in there (its Firestore emulator holds the token)."""

from __future__ import annotations

import json
import os
import re
import signal
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from tests.e2e.test_cli import run_cli
from tests.e2e.test_dev_lifecycle import kill_leftovers, start_dev

pytestmark = [pytest.mark.emulator, pytest.mark.slow]

REVIEWER = "maya.chen@brightlane.io"
SIGN_IN = re.compile(r"^(https?://[^\s/]+)/inbox/sign-in\?token=([A-Za-z0-9_%-]+)$", re.M)


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: object, **kwargs: object) -> None:
        return None


def test_inbox_dev_signs_in_on_the_emulated_cloud(tmp_path: Path) -> None:
    home = tmp_path / "cloud"
    dev, tree = start_dev(home, tmp_path)
    try:
        approve_url = json.loads((home / "dev.json").read_text())["env"]["INBOXFLOW_APPROVAL_URL"]
        printed = run_cli("inbox", REVIEWER, "--dev", "--home", str(home), cwd=tmp_path)
        assert printed.returncode == 0, printed.stdout + printed.stderr
        found = SIGN_IN.search(printed.stdout)
        assert found is not None and found.group(1) == approve_url, printed.stdout
        with urllib.request.urlopen(found.group(0), timeout=30) as page:
            assert page.status == 200 and page.headers.get("Set-Cookie") is None
        opener = urllib.request.build_opener(_NoRedirect)
        form = urllib.parse.urlencode({"token": urllib.parse.unquote(found.group(2))}).encode()
        request = urllib.request.Request(
            f"{approve_url}/inbox/sign-in", data=form, headers={"Sec-Fetch-Site": "same-origin"}
        )
        with pytest.raises(urllib.error.HTTPError) as redirected:
            opener.open(request, timeout=30)
        assert redirected.value.code in (302, 303)
        cookie = redirected.value.headers["Set-Cookie"].split(";", 1)[0]
        inbox = urllib.request.Request(f"{approve_url}/inbox", headers={"Cookie": cookie})
        with urllib.request.urlopen(inbox, timeout=30) as page:
            assert page.status == 200 and REVIEWER in page.read().decode()

        shown = run_cli("digest", "--dev", "--home", str(home), cwd=tmp_path)
        assert shown.returncode == 0 and "no reviewer takes digests" in shown.stdout
    finally:
        os.kill(dev.pid, signal.SIGINT)
        try:
            dev.wait(timeout=60)
        finally:
            kill_leftovers(tree)
