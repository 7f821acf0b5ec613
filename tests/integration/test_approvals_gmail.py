"""Reviewer notifications through Gmail: the real client against the Gmail double."""

from __future__ import annotations

import email
from email import policy
from pathlib import Path

from inboxflow.adapters.google_workspace import GoogleWorkspace
from inboxflow.adapters.notifiers import GmailNotifier
from inboxflow.dev.doubles.google_api import GoogleApiDouble
from inboxflow.mail import TRACE_HEADER
from inboxflow.mail_stamps import trace_key_of
from tests.harness.approval import LINK, REVIEWERS, Harness

MAILBOX = "maya.chen@brightlane.io"


def test_reviewers_are_emailed_once_through_gmail(tmp_path: Path) -> None:
    h = Harness(tmp_path)
    with GoogleApiDouble(clock=h.clock) as double:
        double.seed_from_workspace_json(mailbox=MAILBOX, now=h.clock.now())
        # As deployed without INBOXFLOW_MAILBOX: the notification goes out from the
        # mailbox of the email under review, not from the workspace's default.
        workspace = GoogleWorkspace(
            "unset-mailbox@invalid", h.store, api_url=double.url, sleep=lambda s: None
        )
        h.service.notifier = GmailNotifier(workspace)
        trace_id = h.start()
        approval = h.approval_of(trace_id)
        h.service.after_pause(approval)  # a redelivery: nothing is sent twice

        sent = [
            m
            for m in double.messages(MAILBOX, label="SENT")
            # the header carries a random stamp; the store says which trace drew it
            if (trace_key_of(h.store, m["headers"].get(TRACE_HEADER, "")) or "").startswith(
                f"{trace_id}:"
            )
        ]
        assert sorted(m["headers"]["To"] for m in sent) == sorted(REVIEWERS)
        assert {m["headers"]["From"] for m in sent} == {MAILBOX}
        parsed = email.message_from_bytes(sent[0]["raw"], policy=policy.default)
        text = parsed.get_body(("plain",)).get_content()
        html = parsed.get_body(("html",)).get_content()
        (match,) = {m.group(0) for m in LINK.finditer(text)}
        assert match in html.replace("&amp;", "&")
        # The link works: it opens the review page.
        response = h.client.get(match.split("approvals.test", 1)[1])
        assert response.status_code == 200
