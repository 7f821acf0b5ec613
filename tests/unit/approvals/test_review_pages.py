"""The review pages and the notification email: hostile email content is rendered inert."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from html.parser import HTMLParser
from typing import Any

import pytest

from inboxflow.approvals.pages import (
    ApprovalView,
    render_decided,
    render_error,
    render_notification,
    render_pending,
    render_result,
    render_review,
)
from inboxflow.engine.pause_kinds import APPROVE_REJECT, Choice, PauseKind, kind_of
from inboxflow.graphs.pipeline.pauses import APPROVE_DRAFT_KIND, SENDS

TRIAGE = PauseKind(
    "triage_decision",
    "Decide what to do with an email",
    (
        Choice("respond", "Respond", "primary", ("Respond", "A reply is drafted."), True),
        Choice("notify", "Notify me", comment="optional", comment_label="Instruction"),
        Choice("ignore", "Ignore", "danger", comment="required", comment_label="Instruction"),
    ),
)
"""A kind declared only here: the pages know nothing of it."""

TOKEN = "tok_9f8e7d6c5b4a39281706f5e4d3c2b1a0"
LINK = f"https://approvals.example.com/approvals/apr_1?token={TOKEN}"
ACTION = "/approvals/apr_1"

HOSTILE_SUBJECT = "<script>alert(1)</script>"
HOSTILE_SENDER = 'Mallory "><svg onload=alert(3)> <mallory@evil.example>'
HOSTILE_BODY = (
    "Hello <img src=x onerror=alert(2)>\n"
    "Click <a href=\"javascript:alert('x')\">here</a>\n"
    "Template: {{ 7*7 }} {% for x in range(3) %}loop{% endfor %}\n"
    "</pre></textarea><script>alert(4)</script>\n"
)
HOSTILE_DRAFT = "Dear customer,\n</textarea><script>alert(5)</script>\n{{ 7*7 }}\nBye"


def make_view(kind: PauseKind = APPROVE_DRAFT_KIND, **changes: Any) -> ApprovalView:
    shown = kind.for_pause(changes.pop("context", {}))
    view = ApprovalView(
        approval_id="apr_1",
        kind=kind.name,
        title=kind.title,
        status="pending",
        reviewer="maria@acme.example",
        sender="Jordan Lee <jordan@example.com>",
        subject="Order 4471 arrived damaged",
        received_at="2025-07-07T09:14:00Z",
        email_text="My order arrived broken.\nPlease help.",
        category="complaint",
        confidence=0.62,
        reasons=["complaints are always approved by a human", "confidence 0.62 is below 0.80"],
        payload={"draft": "Hi Jordan,\nSorry!", "to": "jordan@example.com", "subject": "Re: Order"},
        choices=list(shown.choices),
        editable=kind.editable,
        deadline="2025-07-08T09:14:00Z",
        decided_by=None,
        decision=None,
        decided_at=None,
        trace_id="tr_1",
        notification=kind.notification,
        payload_title=kind.payload_title,
    )
    return dataclasses.replace(view, **changes)


def hostile_view(**changes: Any) -> ApprovalView:
    return make_view(
        subject=HOSTILE_SUBJECT,
        sender=HOSTILE_SENDER,
        email_text=HOSTILE_BODY,
        reasons=["flagged: <b onmouseover=alert(6)>prompt_injection</b>"],
        category="<i>complaint</i>",
        payload={"draft": HOSTILE_DRAFT, "to": '"><script>alert(7)</script>', "subject": "Re: <x>"},
        **changes,
    )


class Document(HTMLParser):
    """Every element with its attributes, the text, and the text inside each textarea."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.elements: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []
        self.textareas: list[str] = []
        self._in_textarea = False
        self.feed(html)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append((tag, dict(attrs)))
        if tag == "textarea":
            self._in_textarea = True
            self.textareas.append("")

    def handle_endtag(self, tag: str) -> None:
        if tag == "textarea":
            self._in_textarea = False

    def handle_data(self, data: str) -> None:
        self.text.append(data)
        if self._in_textarea:
            self.textareas[-1] += data

    def tags(self, name: str) -> list[dict[str, str | None]]:
        return [attrs for tag, attrs in self.elements if tag == name]

    @property
    def all_text(self) -> str:
        return "".join(self.text)


