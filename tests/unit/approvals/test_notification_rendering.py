"""The notification's text part quotes the email in Python (``pages._quoted``), not by a
template loop per line: the same bytes as the loop it replaced, on any email text."""

from __future__ import annotations

from pathlib import Path

import jinja2
from hypothesis import given, settings
from hypothesis import strategies as st

import inboxflow.approvals.pages as pages
from inboxflow.approvals.pages import render_notification

from .test_review_pages import HOSTILE_BODY, LINK, hostile_view, make_view

LOOP = (
    "{% for line in email_text.text.splitlines() %}\n"
    "> {{ line }}\n"
    "{% endfor %}\n"
    "{% if email_text.clipped %}"
)
"""How notification.txt quoted the email before (session 14): one template loop a line."""


def loop_rendering(view: pages.ApprovalView) -> str:
    """The text part as the template with the old loop renders it."""
    source = (Path(pages.__file__).parent / "templates" / "notification.txt").read_text()
    assert source.count("{{ quoted }}{% if email_text.clipped %}") == 1
    old = source.replace("{{ quoted }}{% if email_text.clipped %}", LOOP)
    email_text = pages._clip(view.email_text, pages._NOTIFICATION_BODY_CHARS)
    environment = pages._environment()
    # an overlay keeps the filters, the finalize and the autoescaping (none for ``.txt``)
    loader = jinja2.DictLoader({"old_notification.txt": old})
    return (
        environment.overlay(loader=loader)
        .get_template("old_notification.txt")
        .render(
            view=view,
            link=LINK,
            fields=pages._fields(view),
            details=pages._details(view),
            email_text=email_text,
            by_email=True,
        )
    )


# hidden characters, the line breaks ``splitlines`` knows, markup and template syntax
LINE_BREAKS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
HIDDEN = "\x00\x07\x1f\x7f\x9f\u00ad\u061c\u200b\u200f\u202e\u2066\ufeff"
MARKUP = ["<script>alert(1)</script>", "{{ 7*7 }}", "{% endfor %}", "&amp;", "> ", "\r\n"]
TEXTS = st.lists(
    st.one_of(
        st.text(alphabet=st.sampled_from(LINE_BREAKS + HIDDEN + "ab <>&\"'é€"), max_size=12),
        st.sampled_from(MARKUP),
        st.text(max_size=20),
    ),
    max_size=12,
).map("".join)


@settings(max_examples=300, deadline=None)
@given(TEXTS)
def test_the_quoted_email_is_the_loops_byte_for_byte(text: str) -> None:
    view = make_view(email_text=text)
    assert render_notification(view, link=LINK)[1] == loop_rendering(view)


def test_hostile_clipped_and_empty_emails_render_as_the_loop_did() -> None:
    long_text = (HOSTILE_BODY + "\u202eline\r\n") * 200  # over the 4,000 characters kept
    for view in (hostile_view(), make_view(email_text=long_text), make_view(email_text="")):
        text = render_notification(view, link=LINK)[1]
        assert text == loop_rendering(view)
    assert (
        "> Hello <img src=x onerror=alert(2)>\n"
        in render_notification(hostile_view(), link=LINK)[1]
    )
