"""The approval HTTP function: review pages, decisions, deadlines and a JSON API.

| method | path                              | who                  | does                                  |
|--------|-----------------------------------|----------------------|---------------------------------------|
| GET    | /a/{id}?t=TOKEN                   | reviewer (email link)| review page; never changes state      |
| POST   | /a/{id}  (form: form, decision…)  | reviewer             | records the decision, resumes         |
| POST   | /timeout (JSON approval_id)       | Cloud Tasks (OIDC) / local token | applies the timeout policy |
| POST   | /digest                           | Cloud Scheduler (OIDC) / local token | sends the digests due  |
| GET    | /api/approvals/{id}               | Bearer TOKEN         | the approval as JSON                  |
| POST   | /api/approvals/{id}/decision      | Bearer TOKEN or key  | decides (JSON in, JSON out)           |
| GET    | /api/pending?reviewer=R           | Bearer API key       | pending approvals of a reviewer       |
| *      | /inbox…, GET /api/inbox           | inbox session        | the reviewer's inbox (inbox_app.py)   |

The function is public (the token is the credential), so ``/timeout`` and
``/digest`` check their caller themselves: the Google OIDC token on Cloud Run,
the home's local task token elsewhere (``task_auth.py``); an anonymous call is a
401 that changes nothing. Even so, a timeout before the deadline only re-schedules. The review
page's form carries a short-lived form token, not the link's token. Every
body is limited to ``MAX_BODY_BYTES`` (chunked ones too), POSTs from another
site are refused, and every response carries ``SECURITY_HEADERS``.
"""

from __future__ import annotations

import hmac
import json
import logging
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import urlsplit

from flask import Request, Response
from werkzeug.exceptions import HTTPException, RequestEntityTooLarge

from ..errors import RetryableError
from ..redaction import redact_access_logs
from .errors import AlreadyDecided, ApprovalError
from .http_headers import SECURITY_HEADERS, install_hardening
from .oidc import verification_enabled, verify_task_oidc
from .pages import render_decided, render_error, render_result, render_review
from .service import ApprovalService

log = logging.getLogger(__name__)
redact_access_logs()
__all__ = ["SECURITY_HEADERS", "handle_http", "install_hardening"]

MAX_BODY_BYTES = 256 * 1024
MAX_HOP = 10_000
"""No approval waits 800 years: a larger ``hop`` is refused before the service sees it."""


def _html(body: str, status: int = 200) -> Response:
    return Response(body, status=status, headers=SECURITY_HEADERS, mimetype="text/html")


def _json(doc: Mapping[str, Any], status: int = 200) -> Response:
    return Response(
        json.dumps(doc, default=str),
        status=status,
        headers=SECURITY_HEADERS,
        mimetype="application/json",
    )


def _error_html(exc: ApprovalError) -> Response:
    return _html(render_error(exc.status, exc.title, exc.message), exc.status)


def _error_json(exc: ApprovalError) -> Response:
    body: dict[str, Any] = {"error": exc.message, "status": exc.status}
    if isinstance(exc, AlreadyDecided):
        body.update(
            decision=exc.approval.decision or exc.approval.status,
            decided_by=exc.approval.decided_by,
            decided_at=exc.approval.decided_at,
        )
    return _json(body, exc.status)


