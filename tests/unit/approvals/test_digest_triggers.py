"""What sends a digest: a pause (``ApprovalService.after_pause``) and the sweep the scheduler
calls (``POST /digest`` of the approval function); ``notify: digest`` replaces the email per pause.
"""

from __future__ import annotations

from pathlib import Path

from inboxflow.approvals.errors import ApprovalError
from inboxflow.config import parse_config
from inboxflow.graphs.pipeline.settings import PipelineSettings
from tests.harness.approval import LINK, Harness
from tests.harness.digest import SIGN_IN

ANA = "ana@brightlane.io"  # digest only
BEN = "ben@brightlane.io"  # both
GIL = "gil@brightlane.io"  # each (unlisted)


def _harness(tmp_path: Path) -> Harness:
    h = Harness(
        tmp_path,
        settings=PipelineSettings(reviewers=(ANA, BEN, GIL), approval_deadline_s=3600),
    )
    h.service.settings = parse_config(
        {
            "reviewers": {ANA: {"notify": "digest"}, BEN: {"notify": "both"}},
            "digest": {"daily_at": None},
        },
        graphs={},
    )
    return h


def _kinds(h: Harness, reviewer: str) -> list[str]:
    """What ``reviewer`` received: ``review`` (a review link) or ``digest`` (a sign-in link)."""
    kinds = []
    for message in h.inbox:
        if message["to"] != reviewer:
            continue
        if LINK.search(message["text"]):
            kinds.append("review")
        elif SIGN_IN.search(message["text"]):
            kinds.append("digest")
    return kinds


def test_a_pause_emails_each_reviewer_as_their_notify_setting_says(tmp_path: Path) -> None:
    h = _harness(tmp_path)
    trace_id = h.start()
    assert _kinds(h, ANA) == ["digest"]
    assert _kinds(h, BEN) == ["review", "digest"]
    assert _kinds(h, GIL) == ["review"]

    # A redelivered pause sends nothing again (journal for emails, the record for digests).
    h.service.after_pause(h.approval_of(trace_id))
    assert (_kinds(h, ANA), _kinds(h, BEN), _kinds(h, GIL)) == (
        ["digest"],
        ["review", "digest"],
        ["review"],
    )

    # A second pause within the hour: no second digest; the sweep an hour on sends it.
    h.clock.advance(600)
    h.start(name="15-complaint")
    assert _kinds(h, ANA) == ["digest"] and _kinds(h, GIL) == ["review", "review"]
    h.clock.advance(3600)
    response = h.client.post("/digest")
    assert response.status_code == 200, response.data
    assert response.get_json() == {"reviewers": 2, "actions": {"sent": 2}}
    assert _kinds(h, ANA) == ["digest", "digest"]
    assert "pipeline: 2" in [m for m in h.inbox if m["to"] == ANA][-1]["text"]


def test_the_sweep_route_is_refused_without_the_schedulers_token(tmp_path: Path) -> None:
    from inboxflow.approvals.app import handle_http

    h = _harness(tmp_path)
    h.start()
    h.clock.advance(7200)
    h.start(name="15-complaint")
    sent = len(h.inbox)

    def refuse(_request: object) -> None:
        raise ApprovalError(401, "Unauthorized", "no valid OIDC token")

    with h.app.test_request_context("/digest", method="POST"):
        from flask import request

        response = handle_http(request, h.service, verify_task=refuse)
    assert response.status_code == 401 and response.is_json
    assert len(h.inbox) == sent
    with h.app.test_request_context("/digest", method="GET"):
        from flask import request

        assert handle_http(request, h.service, verify_task=refuse).status_code == 404
    assert len(h.inbox) == sent


def test_the_digest_link_signs_the_reviewer_in_to_their_inbox(tmp_path: Path) -> None:
    h = _harness(tmp_path)
    trace_id = h.start()
    [digest] = [m for m in h.inbox if m["to"] == ANA and SIGN_IN.search(m["text"])]
    link = SIGN_IN.search(digest["text"])
    assert link is not None
    path = link.group(0).split("approvals.test", 1)[1]
    # Opening it (a mail scanner) changes nothing: the token still signs in afterwards.
    assert h.client.get(path).status_code == 200
    assert h.client.get(path).status_code == 200
    signed = h.client.post(
        "/inbox/sign-in", data={"token": link.group(1)}, headers={"Sec-Fetch-Site": "same-origin"}
    )
    assert signed.status_code in (302, 303), signed.data
    page = h.client.get("/inbox")
    assert page.status_code == 200
    assert h.approval_of(trace_id).approval_id in page.get_data(as_text=True)
    again = h.client.post(
        "/inbox/sign-in", data={"token": link.group(1)}, headers={"Sec-Fetch-Site": "same-origin"}
    )
    assert again.status_code == 403  # single use