def assert_inert(html: str) -> Document:
    """No script, no event handler, no javascript: URL, nothing loaded from elsewhere."""
    document = Document(html)
    names = {tag for tag, _ in document.elements}
    assert not names & {
        "script",
        "iframe",
        "object",
        "embed",
        "img",
        "link",
        "base",
        "meta-refresh",
    }
    for tag, attrs in document.elements:
        for name, value in attrs.items():
            assert not name.startswith("on"), f"event handler {name} on <{tag}>"
            if name in ("href", "src", "action", "formaction", "xlink:href"):
                assert value is not None
                assert not value.strip().lower().startswith(("javascript:", "data:"))
        if tag == "meta":
            assert attrs.get("http-equiv") is None
    return document


# --- review page ---------------------------------------------------------------------------


def test_review_page_renders_hostile_email_inert_and_literal() -> None:
    html = render_review(hostile_view(), form_action=ACTION, token=TOKEN, max_edit_chars=5000)

    document = assert_inert(html)
    text = document.all_text
    assert HOSTILE_SUBJECT in text
    assert "Hello <img src=x onerror=alert(2)>" in text
    assert "Click <a href=\"javascript:alert('x')\">here</a>" in text
    assert "</pre></textarea><script>alert(4)</script>" in text
    assert "flagged: <b onmouseover=alert(6)>prompt_injection</b>" in text
    assert HOSTILE_SENDER in text
    # template syntax in the email is text, not evaluated
    assert "{{ 7*7 }}" in text
    assert "{% for x in range(3) %}loop{% endfor %}" in text
    assert "49" not in text
    assert "looplooploop" not in text
    # the only anchors are none at all: a link in the email never becomes one
    assert document.tags("a") == []


def test_review_page_textarea_holds_the_draft_exactly() -> None:
    html = render_review(hostile_view(), form_action=ACTION, token=TOKEN, max_edit_chars=5000)

    document = Document(html)
    assert document.textareas == [HOSTILE_DRAFT, ""]  # the draft, then the empty comment box
    inputs = {attrs.get("name"): attrs for attrs in document.tags("input")}
    assert inputs["to"]["value"] == '"><script>alert(7)</script>'
    assert inputs["subject"]["value"] == "Re: <x>"


def test_review_page_form_posts_token_decision_and_edit() -> None:
    html = render_review(make_view(), form_action=ACTION, token=TOKEN, max_edit_chars=1234)

    document = assert_inert(html)
    (form,) = document.tags("form")
    assert form["method"] == "post"
    assert form["action"] == ACTION
    inputs = {attrs.get("name"): attrs for attrs in document.tags("input")}
    assert inputs["form"] == {"type": "hidden", "name": "form", "value": TOKEN}
    # text, not type=email: browsers would refuse "Name <address>", which the server accepts
    assert inputs["to"]["type"] == "text" and inputs["to"]["inputmode"] == "email"
    assert inputs["subject"]["maxlength"] == "998"
    textarea, comment = document.tags("textarea")  # the comment: what the drafts learn
    assert (textarea["name"], comment["name"]) == ("draft", "comment")
    assert textarea["maxlength"] == "1234"
    assert document.textareas == ["Hi Jordan,\nSorry!", ""]
    buttons = document.tags("button")
    assert [(b["name"], b["value"], b["type"]) for b in buttons] == [
        ("decision", "approve", "submit"),
        ("decision", "reject", "submit"),
    ]


@pytest.mark.parametrize(
    "kind",
    [APPROVE_DRAFT_KIND, TRIAGE, APPROVE_REJECT, kind_of({}, "some_future_kind")],
    ids=lambda kind: kind.name,
)
def test_every_choice_renders_a_button(kind: PauseKind) -> None:
    view = make_view(kind, payload={"action": "refund 20 EUR"})

    document = assert_inert(
        render_review(view, form_action=ACTION, token=TOKEN, max_edit_chars=100)
    )

    buttons = document.tags("button")
    assert [button["value"] for button in buttons] == [choice.value for choice in view.choices]
    assert all(button["name"] == "decision" for button in buttons)
    for choice in view.choices:
        assert choice.label in document.all_text
        assert f"btn-{choice.style}" in next(
            button["class"] or "" for button in buttons if button["value"] == choice.value
        )
    # a payload without the declared fields is shown read-only, with nothing to edit
    assert {attrs["name"] for attrs in document.tags("textarea")} <= {"comment"}
    assert "refund 20 EUR" in document.all_text
    assert view.title in document.all_text


