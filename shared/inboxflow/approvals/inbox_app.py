"""The reviewer's inbox on the approval function: pages, sign-in, bulk, history, JSON.

| method | path                        | does                                               |
|--------|-----------------------------|----------------------------------------------------|
| GET    | /inbox/sign-in?token=T      | a Sign in button; changes nothing (mail scanners)  |
| POST   | /inbox/sign-in (token)      | spends the token, starts a new session (cookie);   |
|        |                             | only from our own page (Origin/Referer, see below) |
| POST   | /inbox/sign-out (form)      | ends the session                                   |
| GET    | /inbox?graph&kind&mailbox&q | what waits for me, soonest deadline first          |
| GET    | /inbox/a/{id}               | the review page of one of my approvals             |
| POST   | /inbox/a/{id} (form, …)     | decides it as the review link does; back to /inbox |
| POST   | /inbox/bulk (form, ids)     | approves or rejects several bulk-safe approvals    |
| GET    | /inbox/history?mine=1       | decided in the last 30 days                        |
| GET    | /api/inbox                  | the waiting list as JSON                           |

Every request but sign-in needs the session cookie (and, with IAP on, an
assertion for the same reviewer); every POST also the session's form token,
and ``handle_http`` has refused cross-site POSTs before any of this runs.
The sign-in POST refuses ``Origin: null`` and, from a browser that sends no
``Sec-Fetch-Site``, anything but a same-origin ``Origin`` (or ``Referer``):
login CSRF. Another reviewer's approval id is a 404, the same as a missing one. Pages
with the keyboard script carry a per-response CSP nonce.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlencode, urlsplit

from flask import Request, Response

from ..engine.pause_kinds import reviewer_kinds
from ..engine.waits import Approval
from .errors import AlreadyDecided, ApprovalError
from .http_headers import SECURITY_HEADERS
from .iap import IAP_HEADER, iap_verifier
from .inbox import InboxFilter, Lesson
from .pages import render_inbox_page, render_review
from .service import ApprovalService
from .sessions import SESSION_TTL_S, Session, sign_in_required

SECURE_COOKIE = "__Host-inboxflow-inbox"
PLAIN_COOKIE = "inboxflow-inbox"
"""Over plain http to another host than this machine a browser refuses ``Secure`` (and so
``__Host-``) cookies: the embedded default on a LAN address uses this name."""
MAX_BULK = 100
LESSON_CHARS = 160
"""A changed preference's value is cut to this many characters in the history."""
_LOOPBACK = ("localhost", "127.0.0.1", "::1")
_FORM_CONTROLS = frozenset({"form", "decision", "comment"})


def handle_inbox(request: Request, service: ApprovalService, parts: list[str]) -> Response:
    """Route a request under ``/inbox`` (``parts``: the path's segments).

    Raises:
        ApprovalError: refused (``handle_http`` renders it).
    """
    method = "GET" if request.method == "HEAD" else request.method
    if parts == ["inbox", "sign-in"]:
        if method == "GET":
            return _sign_in_page(request, service)
        if method == "POST":
            return _sign_in(request, service)
    elif parts == ["inbox", "sign-out"] and method == "POST":
        return _sign_out(request, service)
    elif parts == ["inbox"] and method == "GET":
        return _list_page(request, service, _session(request, service))
    elif parts == ["inbox", "history"] and method == "GET":
        return _history_page(request, service, _session(request, service))
    elif len(parts) == 3 and parts[1] == "a" and method == "GET":
        return _review_page(service, _session(request, service), parts[2])
    elif len(parts) == 3 and parts[1] == "a" and method == "POST":
        return _decide(request, service, _posting_session(request, service), parts[2])
    elif parts == ["inbox", "bulk"] and method == "POST":
        return _bulk(request, service, _posting_session(request, service))
    raise ApprovalError(404, "Not found", "there is nothing here")


def inbox_json(request: Request, service: ApprovalService) -> dict[str, Any]:
    """``GET /api/inbox``: the waiting list (same query and authentication as the page)."""
    session = _session(request, service)
    query = InboxFilter.from_args(request.args)
    page = service.inbox.waiting(session.reviewer, query)
    now = service.clock.now()
    after = page.next_after
    return {
        "reviewer": session.reviewer,
        "counts": service.inbox.counts(session.reviewer),
        "items": [_row(service, approval, now) for approval in page.items],
        "next_after": f"{after[0]!r} {after[1]}" if after is not None else None,
    }


