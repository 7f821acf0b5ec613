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
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import lru_cache
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from ..engine.pause_kinds import Choice, EditableField, PauseKind, fill, hidden_characters

if TYPE_CHECKING:
    import jinja2

    from ..engine.waits import Approval

PRODUCT_NAME = "inboxflow"

_NOTIFICATION_BODY_CHARS = 4000
_REVIEW_BODY_CHARS = 100_000
_SUBJECT_CHARS = 120

# C0/C1 controls (but tab and newlines), bidi marks/overrides/isolates and zero-width
# characters: they can hide or reorder what a reviewer reads. Pages show each one as a
# visible marker (e.g. "⟨U+202E⟩") instead of dropping it silently.
_HIDDEN = re.compile(
    "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u00ad\u061c\u200b-\u200f"
    "\u202a-\u202e\u2060\u2066-\u2069\ufeff]"
)


@dataclass(frozen=True)
class ApprovalView:
    """Everything the pages show about one approval, for one reviewer.

    Attributes:
        approval_id: the approval record's id.
        kind: the pause kind's name.
        title: the kind's title (the page's eyebrow).
        status: the record's status (``pending`` or a decided/closed status).
        reviewer: the reviewer this page or email is for.
        sender: the email's sender.
        subject: the email's subject.
        received_at: when the email arrived (ISO 8601 or display text).
        email_text: the email's body as plain text.
        category: the classifier's category, if any.
        confidence: the classifier's confidence in [0, 1], if any.
        reasons: why a human must decide.
        payload: what is decided on (as approved, once decided).
        choices: the buttons offered, labels filled from the pause's context.
        editable: the payload fields the reviewer may edit.
        deadline: when the timeout policy applies (ISO 8601 or display text).
        decided_by: who decided, once decided.
        decision: the decision value, once decided.
        decided_at: when it was decided (ISO 8601 or display text).
        trace_id: the trace that waits on this approval.
        comment: the reviewer's comment, once decided.
        notification: the reviewer email's subject, ``{title}``, ``{sender}`` and
            ``{subject}`` to be filled in.
        payload_title: the heading above the payload.
    """

    approval_id: str
    kind: str
    title: str
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
    editable: tuple[EditableField, ...]
    deadline: str
    decided_by: str | None
    decision: str | None
    decided_at: str | None
    trace_id: str
    comment: str | None = None
    notification: str = "{title}: {subject}"
    payload_title: str = "What you decide on"

    def choice(self, value: str | None) -> Choice | None:
        """The choice called ``value``, or None."""
        return next((c for c in self.choices if c.value == value), None)


def view_of(approval: Approval, kind: PauseKind, reviewer: str) -> ApprovalView:
    """The page model of ``approval`` as ``reviewer`` sees it, from its declared ``kind``.

    ``kind`` is the kind as this pause shows it (``PauseKind.for_pause``).
    """

    def when(ts: float | None) -> str | None:
        if ts is None:
            return None
        return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%d %H:%M UTC")

    context = approval.context
    return ApprovalView(
        approval_id=approval.approval_id,
        kind=approval.kind,
        title=kind.title,
        status=approval.status,
        reviewer=reviewer,
        sender=str(context.get("sender", "")),
        subject=str(context.get("subject", "")),
        received_at=str(context.get("received_at", "")),
        email_text=str(context.get("email_text", "")),
        category=context.get("category"),
        confidence=context.get("confidence"),
        reasons=[str(r) for r in context.get("reasons", [])],
        payload=dict(approval.applied_payload or approval.payload),
        choices=list(kind.choices),
        editable=kind.editable,
        deadline=when(approval.deadline) or "",
        decided_by=approval.decided_by,
        decision=approval.decision if approval.status == "decided" else approval.status,
        decided_at=when(approval.decided_at or approval.timed_out_at),
        trace_id=approval.trace_id,
        comment=approval.comment,
        notification=kind.notification,
        payload_title=kind.payload_title,
    )