def test_choices_that_take_a_comment_get_a_comment_box() -> None:
    document = assert_inert(
        render_review(make_view(TRIAGE), form_action=ACTION, token=TOKEN, max_edit_chars=100)
    )

    (comment,) = document.tags("textarea")
    assert comment["name"] == "comment"
    text = " ".join(document.all_text.split())
    assert "Instruction" in text and "Ignore (required)" in text
    # without such a choice, no comment box
    quiet = PauseKind(
        "quiet",
        "Approve a reply",
        (Choice("approve", "Approve", "primary", applies_edit=True), Choice("reject", "Reject")),
        editable=APPROVE_DRAFT_KIND.editable,
    )
    plain = Document(
        render_review(make_view(quiet), form_action=ACTION, token=TOKEN, max_edit_chars=100)
    )
    assert [attrs["name"] for attrs in plain.tags("textarea")] == ["draft"]


def test_the_primary_button_says_what_approving_does() -> None:
    saves = make_view()
    sends = make_view(context=SENDS)

    assert [c.label for c in saves.choices] == ["Approve and save as draft", "Reject"]
    assert [c.label for c in sends.choices] == ["Approve and send", "Reject"]
    page = Document(render_review(saves, form_action=ACTION, token=TOKEN, max_edit_chars=100))
    assert "Approve and save as draft" in page.all_text and "Approve and send" not in page.all_text
    result = Document(render_result(dataclasses.replace(saves, decision="approve", decided_by="m")))
    assert "saved as a draft" in result.all_text and "goes out" not in result.all_text


def test_review_page_shows_why_and_deadline() -> None:
    document = Document(
        render_review(make_view(), form_action=ACTION, token=TOKEN, max_edit_chars=100)
    )

    text = " ".join(document.all_text.split())
    assert "for maria@acme.example" in text
    assert "Decide by 8 Jul 2025, 09:14 UTC" in text
    assert "62%" in text
    assert "complaint" in text
    assert "confidence 0.62 is below 0.80" in text
    assert "Jordan Lee <jordan@example.com>" in text
    assert "My order arrived broken.\nPlease help." in document.all_text


def test_read_only_draft_has_no_edit_fields() -> None:
    document = Document(
        render_review(make_view(editable=()), form_action=ACTION, token=TOKEN, max_edit_chars=100)
    )

    # only the decision's comment box (the reply kinds take one), no field of the draft
    assert [attrs["name"] for attrs in document.tags("textarea")] == ["comment"]
    assert {attrs.get("name") for attrs in document.tags("input")} == {"form"}
    assert "Hi Jordan,\nSorry!" in document.all_text


def test_review_page_error_message_is_escaped() -> None:
    html = render_review(
        make_view(),
        form_action=ACTION,
        token=TOKEN,
        max_edit_chars=100,
        error="The edit is longer than 100 characters <script>x</script>",
    )

    document = assert_inert(html)
    assert "The edit is longer than 100 characters <script>x</script>" in document.all_text


@pytest.mark.parametrize(
    "deadline",
    [
        "2025-07-08T09:14:00Z",
        "2025-07-08T11:14:00+02:00",
        "2025-07-08 09:14 UTC",
        "2025-07-08T09:14",
    ],
)
def test_deadline_formats_read_the_same(deadline: str) -> None:
    html = render_review(
        make_view(deadline=deadline), form_action=ACTION, token=TOKEN, max_edit_chars=100
    )

    assert "Decide by 8 Jul 2025, 09:14 UTC" in " ".join(Document(html).all_text.split())


def test_a_deadline_that_is_not_a_timestamp_is_shown_as_is() -> None:
    html = render_review(
        make_view(deadline="tomorrow <noon>"), form_action=ACTION, token=TOKEN, max_edit_chars=100
    )

    assert "Decide by tomorrow <noon>" in " ".join(assert_inert(html).all_text.split())


