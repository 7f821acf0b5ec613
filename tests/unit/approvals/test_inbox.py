"""The reviewer's inbox over HTTP: sign-in, sessions, the list, deciding, bulk, history, JSON,
and the attacks issue 31 names (reused/expired sign-in tokens, a stolen form token, another
reviewer's approval ids by page and API, cross-site POSTs, session fixation)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from inboxflow.approvals.inbox_app import SECURE_COOKIE
from inboxflow.approvals.sign_in import SIGN_IN_TTL_S
from inboxflow.graphs.pipeline.settings import PipelineSettings
from inboxflow.schema import APPROVALS, INBOX_SESSIONS, INBOX_SIGN_INS
from tests.harness.approval import BACKUP, REVIEWERS, Harness

ANA, BEN = REVIEWERS
EVE = "eve@brightlane.io"
FORM = re.compile(r'name="form" value="([^"]+)"')


@pytest.fixture
def h(tmp_path: Path) -> Harness:
    settings = PipelineSettings(
        reviewers=REVIEWERS,
        approval_deadline_s=3600,
        approval_on_timeout="escalate",
        escalate_to=(BACKUP,),
    )
    harness = Harness(tmp_path, settings=settings)
    for _ in range(3):
        harness.start()
    return harness


BROWSER = {"Sec-Fetch-Site": "same-origin"}
"""What a browser sends with a form post from our own page (Fetch Metadata)."""


def sign_in(h: Harness, reviewer: str, client: Any = None) -> Any:
    client = client or h.client
    link = h.service.sign_ins.issue(reviewer)
    token = link.split("token=", 1)[1]
    response = client.post("/inbox/sign-in", headers=BROWSER, data={"token": token})
    assert response.status_code == 303, response.data
    assert response.headers["Location"] == "/inbox"
    return client


def page(client: Any, path: str = "/inbox") -> str:
    response = client.get(path)
    assert response.status_code == 200, response.data
    return str(response.get_data(as_text=True))


def form_token(client: Any) -> str:
    match = FORM.search(page(client))
    assert match
    return match.group(1)


def ids_on(html: str) -> list[str]:
    return re.findall(r'href="/inbox/a/([^"]+)"', html)


def waiting_ids(h: Harness) -> list[str]:
    rows = h.store.list(APPROVALS.name, [("status", "==", "pending")], order_by="deadline")
    return [doc_id for doc_id, _ in rows]


def stored(h: Harness) -> dict[str, Any]:
    return {
        name: sorted(h.store.list(name), key=lambda row: row[0])
        for name in (APPROVALS.name, INBOX_SESSIONS.name, INBOX_SIGN_INS.name, "mailbox_drafts")
    }


# --- sign-in and sessions -------------------------------------------------------------


def test_the_sign_in_link_shows_a_button_and_changes_nothing(h: Harness) -> None:
    link = h.service.sign_ins.issue(ANA)
    before = stored(h)
    response = h.client.get(link.split("approvals.test", 1)[1])
    assert response.status_code == 200
    assert "Set-Cookie" not in response.headers
    assert 'method="post" action="/inbox/sign-in"' in response.get_data(as_text=True)
    assert stored(h) == before
    assert h.client.get("/inbox").status_code == 401


def test_sign_in_sets_a_strict_host_only_session_cookie_stored_hashed(h: Harness) -> None:
    link = h.service.sign_ins.issue(ANA)
    response = h.client.post(
        "/inbox/sign-in", headers=BROWSER, data={"token": link.split("token=", 1)[1]}
    )
    header = response.headers["Set-Cookie"]
    assert header.startswith(f"{SECURE_COOKIE}=")
    for attribute in ("Secure", "HttpOnly", "Path=/", "SameSite=Strict", "Max-Age=43200"):
        assert attribute in header
    assert "Domain" not in header
    cookie = header.split(";", 1)[0].split("=", 1)[1]
    assert cookie not in repr(h.store.list(INBOX_SESSIONS.name))
    assert "3 waiting for you" in page(h.client)


def test_a_reused_sign_in_token_is_refused(h: Harness) -> None:
    token = h.service.sign_ins.issue(ANA).split("token=", 1)[1]
    assert (
        h.client.post("/inbox/sign-in", headers=BROWSER, data={"token": token}).status_code == 303
    )
    thief = h.app.test_client()
    assert thief.post("/inbox/sign-in", headers=BROWSER, data={"token": token}).status_code == 403
    assert thief.get("/inbox").status_code == 401


def test_an_expired_sign_in_token_is_refused(h: Harness) -> None:
    token = h.service.sign_ins.issue(ANA).split("token=", 1)[1]
    h.clock.advance(SIGN_IN_TTL_S)
    assert (
        h.client.post("/inbox/sign-in", headers=BROWSER, data={"token": token}).status_code == 410
    )
    assert h.client.get("/inbox").status_code == 401


def test_session_fixation_a_planted_session_is_replaced_not_promoted(h: Harness) -> None:
    attacker = sign_in(h, EVE, h.app.test_client())
    planted = attacker.get_cookie(SECURE_COOKIE).value
    victim = h.app.test_client()
    victim.set_cookie(SECURE_COOKIE, planted)
    assert "for <strong>eve@brightlane.io" in page(victim)
    sign_in(h, ANA, victim)
    assert victim.get_cookie(SECURE_COOKIE).value != planted
    assert "for <strong>ana@brightlane.io" in page(victim)
    assert attacker.get("/inbox").status_code == 401  # the planted id was ended, not upgraded
    forged = h.app.test_client()
    forged.set_cookie(SECURE_COOKIE, "A" * 43)
    assert forged.get("/inbox").status_code == 401


def test_sign_out_ends_the_session_and_revoke_ends_all(h: Harness) -> None:
    sign_in(h, ANA)
    other = sign_in(h, ANA, h.app.test_client())
    cookie = h.client.get_cookie(SECURE_COOKIE).value
    response = h.client.post("/inbox/sign-out", data={"form": form_token(h.client)})
    assert response.status_code == 200
    replay = h.app.test_client()
    replay.set_cookie(SECURE_COOKIE, cookie)
    assert replay.get("/inbox").status_code == 401
    assert other.get("/inbox").status_code == 200
    assert h.service.sessions.revoke(ANA) == 1
    assert other.get("/inbox").status_code == 401


def test_a_session_lasts_twelve_hours(h: Harness) -> None:
    sign_in(h, ANA)
    h.clock.advance(12 * 3600 - 1)
    assert h.client.get("/api/inbox").status_code == 200
    h.clock.advance(1)
    assert h.client.get("/inbox").status_code == 401
    assert h.client.get("/api/inbox").status_code == 401


# --- what a reviewer sees and may decide -------------------------------------------------


def test_the_list_is_mine_by_deadline_with_overdue_marked(h: Harness) -> None:
    sign_in(h, ANA)
    html = page(h.client)
    assert ids_on(html) == waiting_ids(h)
    assert "Charged twice" in html and "pipeline" in html
    assert html.count('class="card item overdue"') == 0
    h.clock.advance(3600)
    assert page(h.client).count('class="card item overdue"') == 3


def test_an_escalation_reviewer_sees_them_too(h: Harness) -> None:
    sign_in(h, BACKUP)
    assert ids_on(page(h.client)) == waiting_ids(h)


def test_filters_and_search_narrow_the_list(h: Harness) -> None:
    other = h.start(name="15")
    sign_in(h, ANA)
    everything = ids_on(page(h.client))
    assert len(everything) == 4
    subject = h.approval_of(other).context["subject"]
    word = max(subject.split(), key=len)
    assert ids_on(page(h.client, f"/inbox?q={word}")) == [h.approval_of(other).approval_id]
    assert ids_on(page(h.client, "/inbox?graph=pipeline&kind=approve_draft")) == everything
    assert ids_on(page(h.client, "/inbox?graph=support")) == []
    mailbox = h.approval_of(other).mailbox
    assert mailbox and ids_on(page(h.client, f"/inbox?mailbox={mailbox}")) == everything
    assert ids_on(page(h.client, "/inbox?mailbox=nobody@example.com")) == []
    assert h.client.get("/inbox?after=soon").status_code == 400


def test_every_other_approval_id_is_refused_by_page_and_by_api(h: Harness) -> None:
    eve = sign_in(h, EVE, h.app.test_client())
    token = form_token(eve)
    before = stored(h)
    assert ids_on(page(eve)) == []
    assert eve.get("/api/inbox").get_json()["items"] == []
    for approval_id in [*waiting_ids(h), "no-such-approval", "..%2Fapprovals"]:
        assert eve.get(f"/inbox/a/{approval_id}").status_code == 404
        response = eve.post(f"/inbox/a/{approval_id}", data={"form": token, "decision": "approve"})
        assert response.status_code == 404
    response = eve.post(
        "/inbox/bulk", data={"form": token, "decision": "approve", "ids": waiting_ids(h)}
    )
    assert response.status_code == 200
    assert response.get_data(as_text=True).count('data-result="refused"') == 3
    assert eve.get("/inbox/history").get_data(as_text=True).count("data-history") == 0
    assert stored(h) == {**before, INBOX_SESSIONS.name: stored(h)[INBOX_SESSIONS.name]}


def test_a_stolen_form_token_is_refused(h: Harness) -> None:
    sign_in(h, ANA)
    stolen = form_token(h.client)
    target = waiting_ids(h)[0]
    before = stored(h)
    mallory = sign_in(h, BEN, h.app.test_client())
    response = mallory.post(f"/inbox/a/{target}", data={"form": stolen, "decision": "approve"})
    assert response.status_code == 403
    anonymous = h.app.test_client()
    response = anonymous.post(f"/inbox/a/{target}", data={"form": stolen, "decision": "approve"})
    assert response.status_code == 401
    no_token = h.client.post(f"/inbox/a/{target}", data={"decision": "approve"})
    assert no_token.status_code == 400
    assert stored(h)[APPROVALS.name] == before[APPROVALS.name]


def test_a_cross_site_post_is_refused(h: Harness) -> None:
    sign_in(h, ANA)
    token = form_token(h.client)
    before = stored(h)
    for headers in ({"Sec-Fetch-Site": "cross-site"}, {"Origin": "https://evil.example"}):
        response = h.client.post(
            "/inbox/bulk",
            data={"form": token, "decision": "approve", "ids": waiting_ids(h)},
            headers=headers,
        )
        assert response.status_code == 403
    assert stored(h) == before


def test_deciding_inline_with_an_edit_returns_to_the_list(h: Harness) -> None:
    sign_in(h, ANA)
    target = waiting_ids(h)[0]
    review = page(h.client, f"/inbox/a/{target}")
    assert 'action="/inbox/a/' in review and 'name="draft"' in review
    token = FORM.search(review).group(1)  # type: ignore[union-attr]
    response = h.client.post(
        f"/inbox/a/{target}", data={"form": token, "decision": "approve", "draft": "Edited."}
    )
    assert response.status_code == 303
    assert response.headers["Location"] == f"/inbox?decided={target}"
    listed = page(h.client, response.headers["Location"])
    assert 'class="flash"' in listed and target not in ids_on(listed)
    decided = h.service.get(target)
    assert decided is not None and decided.decided_by == ANA and decided.edited
    assert decided.applied_payload and decided.applied_payload["draft"] == "Edited."
    again = h.client.post(f"/inbox/a/{target}", data={"form": token, "decision": "reject"})
    assert again.status_code == 409


def test_bulk_decides_each_once_and_says_which_were_already_decided(h: Harness) -> None:
    ben = sign_in(h, BEN, h.app.test_client())
    sign_in(h, ANA)
    ids = waiting_ids(h)
    first = ids[0]
    ben_token = form_token(ben)
    ben.post(f"/inbox/a/{first}", data={"form": ben_token, "decision": "reject"})
    response = h.client.post(
        "/inbox/bulk", data={"form": form_token(h.client), "decision": "approve", "ids": ids}
    )
    html = response.get_data(as_text=True)
    assert html.count('data-result="done"') == 2
    assert html.count('data-result="already"') == 1 and BEN in html
    decided = {i: h.service.get(i) for i in ids}
    assert decided[first].decided_by == BEN  # type: ignore[union-attr]
    assert {decided[i].decided_by for i in ids[1:]} == {ANA}  # type: ignore[union-attr]
    assert all(h.store.get_trace(a.trace_id).pause is None for a in decided.values())  # type: ignore[union-attr]  # resumed
    assert len(h.store.list("mailbox_drafts")) == 2  # one resume each: one draft per approval


def test_bulk_refuses_kinds_not_declared_bulk_safe(h: Harness) -> None:
    import dataclasses

    from inboxflow.graphs.pipeline.pauses import APPROVE_DRAFT_KIND

    unsafe = dataclasses.replace(APPROVE_DRAFT_KIND, bulk_safe=False)
    h.service.decisions.kinds = lambda graph, kind: unsafe
    sign_in(h, ANA)
    html = page(h.client)
    assert 'name="ids"' not in html
    response = h.client.post(
        "/inbox/bulk",
        data={"form": form_token(h.client), "decision": "approve", "ids": waiting_ids(h)},
    )
    assert response.get_data(as_text=True).count('data-result="refused"') == 3
    assert len(waiting_ids(h)) == 3


def test_history_shows_the_last_30_days_by_whom_with_edits_and_comments(h: Harness) -> None:
    sign_in(h, ANA)
    ben = sign_in(h, BEN, h.app.test_client())
    first, second, _ = waiting_ids(h)
    token = form_token(h.client)
    h.client.post(f"/inbox/a/{first}", data={"form": token, "decision": "approve", "draft": "X"})
    ben.post(f"/inbox/a/{second}", data={"form": form_token(ben), "decision": "reject"})
    everything = page(h.client, "/inbox/history")
    assert everything.count("data-history") == 2 and BEN in everything and "edited" in everything
    assert page(h.client, "/inbox/history?mine=1").count("data-history") == 1
    h.clock.advance(30 * 86400 + 1)
    sign_in(h, ANA)
    assert page(h.client, "/inbox/history").count("data-history") == 0


def test_the_json_api_uses_the_same_session(h: Harness) -> None:
    assert h.client.get("/api/inbox").status_code == 401
    sign_in(h, ANA)
    body = h.client.get("/api/inbox").get_json()
    assert body["reviewer"] == ANA
    assert [item["approval_id"] for item in body["items"]] == waiting_ids(h)
    assert body["counts"] == {"pipeline": 3}
    assert {"graph", "kind", "mailbox", "sender", "subject", "why", "deadline"} <= set(
        body["items"][0]
    )


def test_the_keyboard_script_runs_only_under_its_nonce(h: Harness) -> None:
    sign_in(h, ANA)
    response = h.client.get("/inbox")
    nonce = re.search(r"'nonce-([^']+)'", response.headers["Content-Security-Policy"])
    assert nonce is not None
    html = response.get_data(as_text=True)
    assert html.count("<script") == 1 and f'<script nonce="{nonce.group(1)}">' in html
    assert (
        h.client.get("/inbox").headers["Content-Security-Policy"]
        != response.headers["Content-Security-Policy"]
    )


def test_paging_follows_the_deadline(h: Harness) -> None:
    from inboxflow.approvals.inbox import InboxFilter

    first = h.service.inbox.waiting(ANA, InboxFilter(), page_size=2)
    last = first.items[-1]
    assert len(first.items) == 2 and first.next_after == (last.deadline, last.approval_id)
    rest = h.service.inbox.waiting(ANA, InboxFilter(after=first.next_after), page_size=2)
    assert [a.approval_id for a in first.items + rest.items] == waiting_ids(h)
    assert rest.next_after is None


# --- login CSRF (issue 39, item 6) ----------------------------------------------------------


@pytest.mark.parametrize(
    "headers",
    [
        {"Origin": "null"},  # a sandboxed frame or data: page, Safari before 16.4
        {"Origin": "null", "Sec-Fetch-Site": "same-origin"},
        {"Origin": "NULL", "Referer": "http://approvals.test/inbox/sign-in"},
        {},  # no Fetch Metadata, no Origin, no Referer
        {"Origin": "https://evil.example"},
        {"Referer": "https://evil.example/login-csrf.html"},
        {"Referer": "http://approvals.test.evil.example/inbox/sign-in"},
        {"Origin": "https://evil.example", "Referer": "http://approvals.test/inbox/sign-in"},
        {"Referer": "/inbox/sign-in"},
    ],
    ids=[
        "origin-null",
        "origin-null-with-metadata",
        "origin-null-upper",
        "nothing",
        "cross-origin",
        "cross-referer",
        "look-alike-referer",
        "origin-decides",
        "relative-referer",
    ],
)
def test_a_sign_in_post_from_another_page_starts_no_session(
    h: Harness, headers: dict[str, str]
) -> None:
    token = h.service.sign_ins.issue(EVE).split("token=", 1)[1]  # the attacker's own link
    response = h.client.post("/inbox/sign-in", headers=headers, data={"token": token})
    assert response.status_code == 403, response.data
    assert "Set-Cookie" not in response.headers
    assert h.client.get("/inbox").status_code == 401
    assert h.service.sign_ins.redeem(token) == EVE  # not spent either


@pytest.mark.parametrize(
    "headers",
    [
        {"Origin": "{base}"},  # the configured base URL
        {"Origin": "http://localhost"},  # the host the request came to
        {"Referer": "{base}/"},  # strict-origin: the origin alone
    ],
    ids=["origin-base-url", "origin-host", "referer"],
)
def test_a_browser_without_fetch_metadata_signs_in_from_our_own_page(
    h: Harness, headers: dict[str, str]
) -> None:
    base = h.service.config.base_url.rstrip("/")
    headers = {name: value.replace("{base}", base) for name, value in headers.items()}
    token = h.service.sign_ins.issue(ANA).split("token=", 1)[1]
    response = h.client.post("/inbox/sign-in", headers=headers, data={"token": token})
    assert response.status_code == 303, response.data
    assert "3 waiting for you" in page(h.client)


def test_the_sign_in_page_lets_its_post_carry_its_origin_and_no_token(h: Harness) -> None:
    link = h.service.sign_ins.issue(ANA)
    response = h.client.get(link.split("approvals.test", 1)[1])
    assert response.headers["Referrer-Policy"] == "strict-origin"
    # the page's own meta policy wins over the header in browsers: it must say the same
    assert '<meta name="referrer" content="strict-origin">' in response.get_data(as_text=True)
    other = h.client.get("/inbox/sign-in")  # without a token: the same page, the same policy
    assert other.headers["Referrer-Policy"] == "strict-origin"
    assert h.client.get("/a/x-1?t=nope").headers["Referrer-Policy"] == "no-referrer"
    assert '<meta name="referrer" content="no-referrer">' in h.client.get("/a/x-1").get_data(
        as_text=True
    )