# --- authentication -------------------------------------------------------------------


def _secure(request: Request, service: ApprovalService) -> bool:
    if urlsplit(service.config.base_url).scheme == "https" or request.scheme == "https":
        return True
    return (urlsplit(request.host_url).hostname or "") in _LOOPBACK


def _cookie_name(request: Request, service: ApprovalService) -> str:
    return SECURE_COOKIE if _secure(request, service) else PLAIN_COOKIE


def _iap_reviewer(request: Request, service: ApprovalService) -> str | None:
    verifier = iap_verifier(service.config)
    return None if verifier is None else verifier.reviewer(request.headers.get(IAP_HEADER))


def _session(request: Request, service: ApprovalService) -> Session:
    iap_reviewer = _iap_reviewer(request, service)
    session = service.sessions.check(request.cookies.get(_cookie_name(request, service)))
    if iap_reviewer is not None and iap_reviewer != session.reviewer:
        raise sign_in_required()
    return session


def _posting_session(request: Request, service: ApprovalService) -> Session:
    session = _session(request, service)
    service.sessions.check_form(session, request.form.get("form"))
    return session


SIGN_IN_REFERRER_POLICY = "strict-origin"
"""The sign-in page's policy (every other page: ``no-referrer``): its form's POST then carries
the page's real ``Origin`` (under ``no-referrer`` a browser sends ``Origin: null``) and a
``Referer`` of the origin alone, never the link's token, so that a browser without Fetch
Metadata can prove the POST came from our own page (``_check_sign_in_origin``). The page's
``<meta name="referrer">`` says the same (``inbox_sign_in.html``): in a browser it wins."""


def _sign_in_page(request: Request, service: ApprovalService) -> Response:
    token = request.args.get("token") or ""
    iap_reviewer = _iap_reviewer(request, service) if not token else None
    page = render_inbox_page("inbox_sign_in.html", token=token[:200], iap_reviewer=iap_reviewer)
    response = _html(page)
    response.headers["Referrer-Policy"] = SIGN_IN_REFERRER_POLICY
    return response


def _check_sign_in_origin(request: Request, service: ApprovalService) -> None:
    """Refuse a sign-in POST not sent by our own page (login CSRF: a session for the
    attacker's token in the victim's browser).

    ``Origin: null`` is refused outright (an opaque origin: a sandboxed frame, a
    data: URL, a redirect chain). A browser that sends ``Sec-Fetch-Site`` was
    already held to ``same-origin``/``none`` by ``handle_http``; one that sends none
    (Safari before 16.4, scripts) must show a same-origin ``Origin``, or without one
    a same-origin ``Referer``.
    """
    origin = request.headers.get("Origin")
    if origin is not None and origin.strip().lower() == "null":
        raise ApprovalError(403, "Forbidden", "sign in from the sign-in page itself")
    if request.headers.get("Sec-Fetch-Site") is not None:
        return
    shown = origin if origin is not None else request.headers.get("Referer")
    if shown is None or _origin_of(shown) not in {
        _origin_of(request.host_url),
        _origin_of(service.config.base_url),
    }:
        raise ApprovalError(403, "Forbidden", "sign in from the sign-in page itself")


def _origin_of(url: str) -> str | None:
    """``scheme://host[:port]`` of ``url`` (lowercased), or None when it has no host."""
    parts = urlsplit(url.strip())
    if not parts.scheme or not parts.netloc:
        return None
    return f"{parts.scheme.lower()}://{parts.netloc.lower()}"


def _sign_in(request: Request, service: ApprovalService) -> Response:
    _check_sign_in_origin(request, service)
    iap_reviewer = _iap_reviewer(request, service)
    token = request.form.get("token")
    if token:
        reviewer = service.sign_ins.redeem(token)
        if iap_reviewer is not None and iap_reviewer != reviewer:
            raise ApprovalError(403, "Wrong reviewer", "this link is for another reviewer")
    elif iap_reviewer is not None:
        reviewer = iap_reviewer
    else:
        raise ApprovalError(400, "Link incomplete", "open the sign-in link from your email")
    name = _cookie_name(request, service)
    cookie, _ = service.sessions.start(reviewer, replacing=request.cookies.get(name))
    response = _redirect("/inbox")
    response.set_cookie(
        name,
        cookie,
        max_age=SESSION_TTL_S,
        path="/",
        secure=name == SECURE_COOKIE,
        httponly=True,
        samesite="Strict",
    )
    return response