@pytest.mark.parametrize(
    "action",
    ["javascript:alert(1)", "//evil.example/steal", "data:text/html,x", "/a b", "ftp://x/y"],
)
def test_form_action_must_be_a_path_or_http_url(action: str) -> None:
    with pytest.raises(ValueError):
        render_review(make_view(), form_action=action, token=TOKEN, max_edit_chars=100)


def test_invisible_and_bidi_characters_are_shown_not_dropped() -> None:
    view = make_view(
        subject="Invoice\u202egnp.exe\x00\x1b[31m",
        sender="a\u2066b@example.com",
        payload={"draft": "Hi\u200b there", "to": "a@x.test", "subject": "Re: x"},
    )

    html = render_review(view, form_action=ACTION, token=TOKEN, max_edit_chars=100)

    for character in ("\u202e", "\x00", "\x1b", "\u2066", "\u200b"):
        assert character not in html
    document = Document(html)
    assert "Invoice⟨U+202E⟩gnp.exe⟨U+0000⟩⟨U+001B⟩[31m" in document.all_text
    assert "a⟨U+2066⟩b@example.com" in document.all_text
    assert document.textareas == ["Hi⟨U+200B⟩ there", ""]
    text = " ".join(document.all_text.split())
    assert "contains invisible or direction-changing characters" in text
    subject, body, _ = render_notification(view, link=LINK)
    assert "⟨U+202E⟩" in subject and "⟨U+200B⟩" in body


def test_pages_load_nothing_from_elsewhere() -> None:
    pages = [
        render_review(make_view(), form_action=ACTION, token=TOKEN, max_edit_chars=100),
        render_decided(make_view(decision="approve", decided_by="sam@acme.example")),
        render_result(make_view(decision="approve", decided_by="maria@acme.example")),
        render_error(404, "Not found", "No such approval."),
        render_pending("maria@acme.example", [(make_view(), "/approvals/apr_1?token=x")]),
    ]
    for html in pages:
        assert "http://" not in html and "https://" not in html
        assert "@import" not in html and "url(" not in html
        assert '<meta name="referrer" content="no-referrer">' in html
        assert_inert(html)


# --- decided, result, error ----------------------------------------------------------------


def test_decided_page_names_who_decided_what_and_when() -> None:
    view = hostile_view(
        status="approved",
        decision="reject",
        decided_by="sam@acme.example",
        decided_at="2025-07-07T10:02:33+00:00",
    )

    html = render_decided(view)

    document = assert_inert(html)
    text = " ".join(document.all_text.split())
    assert "Already decided" in text
    assert "sam@acme.example chose Reject on 7 Jul 2025, 10:02 UTC" in text
    assert HOSTILE_SUBJECT in document.all_text
    assert TOKEN not in html
    assert document.tags("form") == [] and document.tags("input") == []


@pytest.mark.parametrize("decision", [None, "needs_review"])
def test_decided_without_a_reviewer_says_so(decision: str | None) -> None:
    view = make_view(status="needs_review", decision=decision, decided_at="2025-07-08T09:14:00Z")

    html = render_decided(view)

    text = " ".join(Document(html).all_text.split())
    assert "Closed: needs_review" in text
    assert "Decided without a reviewer (needs_review) on 8 Jul 2025, 09:14 UTC" in text
    assert 'class="badge warn"' in html


def test_result_page_after_approve_shows_the_reply_that_goes_out() -> None:
    edited = {"draft": "Edited <b>reply</b>", "to": "jordan@example.com", "subject": "Re: Order"}
    view = make_view(
        context=SENDS, payload=edited, decision="approve", decided_by="maria@acme.example"
    )

    document = assert_inert(render_result(view))

    assert "Approved \N{EN DASH} the reply goes out" in document.all_text
    assert "Edited <b>reply</b>" in document.all_text
    assert document.tags("b") == []


def test_result_page_after_reject_shows_no_reply() -> None:
    view = make_view(decision="reject", decided_by="maria@acme.example")

    document = assert_inert(render_result(view))

    assert "Rejected" in document.all_text
    assert "Nothing is sent" in document.all_text
    assert "Hi Jordan," not in document.all_text