def render_review(
    view: ApprovalView,
    *,
    form_action: str,
    token: str,
    max_edit_chars: int,
    error: str | None = None,
    back: str | None = None,
) -> str:
    """The review page (GET): the email, why it needs a human, the payload, the choices.

    The form posts ``form`` (the short-lived form token, never the link's
    token), ``decision`` (the pressed button's value), each editable field by
    its name and, when a choice takes one, ``comment``.

    Args:
        view: the approval to show.
        form_action: where the form posts: a path or an http(s) URL.
        token: the page's form token, sent back as a hidden field.
        max_edit_chars: the most characters a multi-line field takes.
        error: a message shown above the form (e.g. after a refused edit).
        back: a link back to where the reviewer came from (the inbox), or None.

    Returns:
        The HTML page.

    Raises:
        ValueError: if ``form_action`` or ``back`` is not a path or an http(s) URL.
    """
    return _render(
        "review.html",
        back=_checked_url(back) if back else None,
        view=view,
        form_action=_checked_url(form_action),
        token=token,
        max_edit_chars=max_edit_chars,
        error=error,
        fields=_fields(view),
        details=_details(view),
        hidden=_hidden_in(view),
        commented=[c for c in view.choices if c.comment != "none"],
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
        chosen=view.choice(view.decision),
        fields=_fields(view),
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
    email_text = _clip(view.email_text, _NOTIFICATION_BODY_CHARS)
    context = {
        "view": view,
        "link": link,
        "fields": _fields(view),
        "details": _details(view),
        "email_text": email_text,
        "quoted": _quoted(email_text["text"]),
        # replies decide approve/accept/reject only (approvals/replies.py)
        "by_email": any(c.value in ("approve", "accept", "reject") for c in view.choices),
    }
    text = _render("notification.txt", **context)
    html = _render("notification.html", **context)
    return _notification_subject(view), text, html


def render_reply_help(view: ApprovalView, *, link: str, why: str) -> tuple[str, str, str]:
    """The email that tells a reviewer how to answer a review by email (their reply was not
    understood, so nothing was decided).

    Args:
        view: the approval.
        link: a fresh review page URL for the reviewer.
        why: why the reply was not understood.

    Returns:
        ``(subject, text, html)``.

    Raises:
        ValueError: if ``link`` is not an http(s) URL.
    """
    link = _checked_url(link, absolute=True)
    subject = "Not decided: " + _notification_subject(view)
    context = {"view": view, "link": link, "why": " ".join(_clean(why).split())}
    return (
        " ".join(subject.split())[: 2 * _SUBJECT_CHARS],
        _render("reply_help.txt", **context),
        _render("reply_help.html", **context),
    )


def render_digest(
    reviewer: str,
    counts: Mapping[str, int],
    *,
    link: str,
    valid_minutes: int,
    daily: bool = False,
    overdue: int = 0,
) -> tuple[str, str, str]:
    """A reviewer's digest: how many decisions wait, per graph, and one link to their inbox.

    Args:
        reviewer: whom it is for.
        counts: pending approvals per graph, in display order.
        link: the single-use sign-in URL of their inbox.
        valid_minutes: how long the link works.
        daily: the daily summary (else: a digest of new approvals).
        overdue: how many of them are past their deadline.

    Returns:
        ``(subject, text, html)``; the subject carries no link.

    Raises:
        ValueError: if ``link`` is not an http(s) URL.
    """
    link = _checked_url(link, absolute=True)
    total = sum(counts.values())
    waits = "decision waits" if total == 1 else "decisions wait"
    subject = f"{'Daily summary: ' if daily else ''}{total} {waits} for you"
    context = {
        "reviewer": reviewer,
        "counts": dict(counts),
        "total": total,
        "overdue": overdue,
        "daily": daily,
        "link": link,
        "subject": subject,
        "sign_in_minutes": valid_minutes,
    }
    return subject, _render("digest.txt", **context), _render("digest.html", **context)


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


def render_inbox_page(template: str, **context: Any) -> str:
    """One of the inbox's pages (``inbox*.html``), autoescaped like every page.

    Raises:
        ValueError: ``template`` is not an inbox page.
    """
    if not re.fullmatch(r"inbox(_[a-z_]+)?\.html", template):
        raise ValueError(f"not an inbox page: {template!r}")
    return _render(template, **context)


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
        auto_reload=False,  # templates ship in the package: no stat of the file per render
    )
    environment.filters["when"] = _when
    environment.filters["percent"] = _percent
    environment.filters["clean"] = _clean
    environment.globals.update(product=PRODUCT_NAME, choice_label=_choice_label)
    return environment


