"""A person at Google's consent screen (the OAuth double's), driven over HTTP like a browser.

``ConsentBrowser`` is registered with ``webbrowser`` so that
``InstalledAppFlow.run_local_server`` opens it: it loads the consent page,
fills the form (the account, the scopes left ticked, Allow or Deny) and
follows the redirect to the flow's loopback server, in a thread, as a browser
would. ``answer`` does the same for a URL and returns the address the browser
was sent to (the no-browser flow's paste).
"""

from __future__ import annotations

import re
import threading
import webbrowser
from collections.abc import Sequence
from dataclasses import dataclass, field
from html import unescape
from urllib.parse import urljoin

import requests


@dataclass
class ConsentBrowser:
    """What the person does at the consent screen.

    Attributes:
        account: who signs in.
        untick: scopes the person unticks (granular consent).
        allow: Allow (True) or Cancel (False).
        opened: the URLs opened.
        errors: what went wrong in the browser thread.
    """

    account: str
    untick: Sequence[str] = ()
    allow: bool = True
    opened: list[str] = field(default_factory=list)
    errors: list[BaseException] = field(default_factory=list)

    def register(self, name: str = "inboxflow-consent-test") -> str:
        """Make ``webbrowser.get(name)`` this browser; returns the name."""
        webbrowser.register(name, None, self)  # type: ignore[arg-type]
        return name

    def open(self, url: str, new: int = 0, autoraise: bool = True) -> bool:
        """What ``webbrowser`` calls: consent in a thread (the flow serves the redirect after)."""
        self.opened.append(url)

        def run() -> None:
            try:
                self.answer(url, follow=True)
            except BaseException as exc:
                self.errors.append(exc)

        threading.Thread(target=run, daemon=True).start()
        return True

    def answer(self, url: str, follow: bool = False) -> str:
        """Consent at ``url``; the redirect's address (followed to the loopback when ``follow``)."""
        page = requests.get(url, timeout=10)
        page.raise_for_status()
        action = re.search(r'<form method="post" action="([^"]+)"', page.text)
        request_id = re.search(r'name="request" value="([^"]+)"', page.text)
        assert action and request_id, page.text
        scopes = [unescape(s) for s in re.findall(r'name="scope" value="([^"]+)"', page.text)]
        data: list[tuple[str, str]] = [
            ("request", request_id.group(1)),
            ("account", self.account),
            ("decision", "allow" if self.allow else "deny"),
            *(("scope", s) for s in scopes if s not in self.untick),
        ]
        answer = requests.post(
            urljoin(url, action.group(1)), data=data, allow_redirects=False, timeout=10
        )
        assert answer.status_code == 302, answer.text
        location = answer.headers["Location"]
        if follow:
            requests.get(location, timeout=10)
        return location