def _sign_out(request: Request, service: ApprovalService) -> Response:
    _posting_session(request, service)
    name = _cookie_name(request, service)
    service.sessions.end(request.cookies.get(name) or "")
    response = _html(render_inbox_page("inbox_signed_out.html"))
    response.delete_cookie(
        name, path="/", secure=name == SECURE_COOKIE, httponly=True, samesite="Strict"
    )
    return response


# --- pages ----------------------------------------------------------------------------


def _list_page(request: Request, service: ApprovalService, session: Session) -> Response:
    query = InboxFilter.from_args(request.args)
    page = service.inbox.waiting(session.reviewer, query)
    counts = service.inbox.counts(session.reviewer)
    now = service.clock.now()
    flash = None
    decided_id = request.args.get("decided")
    if decided_id:
        try:
            decided = service.inbox.approval(session.reviewer, decided_id)
        except ApprovalError:
            decided = None
        if decided is not None and decided.status == "decided":
            outcome = _outcome(service, decided)
            flash = f"{outcome}: {decided.context.get('subject') or '(no subject)'}"
    next_link = None
    if page.next_after is not None:
        args = {k: v for k, v in request.args.items() if k not in ("after", "decided")}
        deadline, approval_id = page.next_after
        next_link = "/inbox?" + urlencode({**args, "after": f"{deadline!r} {approval_id}"})
    nonce = secrets.token_urlsafe(18)
    return _signed_in_page(
        "inbox.html",
        service,
        session,
        items=[_row(service, approval, now) for approval in page.items],
        total=sum(counts.values()),
        counts=counts,
        graphs=sorted(set(service.inbox.graphs()) | set(counts)),
        kinds=reviewer_kinds(service.graphs),
        query=query,
        next_after=page.next_after,
        next_link=next_link,
        flash=flash,
        nonce=nonce,
    )


def _history_page(request: Request, service: ApprovalService, session: Session) -> Response:
    mine = request.args.get("mine") == "1"
    approvals = service.inbox.history(session.reviewer, mine=mine)
    lessons = service.inbox.lessons(approvals)
    collected = service.inbox.collected(approvals)
    rows = []
    for approval in approvals:
        rows.append(
            {
                "subject": str(approval.context.get("subject", "")),
                "sender": str(approval.context.get("sender", "")),
                "graph": approval.graph,
                "title": _title(service, approval),
                "choice": _outcome(service, approval),
                "decided_by": approval.decided_by or "",
                "decided_at": approval.decided_at,
                "decided_iso": _iso(approval.decided_at),
                "edited": approval.edited,
                "comment": approval.comment,
                "lessons": [_lesson(lesson) for lesson in lessons.get(approval.approval_id, [])],
                "collected_at": collected.get(approval.approval_id),
                "collected_iso": _iso(collected.get(approval.approval_id)),
            }
        )
    return _signed_in_page("inbox_history.html", service, session, items=rows, mine=mine, days=30)


def _lesson(lesson: Lesson) -> dict[str, Any]:
    """A memory change as the history shows it: where, why, each changed preference in short."""
    changes = []
    for name, value in lesson.changed.items():
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        changes.append((name, text if len(text) <= LESSON_CHARS else text[:LESSON_CHARS] + "…"))
    return {
        "where": f"{lesson.namespace} of {lesson.mailbox}",
        "version": lesson.version,
        "why": lesson.why,
        "changes": changes,
    }


def _review_page(service: ApprovalService, session: Session, approval_id: str) -> Response:
    from .pages import render_decided

    approval = service.inbox.approval(session.reviewer, approval_id)
    view = service.view(approval, session.reviewer)
    if approval.status != "pending":
        return _html(render_decided(view))
    page = render_review(
        view,
        form_action=f"/inbox/a/{approval.approval_id}",
        token=service.sessions.form_token(session),
        max_edit_chars=service.config.max_edit_chars,
        back="/inbox",
    )
    return _html(page)


def _decide(
    request: Request, service: ApprovalService, session: Session, approval_id: str
) -> Response:
    approval = service.inbox.approval(session.reviewer, approval_id)
    form = request.form
    edit = {name: form[name] for name in form if name not in _FORM_CONTROLS}
    service.decisions.decide_as(
        approval.approval_id,
        session.reviewer,
        form.get("decision", ""),
        edit or None,
        comment=form.get("comment"),
    )
    return _redirect("/inbox?" + urlencode({"decided": approval.approval_id}))