def _render(template: str, **context: Any) -> str:
    return _environment().get_template(template).render(**context)


def _finalize(value: Any) -> Any:
    """Applied to every ``{{ }}`` output before escaping: show hidden characters visibly.

    Markup (a macro's output) is left alone: its values were cleaned when it was rendered.
    """
    if isinstance(value, str) and not hasattr(value, "__html__"):
        return _clean(value)
    return value


def _clean(value: str) -> str:
    """``value`` with each hidden character replaced by a visible ``⟨U+XXXX⟩`` marker."""
    return _HIDDEN.sub(lambda match: f"\u27e8U+{ord(match.group()):04X}\u27e9", value)


def _hidden_in(view: ApprovalView) -> list[str]:
    """The hidden characters (``U+XXXX``) in what the reviewer reads, once each."""
    texts = [view.sender, view.subject, view.email_text]
    texts += [v for v in view.payload.values() if isinstance(v, str)]
    return list(dict.fromkeys(name for text in texts for name in hidden_characters(text)))


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


def _choice_label(view: ApprovalView, value: str | None) -> str:
    choice = view.choice(value)
    return choice.label if choice is not None else value or ""


def _outcome(view: ApprovalView) -> tuple[str, str]:
    if view.decision is None or view.decided_by is None:
        closed_as = view.decision or view.status
        return (f"Closed: {closed_as}", f"No reviewer decided; it was closed as {closed_as}.")
    choice = view.choice(view.decision)
    if choice is None:
        return (f"Decision recorded: {view.decision}", "")
    return choice.outcome


def _fields(view: ApprovalView) -> list[dict[str, Any]]:
    """The declared editable fields present in the payload, in declaration order."""
    return [
        {"spec": spec, "value": _text(view.payload.get(spec.name))}
        for spec in view.editable
        if spec.name in view.payload
    ]


def _details(view: ApprovalView) -> list[tuple[str, str]]:
    """Payload entries that are not editable fields, as (key, text) rows."""
    shown = {spec.name for spec in view.editable}
    return [(str(key), _text(value)) for key, value in view.payload.items() if key not in shown]


def _text(value: Any) -> str:
    import json

    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value, indent=2, ensure_ascii=False)


def _clip(text: str, limit: int) -> dict[str, Any]:
    return {"text": text[:limit], "clipped": len(text) > limit, "total": len(text)}


def _quoted(text: str) -> str:
    """``text``'s lines as a reply quotes them: ``> `` before each, a newline after each.

    Built in one join rather than by a template loop per line (a third of a notification's
    rendering): the same characters, and ``_finalize`` cleaning the whole is cleaning each
    line, as ``> `` and the newlines hold no hidden character (``splitlines`` has already
    taken out the ones it splits on).
    """
    return "".join([f"> {line}\n" for line in text.splitlines()])


def _notification_subject(view: ApprovalView) -> str:
    # One header line: no line break of any kind (header injection; str.split() splits on
    # every one, U+2028 too), hidden characters shown, bounded length.
    subject = " ".join(_clean(view.subject).split()) or "(no subject)"
    if len(subject) > _SUBJECT_CHARS:
        subject = subject[: _SUBJECT_CHARS - 1] + "…"
    sender = " ".join(_clean(view.sender).split())
    line = fill(view.notification, {"title": view.title, "sender": sender, "subject": subject})
    return " ".join(_clean(line).split())[: 2 * _SUBJECT_CHARS]


def _checked_url(url: str, *, absolute: bool = False) -> str:
    """Refuse anything but http(s) URLs (and, unless ``absolute``, paths): no ``javascript:``."""
    parts = urlsplit(url)
    if _HIDDEN.search(url) or any(character.isspace() for character in url):
        raise ValueError("a link must not contain spaces or control characters")
    if parts.scheme in ("http", "https") and parts.netloc:
        return url
    if not absolute and not parts.scheme and not parts.netloc and url.startswith(("/", "?")):
        return url
    raise ValueError(f"not an http(s) link{'' if absolute else ' or path'}: {url[:40]!r}")