def handle_http(
    request: Request,
    service: ApprovalService,
    verify_task: Any = None,
    environ: Mapping[str, str] | None = None,
) -> Response:
    """Route one request of the approval function.

    Args:
        request: the Flask request functions-framework passes.
        service: the approval service.
        verify_task: ``(request) -> None`` raising ``ApprovalError`` when a ``/timeout`` or
            ``/digest`` call is not from our queue or scheduler (the entry point passes
            ``task_auth.local_task_check``); default: OIDC where verification is on, else
            every call refused.
        environ: the environment the entry point read, for the default ``verify_task``
            (``oidc.verification_enabled``); None: none (verification off).
    """
    # Flask enforces these while reading, chunked bodies included (no Content-Length).
    request.max_content_length = MAX_BODY_BYTES
    request.max_form_memory_size = MAX_BODY_BYTES
    request.max_form_parts = 100
    parts = [p for p in request.path.split("/") if p]
    api = bool(parts) and parts[0] in ("api", "timeout", "digest")
    if request.content_length is not None and request.content_length > MAX_BODY_BYTES:
        return _too_large(api)
    try:
        body = request.get_data(cache=True)  # form and JSON parsing read this copy
    except RequestEntityTooLarge:
        return _too_large(api)
    if request.content_length is None and len(body) >= MAX_BODY_BYTES:
        return _too_large(api)  # a streamed body stopped at the limit: there is more
    try:
        if request.method == "POST":
            _check_same_origin(request, service)
        if len(parts) == 2 and parts[0] == "a":
            if request.method == "GET" or request.method == "HEAD":
                return _review_page(service, parts[1], request.args.get("t"))
            if request.method == "POST":
                return _decide_form(service, parts[1], request)
            return _html(render_error(405, "Not allowed", "use the link in the email"), 405)
        if parts and parts[0] == "inbox":
            from .inbox_app import handle_inbox

            return handle_inbox(request, service, parts)
        if parts == ["api", "inbox"] and request.method == "GET":
            from .inbox_app import inbox_json

            return _json(inbox_json(request, service))
        if parts == ["timeout"] and request.method == "POST":
            (verify_task or _no_local_caller(environ or {}))(request)
            return _json(service.deadlines.on_timeout(*_timeout_call(request)))
        if parts == ["digest"] and request.method == "POST":
            # The scheduler's identity is checked as the deadline tasks' is (the same invoker).
            (verify_task or _no_local_caller(environ or {}))(request)
            return _json(_digest_sweep(service))
        if parts and parts[0] == "api":
            return _api(service, parts[1:], request)
    except AlreadyDecided as exc:
        service.decisions.publish_resume(exc.approval)
        if api:
            return _error_json(exc)
        return _html(render_decided(service.view(exc.approval, exc.approval.decided_by or "")), 409)
    except ApprovalError as exc:
        return _error_json(exc) if api else _error_html(exc)
    except RequestEntityTooLarge:
        return _too_large(api)
    except HTTPException as exc:
        code = exc.code or 400
        error = ApprovalError(code, exc.name, "this request was refused")
        return _error_json(error) if api else _error_html(error)
    except RetryableError as exc:
        # Contention or a transient store failure: nothing was decided; the reviewer (or
        # Cloud Tasks, for /timeout) tries again and then sees the outcome.
        log.warning("approval request %s %s: retry later: %s", request.method, request.path, exc)
        busy = ApprovalError(
            503, "Busy", "several decisions arrived at once: try again in a moment"
        )
        response = _error_json(busy) if api else _error_html(busy)
        response.headers["Retry-After"] = "2"
        return response
    except Exception:
        log.exception("approval request %s %s failed", request.method, request.path)
        error = ApprovalError(500, "Something went wrong", "try again in a minute")
        return _error_json(error) if api else _error_html(error)
    return _html(render_error(404, "Not found", "there is nothing here"), 404)


def _no_local_caller(environ: Mapping[str, str]) -> Callable[[Request], None]:
    """The default task check: OIDC where verification is on in ``environ``; otherwise nobody
    (a caller of ``handle_http`` that serves locally passes ``task_auth.local_task_check``)."""

    def check(request: Request) -> None:
        if verification_enabled(environ):
            verify_task_oidc(request, environ)
            return
        raise ApprovalError(401, "Unauthorized", "no task caller is configured here")

    return check


