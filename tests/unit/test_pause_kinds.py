"""Pause kinds as data: edit validation by field kind, labels filled from the pause's context."""

from __future__ import annotations

from typing import Any

import pytest

from inboxflow.engine.pause_kinds import (
    APPROVE_REJECT,
    Choice,
    EditableField,
    EditRejected,
    PauseKind,
    fill,
    hidden_characters,
    kind_of,
)
from inboxflow.graphs.pipeline.pauses import APPROVE_DRAFT_KIND, SAVES_DRAFT, SENDS

KIND = PauseKind(
    "k",
    "A kind",
    (Choice("ok", "OK", "primary", applies_edit=True),),
    editable=(
        EditableField("line", "Line", "line", max_chars=20),
        EditableField("text", "Text", "text", max_chars=50, required=True),
        EditableField("to", "To", "address"),
        EditableField("cc", "Cc", "addresses"),
    ),
)


@pytest.mark.parametrize(
    ("edit", "field", "fragment"),
    [
        pytest.param({"to": ["a@x.test"]}, "to", "must be text", id="list-address"),
        pytest.param({"text": ["x"]}, "text", "must be text", id="list-text"),
        pytest.param({"line": 5}, "line", "must be text", id="number"),
        pytest.param({"line": None}, "line", "must be text", id="null"),
        pytest.param({"to": "a@x.test, b@y.test"}, "to", "exactly one", id="two-addresses"),
        pytest.param({"to": "a@x.test;b@y.test"}, "to", "not one email address", id="semicolon"),
        pytest.param({"to": "not an address"}, "to", "not one email address", id="no-at"),
        pytest.param({"to": "a@b@c.test"}, "to", "not one email address", id="two-ats"),
        pytest.param({"to": "a@x.test\nBcc: e@x.test"}, "to", "one line", id="address-newline"),
        pytest.param({"cc": "a@x.test, nope"}, "cc", "not one email address", id="bad-in-list"),
        pytest.param({"line": "Hi\r\nBcc: e@x.test"}, "line", "U+000D", id="crlf"),
        pytest.param({"line": "Hi\u2028there"}, "line", "U+2028", id="line-separator"),
        pytest.param({"line": "Hi\u2029there"}, "line", "U+2029", id="paragraph-separator"),
        pytest.param({"line": "Hi\x85there"}, "line", "U+0085", id="next-line"),
        pytest.param({"line": "Hi\x0bthere"}, "line", "U+000B", id="vertical-tab"),
        pytest.param({"line": "Hi\x1cthere"}, "line", "U+001C", id="file-separator"),
        pytest.param({"line": "Hi\tthere"}, "line", "U+0009", id="tab"),
        pytest.param({"line": "Hi\x00"}, "line", "U+0000", id="nul"),
        pytest.param({"line": "Invoice\u202egnp.exe"}, "line", "U+202E", id="bidi-override"),
        pytest.param({"text": "a\x1b[31m"}, "text", "U+001B", id="escape-in-text"),
        pytest.param({"text": "pay\u202eexe.pdf"}, "text", "U+202E", id="bidi-in-text"),
        pytest.param(
            {"to": "sofia.marquez\u200b@x.test"}, "to", "U+200B", id="zero-width-in-address"
        ),
        pytest.param({"line": "Re\ufeff: x"}, "line", "U+FEFF", id="bom-in-line"),
        pytest.param({"line": "in\u00advoice"}, "line", "U+00AD", id="soft-hyphen-in-line"),
        pytest.param({"cc": "a@x.test, b\u2060@y.test"}, "cc", "U+2060", id="word-joiner"),
        pytest.param({"line": "a\u200cb"}, "line", "U+200C", id="zero-width-non-joiner"),
        pytest.param({"line": "a\u200db"}, "line", "U+200D", id="zero-width-joiner"),
        pytest.param({"text": "   \n "}, "text", "cannot be empty", id="required-blank"),
        pytest.param({"line": "x" * 21}, "line", "at most 20", id="too-long"),
        pytest.param({"nope": "x"}, "nope", "not an editable field", id="undeclared"),
    ],
)
def test_edits_are_refused_by_field_kind(edit: dict[str, Any], field: str, fragment: str) -> None:
    with pytest.raises(EditRejected) as refused:
        KIND.validate_edit(edit)

    assert refused.value.field == field
    assert fragment in str(refused.value)


def test_right_to_left_marks_stay_in_text_but_not_in_a_line() -> None:
    hebrew = "\u05e9\u05dc\u05d5\u05dd\u200f (order 42)\u200e\n\u0645\u0631\u062d\u0628\u0627\u061c"

    assert KIND.validate_edit({"text": hebrew}) == {"text": hebrew}
    with pytest.raises(EditRejected):
        KIND.validate_edit({"line": "\u05e9\u05dc\u05d5\u05dd\u200f"})
    with pytest.raises(EditRejected):
        KIND.validate_edit({"text": "\u05e9\u05dc\u05d5\u05dd\u2067x\u2069"})


def test_every_splitlines_separator_is_refused_in_a_line() -> None:
    separators = [c for c in map(chr, range(0x3000)) if len(f"a{c}b".splitlines()) > 1]
    assert len(separators) == 10
    for separator in separators:
        with pytest.raises(EditRejected):
            KIND.validate_edit({"line": f"a{separator}b"})


