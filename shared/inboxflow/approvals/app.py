"""The approval HTTP function: review pages, decisions, deadlines and a JSON API.

| method | path                              | who                  | does                                  |
|--------|-----------------------------------|----------------------|---------------------------------------|
| GET    | /a/{id}?t=TOKEN                   | reviewer (email link)| review page; never changes state      |
| POST   | /a/{id}  (form: token, decision…) | reviewer             | records the decision, resumes         |
| POST   | /timeout (JSON approval_id)       | Cloud Tasks (OIDC)   | applies the timeout policy            |
| GET    | /api/approvals/{id}               | Bearer TOKEN         | the approval as JSON                  |
| POST   | /api/approvals/{id}/decision      | Bearer TOKEN or key  | decides (JSON in, JSON out)           |
| GET    | /api/pending?reviewer=R           | Bearer API key       | pending approvals of a reviewer       |

The function is public (the token is the credential), so the timeout
endpoint checks the task's OIDC token itself when verification is on; even
unverified, a timeout before the deadline only re-schedules.
"""

from __future__ import annotations

import hmac
import json
import logging
import os
from collections.abc import Mapping
from typing import Any

from flask import Request, Response

from .pages import render_decided, render_error, render_result, render_review
from .service import AlreadyDecided, ApprovalError, ApprovalService

log = logging.getLogger(__name__)

SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; img-src data:; "
        "frame-ancestors 'none'; base-uri 'none'"
    ),
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}
MAX_BODY_BYTES = 256 * 1024


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


def handle_http(request: Request, service: ApprovalService, verify_task: Any = None) -> Response:
    """Route one request of the approval function.

    Args:
        request: the Flask request functions-framework passes.
        service: the approval service.
        verify_task: ``(request) -> None`` raising ``ApprovalError`` when a timeout call
            is not from our Cloud Tasks queue (default: ``verify_task_oidc`` when enabled).
    """
    if request.content_length is not None and request.content_length > MAX_BODY_BYTES:
        return _html(render_error(413, "Too large", "this request is too large"), 413)
    parts = [p for p in request.path.split("/") if p]
    try:
        if len(parts) == 2 and parts[0] == "a":
            if request.method == "GET" or request.method == "HEAD":
                return _review_page(service, parts[1], request.args.get("t"))
            if request.method == "POST":
                return _decide_form(service, parts[1], request)
            return _html(render_error(405, "Not allowed", "use the link in the email"), 405)
        if parts == ["timeout"] and request.method == "POST":
            (verify_task or verify_task_oidc)(request)
            payload = request.get_json(silent=True) or {}
            approval_id = str(payload.get("approval_id", ""))
            result = service.on_timeout(approval_id, int(payload.get("hop", 0) or 0))
            return _json(result)
        if parts and parts[0] == "api":
            return _api(service, parts[1:], request)
    except AlreadyDecided as exc:
        service.publish_resume(exc.approval)
        if parts and parts[0] == "api":
            return _error_json(exc)
        return _html(render_decided(service.view(exc.approval, exc.approval.decided_by or "")), 409)
    except ApprovalError as exc:
        return _error_json(exc) if parts and parts[0] in ("api", "timeout") else _error_html(exc)
    return _html(render_error(404, "Not found", "there is nothing here"), 404)


def _review_page(service: ApprovalService, approval_id: str, token: str | None) -> Response:
    checked = service.check(approval_id, token)
    view = service.view(checked.approval, checked.token.reviewer)
    if checked.approval.status != "pending":
        return _html(render_decided(view))
    return _html(
        render_review(
            view,
            form_action=f"/a/{approval_id}",
            token=token or "",
            max_edit_chars=service.config.max_edit_chars,
        )
    )


def _decide_form(service: ApprovalService, approval_id: str, request: Request) -> Response:
    form = request.form
    token = form.get("token")
    decision = form.get("decision", "")
    edit = {name: form[name] for name in ("draft", "to", "subject") if name in form}
    approval = service.decide(approval_id, token, decision, edit or None)
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
        checked = service.check(parts[1], bearer)
        return _json(_approval_json(service, checked.approval, checked.token.reviewer))
    if len(parts) == 3 and parts[0] == "approvals" and parts[2] == "decision":
        if request.method != "POST":
            raise ApprovalError(405, "Not allowed", "POST a decision")
        body = request.get_json(silent=True)
        if not isinstance(body, dict):
            raise ApprovalError(400, "Bad request", "the body must be a JSON object")
        edit = body.get("edit")
        if edit is not None and not isinstance(edit, dict):
            raise ApprovalError(400, "Bad request", "edit must be an object")
        reviewer = body.get("reviewer")
        token = bearer
        if _is_api_key(service, bearer):
            approval = service.get(parts[1])
            if approval is None or not reviewer:
                raise ApprovalError(400, "Bad request", "name a reviewer of an existing approval")
            token = service.issue_link(approval, str(reviewer)).rsplit("t=", 1)[1]
        approval = service.decide(
            parts[1],
            token,
            str(body.get("decision", "")),
            edit,
            claimed_reviewer=str(reviewer) if reviewer else None,
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
        "payload": approval.payload,
        "payload_hash": approval.payload_hash,
        "context": approval.context,
        "deadline": approval.deadline,
        "decision": approval.decision,
        "decided_by": approval.decided_by,
        "decided_at": approval.decided_at,
        "edited": approval.edited,
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


def verify_task_oidc(request: Request) -> None:
    """Check the Cloud Tasks OIDC token of a timeout call (when ``INBOXFLOW_TASKS_VERIFY`` is on).

    On by default on Cloud Run (``K_SERVICE``), off locally, where the
    emulator sends no token. The token must be signed by Google, for our
    audience, and minted for the tasks-invoker service account.

    Raises:
        ApprovalError: 401 without a valid token, 403 for another account.
    """
    setting = os.environ.get("INBOXFLOW_TASKS_VERIFY")
    enabled = (
        setting.lower() in ("1", "true", "yes") if setting else bool(os.environ.get("K_SERVICE"))
    )
    if not enabled:
        return
    bearer = _bearer(request)
    if not bearer:
        raise ApprovalError(401, "Unauthorized", "an OIDC token is required")
    from google.auth.transport import requests as google_requests
    from google.oauth2 import id_token

    audience = os.environ.get("INBOXFLOW_TASKS_AUDIENCE") or os.environ.get(
        "INBOXFLOW_APPROVAL_URL"
    )
    try:
        claims = id_token.verify_oauth2_token(bearer, google_requests.Request(), audience)
    except ValueError as exc:
        raise ApprovalError(401, "Unauthorized", f"invalid OIDC token: {exc}") from exc
    expected = os.environ.get("INBOXFLOW_TASKS_INVOKER") or os.environ.get("INBOXFLOW_TASKS_SA")
    if expected and (claims.get("email") != expected or not claims.get("email_verified")):
        raise ApprovalError(403, "Forbidden", "the token is not from the tasks invoker")
