"""Matching a person: their address wherever it is written but not inside another address; an
identifier as a whole value or one separated part; redaction drops what names them."""

from __future__ import annotations

import pytest

from inboxflow.mail.addresses import address_key
from inboxflow.personal.matching import (
    ERASED,
    Identifiers,
    id_matches,
    matching_keys,
    mentioning,
    redact,
)
from inboxflow.schema import ANYWHERE, DOCUMENT_ID, PersonKey


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("Jana <Jana.Novak@Example.org>", True),
        ("from jana.novak@example.org.", True),
        ("xjana.novak@example.org", False),
        ("jana.novak@example.org.uk", False),
        ("jana.novak@example.organic", False),
        ("ajana.novak@example.org", False),
    ],
)
def test_the_address_is_found_in_text_but_not_inside_another(text: str, found: bool) -> None:
    person = Identifiers("jana.novak@example.org")
    assert bool(person.pattern.search(text)) is found


LOOK_ALIKES = [
    "kim.lee@gma\u0131l.com",  # dotless i
    "k\u0131m.lee@gmail.com",
    "kim.\u017fee@gmail.com",  # long s
    "\u212aim.lee@gmail.com",  # Kelvin sign
    "\uff4bim.lee@gmail.com",  # fullwidth k
    "kim.lee@gm\u0430il.com",  # Cyrillic a
    "kim.lee@gmail.c\u03bfm",  # Greek omicron
    "k\u0456m.lee@gmail.com",  # Cyrillic i
]


@pytest.mark.parametrize("look_alike", LOOK_ALIKES)
def test_a_look_alike_never_finds_the_address_it_imitates(look_alike: str) -> None:
    real = Identifiers("kim.lee@gmail.com")
    assert not real.names("address", f"From: Kim <{look_alike}>")
    assert redact({"to": [look_alike]}, real) == {"to": [look_alike]}
    impostor = Identifiers(look_alike)
    for written in ("kim.lee@gmail.com", "KIM.LEE@GMAIL.COM", "Kim <Kim.Lee@Gmail.com>"):
        assert not impostor.names("address", written)
    assert impostor.names("address", look_alike.upper() if look_alike.isascii() else look_alike)


def test_the_long_s_is_not_an_s() -> None:
    assert not Identifiers("sara.lee@example.org").names("address", "\u017fara.lee@example.org")
    assert not Identifiers("\u017fara.lee@example.org").names("address", "SARA.lee@example.org")


@pytest.mark.parametrize("refused", ["kim.lee@gmai\u017f.com", "kim.lee@\uff47mail.com"])
def test_a_domain_idna_refuses_is_no_person(refused: str) -> None:
    with pytest.raises(ValueError):
        Identifiers(refused)


def test_an_international_domain_is_found_however_it_is_written() -> None:
    person = Identifiers("Jana@B\u00fccher.de")
    assert person.names("address", "jana@xn--bcher-kva.de")
    assert person.names("address", "JANA@b\u00fccher.de")
    assert not person.names("address", "jana@bucher.de")


def test_a_bad_address_is_refused() -> None:
    for bad in ("", "jana", "jana@", "two words@example.org", "a@b@c.org"):
        with pytest.raises(ValueError, match="not an email address"):
            Identifiers(bad)
    assert Identifiers(" <Jana@Example.ORG> ").address == address_key("jana@example.org")


@pytest.mark.parametrize(
    ("value", "found"),
    [
        ("abc123", True),
        ("abc123:4:notify-0", True),
        ("abc123-6-d0", True),
        ("support@x.io:abc123", True),
        ("abc1234", False),
        ("xabc123:1", False),
    ],
)
def test_an_identifier_is_a_whole_value_or_a_separated_part(value: str, found: bool) -> None:
    assert id_matches(value, "abc123") is found


def test_keys_match_only_where_declared() -> None:
    person = Identifiers("jana@example.org")
    person.add("trace_id", "t1")
    doc = {"trace_id": "t1", "nested": {"to": ["jana@example.org"]}}
    keys = (PersonKey("trace_id", "trace_id"), PersonKey("address", "nested.to"))
    assert [k.kind for k in matching_keys("d", doc, keys, person)] == ["trace_id", "address"]
    assert matching_keys("d", doc, (PersonKey("address", "trace_id"),), person) == []
    assert matching_keys("t1:0:x", {}, (PersonKey("trace_id", DOCUMENT_ID),), person)
    assert matching_keys("d", doc, (PersonKey("address", ANYWHERE),), person)


def test_redaction_drops_entries_that_name_the_person_and_keeps_the_rest() -> None:
    person = Identifiers("jana@example.org")
    person.add("trace_id", "t1")
    memory = {
        "profile": {"ignore_senders": ["jana@example.org", "bob@example.org"], "tone": "brief"},
        "why": "the owner ignored mail from jana@example.org once",
        "sources": [{"source": "t1:3", "version": 1}, {"source": "t2:3", "version": 2}],
    }
    assert redact(memory, person) == {
        "profile": {"ignore_senders": ["bob@example.org"], "tone": "brief"},
        "why": f"the owner ignored mail from {ERASED} once",
        "sources": [{"source": "t2:3", "version": 2}],
    }


def test_the_text_of_their_mail_is_their_long_lines_and_is_erased_where_repeated() -> None:
    person = Identifiers("jana@example.org")
    body = "Hi,\nWe were charged twice for January.\n> an older quoted line of theirs\nJana"
    assert person.add("mail_text", body)
    assert not person.add("mail_text", body)  # nothing new
    assert person.of("mail_text") == {
        "We were charged twice for January.",
        "an older quoted line of theirs",
    }
    quoting = "Omar here.\n> We were charged twice for January.\nHi,\nJana"
    assert person.names("mail_text", quoting)
    assert not person.names("mail_text", "Hi,\nJana")  # short lines are anybody's
    assert redact({"body": quoting}, person) == {"body": f"Omar here.\n> {ERASED}\nHi,\nJana"}
    assert mentioning({"body": quoting, "from": "omar@example.net"}, person) == {
        "body": "We were charged twice for January."
    }


def test_a_trace_is_about_the_writer_of_the_message_it_forwards() -> None:
    """Issue 37: a forward's writer (``Email.writer``) is a party of the email, like its sender."""
    from inboxflow.mail import email_from_json
    from inboxflow.schema import TRACES

    email = email_from_json(
        {
            "from": "dana@forwarder.example",
            "to": "desk@brightlane.io",
            "subject": "Fwd: prices",
            "body": "---------- Forwarded message ---------\nFrom: Jana <jana@example.org>\n"
            "Date: Mon, 9 Nov 2026 at 10:15\nSubject: prices\nTo: dana@forwarder.example\n\n"
            "How much is it?",
        }
    )
    doc = {"state": {"email": email.model_dump(mode="json")}}
    assert TRACES.personal is not None
    found = matching_keys("t1", doc, TRACES.personal.found_by, Identifiers("jana@example.org"))
    assert [key.field for key in found] == ["state.email.writer.address"]