def test_good_edits_are_normalised() -> None:
    checked = KIND.validate_edit(
        {
            "line": "  Re: order  ",
            "text": "Hi\r\n\tthere\r\n",
            "to": "Ana Lima <ana@x.test>",
            "cc": "a@x.test, b@y.test",
        }
    )

    assert checked == {
        "line": "Re: order",
        "text": "Hi\n\tthere\n",
        "to": "Ana Lima <ana@x.test>",
        "cc": "a@x.test, b@y.test",
    }
    assert KIND.validate_edit({}) == {}


HOSTILE_SUBJECT = "Re: Invoice\u2028Bcc: all@x.test \u202egnp.exe\u200b\u00ad\x85 paid\u2029"


def test_an_email_derived_payload_is_cleaned_to_what_an_edit_of_it_must_be() -> None:
    payload = {
        "line": HOSTILE_SUBJECT,
        "text": "Hi\r\nthe bill\u2028is\u202e paid\x07 \U0001f468\u200d\U0001f469\tok",
        "to": "sofia.marquez\u200b@x.test",
        "shown": "from\u2028a\u202eb",
        "listed": ["a\u2029b", {"deep": "c\u202ed"}],
        "count": 3,
    }

    clean = KIND.clean_payload(payload)

    assert clean == {
        "line": "Re: Invoice Bcc: all",  # and cut to the field's 20 characters
        "text": "Hi\nthe bill\nis paid \U0001f468\u200d\U0001f469\tok",  # ZWJ stays in text
        "to": "sofia.marquez@x.test",
        "shown": "from ab",
        "listed": ["a b", {"deep": "cd"}],
        "count": 3,
    }
    editable = {name: clean[name] for name in ("line", "text", "to")}
    assert KIND.validate_edit(editable) == editable  # approving it unchanged passes
    assert KIND.clean_payload(clean) == clean


def test_too_long_is_marked_for_413() -> None:
    with pytest.raises(EditRejected) as refused:
        KIND.validate_edit({"text": "x" * 51})
    assert refused.value.too_long
    with pytest.raises(EditRejected) as bad:
        KIND.validate_edit({"line": "\n"})
    assert not bad.value.too_long


def test_labels_and_outcomes_are_filled_from_the_pause_context() -> None:
    saves = APPROVE_DRAFT_KIND.for_pause({"category": "complaint", **SAVES_DRAFT})
    sends = APPROVE_DRAFT_KIND.for_pause(SENDS)
    default = APPROVE_DRAFT_KIND.for_pause({})

    assert saves.choices[0].label == default.choices[0].label == "Approve and save as draft"
    assert (
        "Drafts" in saves.choices[0].outcome[1] and "Nothing is sent" in saves.choices[0].outcome[1]
    )
    assert sends.choices[0].label == "Approve and send"
    assert sends.choices[0].outcome == (
        "Approved \N{EN DASH} the reply goes out",
        SENDS["approved_detail"],
    )
    assert (
        APPROVE_DRAFT_KIND.choices[0].label == "Approve and {on_approve}"
    )  # the declaration stays


def test_fill_leaves_unknown_and_broken_fields_as_written() -> None:
    assert fill("Approve and {action}", {}) == "Approve and {action}"
    assert fill("{a} {b.c} {", {"a": "x"}) == "{a} {b.c} {"
    assert fill("{a}", {"a": "{b}", "b": "no"}) == "{b}"  # values are not templates


def test_an_undeclared_kind_is_plain_approve_reject() -> None:
    kind = kind_of({}, "some_future_kind")

    assert kind.name == "some_future_kind"
    assert kind.values == APPROVE_REJECT.values == ("approve", "reject")
    assert kind.editable == ()
    with pytest.raises(EditRejected):
        kind.validate_edit({"draft": "x"})


def test_hidden_characters_are_named() -> None:
    assert hidden_characters("a\u200bb\u202ec\td\ne\x00") == ["U+200B", "U+202E", "U+0000"]
    assert hidden_characters("plain text, café") == []


@pytest.mark.parametrize(
    "to",
    [
        '"x@evil.example" <kim@example.com>',
        '"kim@example.com" <evil@evil.example>',
        "kim@example.com <evil@evil.example>",
        '"x" <evil@ex\uff41mple.com>',  # a fullwidth a: no domain IDNA 2008 allows
    ],
)
def test_an_address_edit_dispatch_would_refuse_is_refused_here(to: str) -> None:
    """Issue 39, item 7: the page said "Approved" for an edit dispatch then refused."""
    with pytest.raises(EditRejected) as refused:
        KIND.validate_edit({"to": to})
    assert refused.value.field == "to"


def test_every_address_edit_accepted_is_one_the_bindings_accept() -> None:
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from inboxflow.engine.bindings import address_of

    names = st.text(alphabet=st.sampled_from('ab x@."\\<>,;:()'), max_size=12)
    addresses = st.sampled_from(["kim@example.com", "evil@evil.example", "a@b.cz"])

    @settings(max_examples=300, deadline=None)
    @given(names, addresses, st.booleans())
    def check(name: str, address: str, quoted: bool) -> None:
        value = f'"{name}" <{address}>' if quoted else f"{name} <{address}>"
        try:
            KIND.validate_edit({"to": value})
        except EditRejected:
            return
        assert address_of(value) == address, value

    check()
