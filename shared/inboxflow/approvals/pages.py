"""What reviewers see: the review page, its result and error pages, and the notification email.

Every page is rendered from a jinja2 template under ``templates/`` with
autoescaping on, so email content (sender, subject, body, the draft) can never
become markup. The pages need no JavaScript and load nothing from elsewhere:
they work under the approval function's policy
``default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; img-src data:;
frame-ancestors 'none'``, and the decision is a plain form POST.

Importing this module is cheap; jinja2 is imported and the template
environment built on the first render.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import urlsplit

if TYPE_CHECKING:
    import jinja2

PRODUCT_NAME = "inboxflow"

ChoiceStyle = Literal["primary", "danger", "neutral"]


@dataclass(frozen=True)
class Choice:
    """One decision a reviewer can take: a button on the review page.

    Attributes:
        value: what the form posts as ``decision`` (``approve``, ``reject``, ...).
        label: the button text.
        style: ``primary`` for the expected action, ``danger`` for the one that
            stops the trace, ``neutral`` for the others.
    """

    value: str
    label: str
    style: ChoiceStyle


CHOICES: dict[str, list[Choice]] = {
    "approve_draft": [
        Choice("approve", "Approve and send", "primary"),
        Choice("reject", "Reject", "danger"),
    ],
    "triage_decision": [
        Choice("respond", "Respond", "primary"),
        Choice("notify", "Notify me", "neutral"),
        Choice("ignore", "Ignore", "neutral"),
    ],
    "review_action": [
        Choice("approve", "Approve", "primary"),
        Choice("reject", "Reject", "danger"),
    ],
}
"""The choices each pause kind offers, in button order."""

_DEFAULT_CHOICES = [Choice("approve", "Approve", "primary"), Choice("reject", "Reject", "danger")]

_KIND_TITLES = {
    "approve_draft": "Approve a reply",
    "triage_decision": "Decide what to do with an email",
    "review_action": "Approve an action",
}

# Shown after a decision, keyed by (kind, decision); the first line is the headline.
_OUTCOMES = {
    ("approve_draft", "approve"): (
        "Approved \N{EN DASH} the reply goes out",
        "The reply below is sent now.",
    ),
    ("approve_draft", "reject"): ("Rejected", "Nothing is sent. The email stays in the inbox."),
    ("review_action", "approve"): ("Approved", "The action below runs now."),
    ("review_action", "reject"): ("Rejected", "The action does not run."),
    ("triage_decision", "respond"): (
        "Respond \N{EN DASH} a reply is prepared",
        "The agent drafts a reply.",
    ),
    ("triage_decision", "notify"): ("Notify \N{EN DASH} you will be told", "No reply is sent."),
    ("triage_decision", "ignore"): ("Ignored", "No reply is sent."),
}

_NOTIFICATION_BODY_CHARS = 4000
_REVIEW_BODY_CHARS = 100_000
_SUBJECT_CHARS = 120

# C0/C1 controls (but tab and newlines) and bidi overrides/isolates: they can hide or reorder
# what a reviewer reads (e.g. a subject that displays differently from what it says).
_INVISIBLE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


@dataclass(frozen=True)
class ApprovalView:
    """Everything the pages show about one approval, for one reviewer.

    Attributes:
        approval_id: the approval record's id.
        kind: the pause kind (``approve_draft``, ``triage_decision``, ...).
        status: the record's status (``pending`` or a decided/closed status).
        reviewer: the reviewer this page or email is for.
        sender: the email's sender.
        subject: the email's subject.
        received_at: when the email arrived (ISO 8601 or display text).
        email_text: the email's body as plain text.
        category: the classifier's category, if any.
        confidence: the classifier's confidence in [0, 1], if any.
        reasons: why a human must decide.
        payload: what is approved; for ``approve_draft`` ``{"draft", "to", "subject"}``.
        choices: the buttons offered (see ``choices_for``).
        editable: whether the reviewer may edit the draft.
        deadline: when the timeout policy applies (ISO 8601 or display text).
        decided_by: who decided, once decided.
        decision: the decision value, once decided.
        decided_at: when it was decided (ISO 8601 or display text).
        trace_id: the trace that waits on this approval.
    """

    approval_id: str
    kind: str
    status: str
    reviewer: str
    sender: str
    subject: str
    received_at: str
    email_text: str
    category: str | None
    confidence: float | None
    reasons: list[str]
    payload: dict[str, Any]
    choices: list[Choice]
    editable: bool
    deadline: str
    decided_by: str | None
    decision: str | None
    decided_at: str | None
    trace_id: str


def choices_for(kind: str) -> list[Choice]:
    """The choices a pause kind offers.

    Args:
        kind: the pause kind.

    Returns:
        A new list of the kind's choices; approve / reject for an unknown kind.
    """
    return list(CHOICES.get(kind, _DEFAULT_CHOICES))


def render_review(
    view: ApprovalView,
    *,
    form_action: str,
    token: str,
    max_edit_chars: int,
    error: str | None = None,
) -> str:
    """The review page (GET): the email, why it needs a human, the draft, the choices.

    The form posts ``token``, ``decision`` (the pressed button's value) and,
    when ``view.editable``, the edited ``draft``, ``to`` and ``subject``.

    Args:
        view: the approval to show.
        form_action: where the form posts: a path or an http(s) URL.
        token: the reviewer's token, sent back as a hidden field.
        max_edit_chars: ``maxlength`` of the draft edit box.
        error: a message shown above the form (e.g. after a refused edit).

    Returns:
        The HTML page.

    Raises:
        ValueError: if ``form_action`` is not a path or an http(s) URL.
    """
    return _render(
        "review.html",
        view=view,
        form_action=_checked_url(form_action),
        token=token,
        max_edit_chars=max_edit_chars,
        error=error,
        draft=_draft(view),
        details=_details(view),
        email_text=_clip(view.email_text, _REVIEW_BODY_CHARS),
    )


def render_decided(view: ApprovalView) -> str:
    """The "already decided" page: who decided what, when.

    Shown for a GET on a decided approval and for a POST that came too late.

    Args:
        view: the decided (or closed) approval.

    Returns:
        The HTML page.
    """
    return _render("decided.html", view=view, outcome=_outcome(view))


def render_result(view: ApprovalView) -> str:
    """The page after a successful decision, e.g. "Approved" and the reply that goes out.

    Args:
        view: the approval with ``decision`` set and the payload as approved
            (including the reviewer's edit).

    Returns:
        The HTML page.
    """
    return _render(
        "result.html",
        view=view,
        outcome=_outcome(view),
        draft=_draft(view),
        details=_details(view),
    )


def render_error(status: int, title: str, message: str) -> str:
    """An error page (invalid, expired or used link, bad request...).

    It shows only what it is given: never pass the token or request content.

    Args:
        status: the HTTP status code, shown small.
        title: the headline, e.g. "This link has expired".
        message: what happened and what the reader can do.

    Returns:
        The HTML page.
    """
    return _render("error.html", status=status, title=title, message=message)


def render_notification(view: ApprovalView, *, link: str) -> tuple[str, str, str]:
    """The email that asks a reviewer to decide.

    It carries the email, the draft, why it needs a human, the deadline and a
    link to the review page. It has no form: mail scanners open links, and
    opening the review page (a GET) never changes anything.

    Args:
        view: the approval.
        link: the reviewer's review page URL (with their token).

    Returns:
        ``(subject, text, html)``; the text part is complete on its own.

    Raises:
        ValueError: if ``link`` is not an http(s) URL.
    """
    link = _checked_url(link, absolute=True)
    context = {
        "view": view,
        "link": link,
        "draft": _draft(view),
        "details": _details(view),
        "email_text": _clip(view.email_text, _NOTIFICATION_BODY_CHARS),
    }
    text = _render("notification.txt", **context)
    html = _render("notification.html", **context)
    return _notification_subject(view), text, html


def render_pending(reviewer: str, items: list[tuple[ApprovalView, str]]) -> str:
    """A reviewer's list of pending approvals, each with its review link.

    Args:
        reviewer: whose list this is.
        items: ``(approval, review link)`` pairs, in display order.

    Returns:
        The HTML page.

    Raises:
        ValueError: if a link is not a path or an http(s) URL.
    """
    rows = [(view, _checked_url(link)) for view, link in items]
    return _render("pending.html", reviewer=reviewer, items=rows)


# --- rendering ------------------------------------------------------------------------


@lru_cache(maxsize=1)
def _environment() -> jinja2.Environment:
    import jinja2

    environment = jinja2.Environment(
        loader=jinja2.PackageLoader("inboxflow.approvals", "templates"),
        # Escape everything but the plain-text mail part: there, "&lt;" would be shown as such.
        autoescape=lambda name: name is None or not name.endswith(".txt"),
        undefined=jinja2.StrictUndefined,
        finalize=_finalize,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    environment.filters["when"] = _when
    environment.filters["percent"] = _percent
    environment.filters["clean"] = _clean
    environment.globals.update(
        product=PRODUCT_NAME,
        kind_title=_kind_title,
        choice_label=_choice_label,
    )
    return environment


def _render(template: str, **context: Any) -> str:
    return _environment().get_template(template).render(**context)


def _finalize(value: Any) -> Any:
    """Applied to every ``{{ }}`` output before escaping: drop invisible characters.

    Markup (a macro's output) is left alone: its values were cleaned when it was rendered.
    """
    if isinstance(value, str) and not hasattr(value, "__html__"):
        return _clean(value)
    return value


def _clean(value: str) -> str:
    return _INVISIBLE.sub("", value)


def _when(value: str | float | None) -> str:
    """A timestamp as "7 Jul 2025, 17:47 UTC"; text that is not one is shown unchanged.

    Accepts ISO 8601 (``2025-07-07T17:47:00Z``), ``2025-07-07 17:47 UTC`` and epoch seconds.
    """
    if value is None or value == "":
        return ""
    if isinstance(value, int | float):
        moment = datetime.fromtimestamp(value, UTC)
    else:
        try:
            moment = datetime.fromisoformat(value.removesuffix(" UTC").replace("Z", "+00:00"))
        except ValueError:
            return value
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    moment = moment.astimezone(UTC)
    return f"{moment.day} {moment:%b %Y, %H:%M} UTC"


def _percent(value: float) -> str:
    return f"{round(value * 100)}%"


def _kind_title(kind: str) -> str:
    return _KIND_TITLES.get(kind, "Approval needed")


def _choice_label(view: ApprovalView, value: str | None) -> str:
    for choice in view.choices or choices_for(view.kind):
        if choice.value == value:
            return choice.label
    return value or ""


def _outcome(view: ApprovalView) -> tuple[str, str]:
    if view.decision is None or view.decided_by is None:
        closed_as = view.decision or view.status
        return (f"Closed: {closed_as}", f"No reviewer decided; it was closed as {closed_as}.")
    default = (f"Decision recorded: {_choice_label(view, view.decision)}", "")
    return _OUTCOMES.get((view.kind, view.decision), default)


def _draft(view: ApprovalView) -> dict[str, str] | None:
    """The draft reply in the payload, if it has one."""
    if "draft" not in view.payload:
        return None
    return {
        "body": str(view.payload.get("draft") or ""),
        "to": str(view.payload.get("to") or ""),
        "subject": str(view.payload.get("subject") or ""),
    }


def _details(view: ApprovalView) -> list[tuple[str, str]]:
    """Payload entries other than the draft, as (key, text) rows."""
    import json

    shown = {"draft", "to", "subject"} if "draft" in view.payload else set()
    rows = []
    for key, value in view.payload.items():
        if key in shown:
            continue
        text = value if isinstance(value, str) else json.dumps(value, indent=2, ensure_ascii=False)
        rows.append((str(key), text))
    return rows


def _clip(text: str, limit: int) -> dict[str, Any]:
    return {"text": text[:limit], "clipped": len(text) > limit, "total": len(text)}


def _notification_subject(view: ApprovalView) -> str:
    # One header line: no CR/LF (header injection), no invisible characters, bounded length.
    subject = " ".join(_clean(view.subject).split()) or "(no subject)"
    if len(subject) > _SUBJECT_CHARS:
        subject = subject[: _SUBJECT_CHARS - 1] + "…"
    sender = " ".join(_clean(view.sender).split())
    if view.kind == "approve_draft":
        return f"Approve reply to {sender}: {subject}"
    return f"{_kind_title(view.kind)}: {subject}"


def _checked_url(url: str, *, absolute: bool = False) -> str:
    """Refuse anything but http(s) URLs (and, unless ``absolute``, paths): no ``javascript:``."""
    parts = urlsplit(url)
    if _INVISIBLE.search(url) or any(character.isspace() for character in url):
        raise ValueError("a link must not contain spaces or control characters")
    if parts.scheme in ("http", "https") and parts.netloc:
        return url
    if not absolute and not parts.scheme and not parts.netloc and url.startswith(("/", "?")):
        return url
    raise ValueError(f"not an http(s) link{'' if absolute else ' or path'}: {url[:40]!r}")
