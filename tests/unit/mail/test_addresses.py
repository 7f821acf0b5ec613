"""One identity for an address: ASCII case only, IDNA 2008 domains, no Unicode folding."""
# ruff: noqa: RUF001, RUF003  (the confusable characters are what these tests are about)

from __future__ import annotations

import string

import pytest
from hypothesis import given
from hypothesis import strategies as st

from inboxflow.mail.addresses import (
    address_key,
    address_key_or_none,
    domain_key,
    domain_key_or_none,
    same_address,
    within_domain,
)

_LOCAL = st.text(alphabet=string.ascii_letters + string.digits + ".+_-", min_size=1, max_size=20)
_LABEL = st.text(alphabet=string.ascii_letters + string.digits, min_size=1, max_size=12)


@given(_LOCAL, st.lists(_LABEL, min_size=2, max_size=4))
def test_ascii_case_and_brackets_never_change_the_key(local: str, labels: list[str]) -> None:
    address = f"{local}@{'.'.join(labels)}"
    assert address_key(f"  <{address.upper()}> ") == address_key(address) == address.lower()


# Each look-alike differs from kim.lee@gmail.com by one character that Unicode case folding,
# NFKC or re.IGNORECASE would take for its ASCII model.
LOOK_ALIKES = [
    "kim.lee@gmaıl.com",  # dotless ı
    "kım.lee@gmail.com",  # dotless ı in the local part
    "kim.lee@gmaiſ.com",  # long s (refused by IDNA 2008)
    "kim.ſee@gmail.com",  # long s in the local part
    "\u212aim.lee@gmail.com",  # Kelvin sign
    "kim.lee@gmai\u217c.com",  # roman numeral fifty (refused by IDNA 2008)
    "ｋｉｍ.lee@gmail.com",  # fullwidth local part
    "kim.lee@ｇｍａｉｌ.com",  # fullwidth domain (refused)
    "kim.lee@gmаil.com",  # Cyrillic а
    "kim.lee@gmail.cοm",  # Greek ο
    "kіm.lee@gmail.com",  # Cyrillic і in the local part
    "KİM.LEE@GMAIL.COM",  # dotted capital İ
]


@pytest.mark.parametrize("look_alike", LOOK_ALIKES)
def test_a_look_alike_is_another_person(look_alike: str) -> None:
    assert not same_address(look_alike, "kim.lee@gmail.com")
    assert address_key_or_none(look_alike) != "kim.lee@gmail.com"


def test_an_international_domain_is_one_key_however_written() -> None:
    assert address_key("Jana@Bücher.de") == address_key("jana@xn--bcher-kva.de")
    assert address_key("jana@bücher.de.") == "jana@xn--bcher-kva.de"
    assert domain_key("gmaıl.com") == "xn--gmal-nza.com"


@pytest.mark.parametrize(
    "value",
    [
        "",
        "kim",
        "kim@",
        "@gmail.com",
        "kim lee@gmail.com",
        "kim@gmail",
        "kim@gmail..com",
        "kim@gmail.com\r\nBcc: x@y.z",
        "a@b@gmail.com",
        "kim@ｇｍａｉｌ.com",
    ],
)
def test_what_is_not_one_address_is_refused(value: str) -> None:
    with pytest.raises(ValueError):
        address_key(value)
    assert not same_address(value, value)


LOOK_ALIKE_DOMAINS = sorted(
    {a.rpartition("@")[2] for a in LOOK_ALIKES} - {"gmail.com", "GMAIL.COM"}
)


@pytest.mark.parametrize("look_alike", LOOK_ALIKE_DOMAINS)
def test_a_look_alike_domain_is_not_within_the_one_it_imitates(look_alike: str) -> None:
    assert not within_domain(look_alike, "gmail.com")
    assert not within_domain(f"mail.{look_alike}", "gmail.com")


def test_a_domain_is_within_itself_and_its_parents_only() -> None:
    assert within_domain("Mail.Example.ORG.", "example.org")
    assert within_domain("b\u00fccher.de", "xn--bcher-kva.de")
    assert not within_domain("example.org", "mail.example.org")
    assert not within_domain("badexample.org", "example.org")
    assert not within_domain("\u212aelp.com", "kelp.com")  # the Kelvin sign
    assert domain_key_or_none("\uff4belp.com") is None and not within_domain("", "")


def test_the_or_none_keys_give_none_for_none_and_for_what_their_key_refuses() -> None:
    assert address_key_or_none(None) is None and address_key_or_none("not an address") is None
    assert domain_key_or_none(None) is None and domain_key_or_none("a..b") is None
    assert address_key_or_none(" <Kim.Lee@Example.COM> ") == "kim.lee@example.com"
    assert domain_key_or_none("Bücher.DE.") == "xn--bcher-kva.de"