def _too_large(api: bool) -> Response:
    """413, as JSON for ``/api/`` and ``/timeout`` (their clients read JSON), else a page."""
    # Streamed, so that functions-framework does not try to read the rest of the body
    # after the response (it drains unstreamed ones): the limit would raise again there.
    message = "this request is too large"
    if api:
        body = json.dumps({"error": message, "status": 413})
        return Response(
            iter([body]), status=413, headers=SECURITY_HEADERS, mimetype="application/json"
        )
    page = render_error(413, "Too large", message)
    return Response(iter([page]), status=413, headers=SECURITY_HEADERS, mimetype="text/html")


def _json_body(request: Request) -> Any:
    """The request's JSON (None when it is not JSON); ApprovalError 400 when nested too deeply
    for the parser (it raises RecursionError, which ``silent`` does not cover)."""
    try:
        return request.get_json(silent=True)
    except RecursionError:
        raise ApprovalError(400, "Bad request", "the JSON is nested too deeply") from None


def _check_same_origin(request: Request, service: ApprovalService) -> None:
    """Refuse a POST a browser sent from another site (defence in depth: the form token
    is the real credential). Clients that send neither header (chat integrations,
    Cloud Tasks) pass."""
    site = request.headers.get("Sec-Fetch-Site")
    if site is not None and site not in ("same-origin", "none"):
        raise ApprovalError(403, "Forbidden", "cross-site requests are not accepted")
    origin = request.headers.get("Origin")
    if origin is None or origin == "null":
        # Under our Referrer-Policy (no-referrer) browsers send "Origin: null" even for
        # their own form posts: only Sec-Fetch-Site tells, and it was checked above.
        return
    allowed = {_origin(request.host_url), _origin(service.config.base_url)}
    if _origin(origin) not in allowed:
        raise ApprovalError(403, "Forbidden", "cross-site requests are not accepted")


def _origin(url: str) -> str:
    parts = urlsplit(url.strip())
    return f"{parts.scheme.lower()}://{parts.netloc.lower()}" if parts.netloc else "null"


def _digest_sweep(service: ApprovalService) -> dict[str, Any]:
    """Send the digests due now; how many reviewers were looked at and what was done, by
    action (no addresses in the answer: ``Digests.sweep`` logs each digest sent)."""
    outcomes = service.digests.sweep()
    actions: dict[str, int] = {}
    for outcome in outcomes:
        actions[outcome.action] = actions.get(outcome.action, 0) + 1
    return {"reviewers": len(outcomes), "actions": actions}


def _timeout_call(request: Request) -> tuple[str, int]:
    """``(approval_id, hop)`` of a deadline task's call, or ApprovalError 400."""
    payload = _json_body(request)
    if not isinstance(payload, dict):
        raise ApprovalError(400, "Bad request", "the body must be a JSON object")
    approval_id, hop = payload.get("approval_id"), payload.get("hop", 0)
    if not isinstance(approval_id, str) or not approval_id:
        raise ApprovalError(400, "Bad request", "approval_id must be a string")
    if isinstance(hop, bool) or not isinstance(hop, int) or not 0 <= hop <= MAX_HOP:
        raise ApprovalError(400, "Bad request", f"hop must be a whole number from 0 to {MAX_HOP}")
    return approval_id, hop


def _review_page(service: ApprovalService, approval_id: str, token: str | None) -> Response:
    checked = service.tokens.check(approval_id, token)
    view = service.view(checked.approval, checked.token.reviewer)
    if checked.approval.status != "pending":
        return _html(render_decided(view))
    return _html(
        render_review(
            view,
            form_action=f"/a/{approval_id}",
            token=service.tokens.form_token(checked),
            max_edit_chars=service.config.max_edit_chars,
        )
    )


_FORM_CONTROLS = frozenset({"form", "decision", "comment"})


def _decide_form(service: ApprovalService, approval_id: str, request: Request) -> Response:
    form = request.form
    edit = {name: form[name] for name in form if name not in _FORM_CONTROLS}
    approval = service.decisions.decide(
        approval_id,
        form.get("form"),
        form.get("decision", ""),
        edit or None,
        comment=form.get("comment"),
        form=True,
    )
    return _html(render_result(service.view(approval, approval.decided_by or "")))