def test_error_page_shows_only_what_it_is_given() -> None:
    html = render_error(403, "This link is not valid", "Ask for a <new> link.")

    document = assert_inert(html)
    assert "Error 403" in document.all_text
    assert "This link is not valid" in document.all_text
    assert "Ask for a <new> link." in document.all_text
    assert TOKEN not in html
    assert document.tags("form") == []


# --- notification email --------------------------------------------------------------------


def test_notification_carries_link_email_draft_and_deadline() -> None:
    subject, text, html = render_notification(make_view(), link=LINK)

    assert subject == "Approve reply to Jordan Lee <jordan@example.com>: Order 4471 arrived damaged"
    for part in (text, " ".join(Document(html).all_text.split())):
        assert "8 Jul 2025, 09:14 UTC" in part
        assert "complaint" in part and "62%" in part
        assert "confidence 0.62 is below 0.80" in part
    assert LINK in text
    assert "> My order arrived broken.\n> Please help." in text
    assert "Hi Jordan,\nSorry!" in text
    document = assert_inert(html)
    assert [a["href"] for a in document.tags("a")] == [LINK]
    assert "My order arrived broken.\nPlease help." in document.all_text


def test_notification_of_hostile_email() -> None:
    _, text, html = render_notification(hostile_view(), link=LINK)

    # HTML part: inert, the content shown literally, no form that could act
    document = assert_inert(html)
    assert document.tags("form") == [] and document.tags("button") == []
    assert document.tags("input") == [] and document.tags("textarea") == []
    assert HOSTILE_SUBJECT in document.all_text
    assert "Hello <img src=x onerror=alert(2)>" in document.all_text
    assert HOSTILE_DRAFT in document.all_text
    assert "49" not in document.all_text and "{{ 7*7 }}" in document.all_text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    # text part: literal, not HTML-escaped, and the template syntax not evaluated
    assert "Subject:  <script>alert(1)</script>" in text
    assert "> Hello <img src=x onerror=alert(2)>" in text
    assert "&lt;" not in text and "49" not in text
    assert LINK in text


def test_notification_subject_is_one_bounded_header_line() -> None:
    view = make_view(subject="Hi\r\nBcc: everyone@example.com\r\n\r\nbody" + "x" * 500)

    subject, _, _ = render_notification(view, link=LINK)

    assert "\r" not in subject and "\n" not in subject
    assert "Bcc: everyone@example.com" in subject
    assert len(subject) < 200
    assert subject.endswith("…")


def test_notification_clips_a_long_email_but_keeps_the_draft() -> None:
    view = make_view(email_text="line of the email\n" * 2000)

    _, text, html = render_notification(view, link=LINK)

    assert text.count("> line of the email") < 300
    assert "more characters on the review page" in text
    assert "The rest is on the review page." in html
    assert "Hi Jordan,\nSorry!" in text


@pytest.mark.parametrize("link", ["javascript:alert(1)", "/approvals/apr_1", "https://a b/"])
def test_notification_link_must_be_an_absolute_http_url(link: str) -> None:
    with pytest.raises(ValueError):
        render_notification(make_view(), link=link)


# --- pending list --------------------------------------------------------------------------


def test_pending_list_links_each_approval() -> None:
    first = hostile_view(approval_id="apr_1")
    second = make_view(TRIAGE, approval_id="apr_2")

    html = render_pending(
        "maria@acme.example", [(first, "/approvals/apr_1?t=1"), (second, "/approvals/apr_2?t=2")]
    )

    document = assert_inert(html)
    assert [a["href"] for a in document.tags("a")] == [
        "/approvals/apr_1?t=1",
        "/approvals/apr_2?t=2",
    ]
    assert "2 waiting for you" in document.all_text
    assert HOSTILE_SUBJECT in document.all_text
    assert "Decide what to do with an email" in document.all_text


def test_pending_list_empty() -> None:
    document = assert_inert(render_pending("maria@acme.example", []))

    assert "Nothing waiting for you" in document.all_text
    assert document.tags("a") == []


# --- cold start ----------------------------------------------------------------------------


def test_importing_pages_does_not_import_jinja2() -> None:
    code = (
        "import sys, inboxflow.approvals.pages as pages; "
        "print('jinja2' in sys.modules); pages.render_error(500, 't', 'm'); "
        "print('jinja2' in sys.modules)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert result.stdout.split() == ["False", "True"]