def _bulk(request: Request, service: ApprovalService, session: Session) -> Response:
    style = {"approve": "primary", "reject": "danger"}.get(request.form.get("decision", ""))
    if style is None:
        raise ApprovalError(400, "Bad request", "choose approve or reject")
    ids = list(dict.fromkeys(request.form.getlist("ids")))
    if not ids:
        raise ApprovalError(400, "Nothing selected", "select the approvals to decide")
    if len(ids) > MAX_BULK:
        raise ApprovalError(413, "Too many", f"decide at most {MAX_BULK} at once")
    done: list[dict[str, Any]] = []
    late: list[dict[str, Any]] = []
    refused: list[dict[str, Any]] = []
    for approval_id in ids:
        try:
            approval = service.inbox.approval(session.reviewer, approval_id)
        except ApprovalError as exc:
            refused.append({"approval_id": approval_id[:80], "subject": "", "outcome": exc.message})
            continue
        subject = str(approval.context.get("subject", ""))
        kind = service.decisions.kind(approval)
        choice = kind.styled(style)  # type: ignore[arg-type]
        if not kind.bulk_safe or choice is None:
            refused.append(
                {"approval_id": approval_id, "subject": subject, "outcome": "open it to decide"}
            )
            continue
        try:
            decided = service.decisions.decide_as(approval_id, session.reviewer, choice.value)
        except AlreadyDecided as exc:
            service.decisions.publish_resume(exc.approval)
            late.append(
                {
                    "approval_id": approval_id,
                    "subject": subject,
                    "outcome": _outcome(service, exc.approval),
                    "decided_by": exc.approval.decided_by or "the deadline",
                }
            )
            continue
        except ApprovalError as exc:
            refused.append({"approval_id": approval_id, "subject": subject, "outcome": exc.message})
            continue
        done.append(
            {"approval_id": approval_id, "subject": subject, "outcome": _outcome(service, decided)}
        )
    return _signed_in_page(
        "inbox_bulk.html", service, session, done=done, late=late, refused=refused
    )


# --- rows -----------------------------------------------------------------------------


def _row(service: ApprovalService, approval: Approval, now: float) -> dict[str, Any]:
    kind = service.decisions.kind(approval)
    primary = kind.styled("primary")
    reasons = [str(r) for r in approval.context.get("reasons", [])]
    return {
        "approval_id": approval.approval_id,
        "graph": approval.graph,
        "kind": approval.kind,
        "title": kind.title,
        "mailbox": approval.mailbox,
        "sender": str(approval.context.get("sender", "")),
        "subject": str(approval.context.get("subject", "")),
        "why": "; ".join(reasons),
        "deadline": approval.deadline,
        "deadline_iso": _iso(approval.deadline),
        "overdue": now >= approval.deadline,
        "bulk_safe": kind.bulk_safe,
        "quick": primary.value if primary is not None and primary.comment != "required" else "",
    }


def _title(service: ApprovalService, approval: Approval) -> str:
    return service.decisions.kind(approval).title


def _outcome(service: ApprovalService, approval: Approval) -> str:
    if approval.status == "timed_out":
        return "Timed out"
    choice = service.decisions.kind(approval).choice(approval.decision or "")
    return choice.outcome[0] if choice is not None else str(approval.decision or approval.status)


def _iso(moment: float | None) -> str:
    if moment is None:
        return ""
    return datetime.fromtimestamp(moment, UTC).isoformat().replace("+00:00", "Z")


def _signed_in_page(
    template: str,
    service: ApprovalService,
    session: Session,
    nonce: str | None = None,
    **context: Any,
) -> Response:
    """A page of the signed-in inbox: it names the reviewer and its forms carry the session's token."""
    body = render_inbox_page(
        template,
        reviewer=session.reviewer,
        form_token=service.sessions.form_token(session),
        nonce=nonce,
        **context,
    )
    return _html(body, nonce=nonce)


def _html(body: str, status: int = 200, nonce: str | None = None) -> Response:
    headers: Mapping[str, str] = SECURITY_HEADERS
    if nonce is not None:
        policy = SECURITY_HEADERS["Content-Security-Policy"] + f"; script-src 'nonce-{nonce}'"
        headers = {**SECURITY_HEADERS, "Content-Security-Policy": policy}
    return Response(body, status=status, headers=dict(headers), mimetype="text/html")


def _redirect(location: str) -> Response:
    return Response("", status=303, headers={**SECURITY_HEADERS, "Location": location})
