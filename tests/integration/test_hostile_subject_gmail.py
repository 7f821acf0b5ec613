"""A subject carrying line and paragraph separators, a bidi override and zero-width
characters: the pause shows it under the edit rules, approving it from the review page
(the browser's POST of the fields as shown) works, and the Gmail adapter writes a draft
with a one-line subject (Python's email refuses U+2028 and U+0085 in a header)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from inboxflow.adapters.google_workspace import GoogleWorkspace
from inboxflow.dev.doubles.google_api import GoogleApiDouble
from inboxflow.mail import TRACE_HEADER
from inboxflow.mail.field_text import DIRECTION_CONTROLS, LINE_BREAKS, ZERO_WIDTH
from inboxflow.mail_stamps import trace_key_of
from tests.harness.approval import COMPLAINT, Harness, sample

MAILBOX = "maya.chen@brightlane.io"
HOSTILE = "Charged twice\u2028Bcc: all@evil.test \u202egnp.exe\u200b\u00ad\x85 refund\u2029"
HIDDEN = LINE_BREAKS | DIRECTION_CONTROLS | ZERO_WIDTH


@pytest.fixture
def gmail_harness(tmp_path: Path) -> Iterator[tuple[Harness, GoogleApiDouble]]:
    harness = Harness(tmp_path)
    with GoogleApiDouble(clock=harness.clock) as double:
        double.seed_from_workspace_json(mailbox=MAILBOX, now=harness.clock.now())
        harness.runtime.ports.workspace = GoogleWorkspace(
            MAILBOX, harness.store, api_url=double.url, sleep=lambda s: None
        )
        yield harness, double


def test_a_hostile_subject_reaches_the_pause_clean_and_its_approval_is_drafted(
    gmail_harness: tuple[Harness, GoogleApiDouble],
) -> None:
    h, double = gmail_harness
    email = {**sample(COMPLAINT), "subject": HOSTILE}
    trace_id = h.start(email)
    approval = h.approval_of(trace_id)
    payload = approval.payload
    for field in ("subject", "to"):
        assert not HIDDEN & set(payload[field]), (field, payload[field])
    # the body keeps newlines (and zero-width joiners); no other separator, no bidi control
    assert not (LINE_BREAKS - {"\n"} | DIRECTION_CONTROLS) & set(payload["draft"])
    assert payload["subject"] == "Re: Charged twice Bcc: all@evil.test gnp.exe refund"

    (link, *_) = h.links(approval.approval_id)
    shown = {name: payload[name] for name in ("to", "subject", "draft")}
    response = h.client.post(f"/a/{approval.approval_id}", data=h.form(link, "approve", **shown))

    assert response.status_code == 200, response.get_data(as_text=True)[:500]
    checkpoint = h.store.get_trace(trace_id)
    assert checkpoint is not None and checkpoint.status == "done", checkpoint
    (draft,) = [
        m
        for m in double.drafts(MAILBOX)
        if (trace_key_of(h.store, m["headers"].get(TRACE_HEADER, "")) or "").startswith(
            f"{trace_id}:"
        )
    ]
    assert draft["subject"] == payload["subject"]