def _bearer(request: Request) -> str | None:
    header = request.headers.get("Authorization", "")
    scheme, _, value = header.partition(" ")
    return value.strip() if scheme.lower() == "bearer" and value.strip() else None


def _api(service: ApprovalService, parts: list[str], request: Request) -> Response:
    bearer = _bearer(request)
    if parts == ["pending"] and request.method == "GET":
        _require_api_key(service, bearer)
        reviewer = request.args.get("reviewer") or None
        items = [
            {
                "approval_id": a.approval_id,
                "trace_id": a.trace_id,
                "kind": a.kind,
                "reviewers": a.reviewers,
                "deadline": a.deadline,
                "subject": a.context.get("subject"),
                "sender": a.context.get("sender"),
            }
            for a in service.pending(reviewer)
        ]
        return _json({"pending": items})
    if len(parts) == 2 and parts[0] == "approvals" and request.method == "GET":
        checked = service.tokens.check(parts[1], bearer)
        return _json(_approval_json(service, checked.approval, checked.token.reviewer))
    if len(parts) == 3 and parts[0] == "approvals" and parts[2] == "decision":
        if request.method != "POST":
            raise ApprovalError(405, "Not allowed", "POST a decision")
        body = _json_body(request)
        if not isinstance(body, dict):
            raise ApprovalError(400, "Bad request", "the body must be a JSON object")
        edit, reviewer, decision = body.get("edit"), body.get("reviewer"), body.get("decision")
        if edit is not None and not isinstance(edit, dict):
            raise ApprovalError(400, "Bad request", "edit must be an object")
        if not isinstance(decision, str) or (
            reviewer is not None and not isinstance(reviewer, str)
        ):
            raise ApprovalError(400, "Bad request", "decision and reviewer must be strings")
        if _is_api_key(service, bearer):
            if not reviewer:
                raise ApprovalError(400, "Bad request", "name the reviewer who decides")
            approval = service.decisions.decide_as(
                parts[1], reviewer, decision, edit, body.get("comment")
            )
        else:
            approval = service.decisions.decide(
                parts[1], bearer, decision, edit, reviewer or None, body.get("comment")
            )
        return _json(_approval_json(service, approval, approval.decided_by or ""))
    raise ApprovalError(404, "Not found", "no such API route")


def _approval_json(service: ApprovalService, approval: Any, reviewer: str) -> dict[str, Any]:
    view = service.view(approval, reviewer)
    return {
        "approval_id": approval.approval_id,
        "trace_id": approval.trace_id,
        "kind": approval.kind,
        "status": approval.status,
        "choices": [c.value for c in view.choices],
        "options": [
            {
                "value": c.value,
                "label": c.label,
                "applies_edit": c.applies_edit,
                "comment": c.comment,
            }
            for c in view.choices
        ],
        "editable": [
            {"name": f.name, "label": f.label, "kind": f.kind, "max_chars": f.max_chars}
            for f in view.editable
        ],
        "payload": approval.payload,
        "payload_hash": approval.payload_hash,
        "context": approval.context,
        "deadline": approval.deadline,
        "decision": approval.decision,
        "decided_by": approval.decided_by,
        "decided_at": approval.decided_at,
        "edited": approval.edited,
        "comment": approval.comment,
        "applied_payload": approval.applied_payload,
    }


def _is_api_key(service: ApprovalService, bearer: str | None) -> bool:
    key = service.config.api_key
    return bool(key and bearer and hmac.compare_digest(key.encode(), bearer.encode()))


def _require_api_key(service: ApprovalService, bearer: str | None) -> None:
    if not service.config.api_key:
        raise ApprovalError(404, "Not found", "the pending list is disabled (no INBOXFLOW_API_KEY)")
    if not _is_api_key(service, bearer):
        raise ApprovalError(401, "Unauthorized", "a valid API key is required")
