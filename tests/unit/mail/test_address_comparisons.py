"""Every comparison of addresses is by ``mail.addresses``: a look-alike that Unicode case
folding (``str.lower``, ``casefold``) takes for its ASCII model is another address to the
sender check, the parsed address, the CRM, the guest id, the mailbox registry, the owner's
preferences and the look-alike checks of the pipeline, the assistant and support."""

from __future__ import annotations

import json

import pytest

from inboxflow.adapters.embedded_crm import EmbeddedCRM
from inboxflow.graphs.assistant.offline import offline_triage
from inboxflow.graphs.assistant.senders import lookalike
from inboxflow.graphs.pipeline.senders import lookalike_reason
from inboxflow.graphs.support.crm import Customer, guest_customer
from inboxflow.graphs.support.senders import imitates
from inboxflow.ingest.mailboxes import normalise_address
from inboxflow.mail.addresses import address_key, address_key_or_none
from inboxflow.mail.authentication import SenderCheck
from inboxflow.mail.model import Address

KELVIN = "\u212a"  # lowercases to an ASCII k
KIM = "kim.lee@kelp.example"
LOOK_ALIKES = [
    f"{KELVIN}im.lee@kelp.example",  # the Kelvin sign in the local part
    f"kim.lee@{KELVIN}elp.example",  # ... in the domain (IDNA 2008 refuses it)
    "\uff4bim.lee@kelp.example",  # a fullwidth k
    "kim.lee@k\u0435lp.example",  # a Cyrillic e
]


@pytest.mark.parametrize("look_alike", LOOK_ALIKES)
def test_an_authenticated_look_alike_is_not_the_sender_expected(look_alike: str) -> None:
    assert not SenderCheck(look_alike, look_alike, "dmarc=pass").is_sender(KIM)
    assert not SenderCheck(KIM, KIM, "dmarc=pass").is_sender(look_alike)
    assert SenderCheck(KIM, KIM, "dmarc=pass").is_sender(" Kim.Lee@KELP.example ")


def test_a_parsed_address_keeps_what_only_unicode_lowercases() -> None:
    assert Address(address=f"kim.lee@{KELVIN}ELP.Example").address == f"kim.lee@{KELVIN}elp.example"
    assert Address(address="Kim.Lee@KELP.Example").address == "Kim.Lee@kelp.example"


@pytest.mark.parametrize("look_alike", LOOK_ALIKES)
def test_the_crm_and_the_guest_id_tell_a_look_alike_from_the_customer(look_alike: str) -> None:
    kim = Customer(
        customer_id="cus_kim",
        name="Kim Lee",
        email=KIM,
        plan="pro",
        tenure_months=3,
        seats=2,
        region="eu",
    )
    crm = EmbeddedCRM([kim])
    assert crm.find_by_email(look_alike) is None
    assert crm.find_by_email("KIM.LEE@kelp.EXAMPLE") == kim
    look_alike_key = address_key_or_none(look_alike) or look_alike
    assert guest_customer(look_alike_key).customer_id != guest_customer(KIM).customer_id
    assert guest_customer(address_key("Kim.Lee@Kelp.example")) == guest_customer(KIM)


def test_the_mailbox_registry_key_is_the_address_key() -> None:
    assert normalise_address(" <Desk@Kelp.Example> ") == "desk@kelp.example"
    assert normalise_address(f"des{KELVIN}@kelp.example") != "desk@kelp.example"
    with pytest.raises(ValueError, match="not a mailbox address"):
        normalise_address(f"desk@{KELVIN}elp.example")


@pytest.mark.parametrize("look_alike", LOOK_ALIKES)
def test_the_owner_s_preferences_are_not_a_look_alike_s(look_alike: str) -> None:
    preferences = {
        "ignore_senders": [],
        "ignore_domains": [],
        "notify_senders": [],
        "respond_senders": [KIM],
    }
    inputs = {
        "sender": look_alike,
        "preferences": json.dumps(preferences),
        "subject": "Lunch on Friday?",
        "body": "Are you free for lunch on Friday at noon?",
    }
    triage = offline_triage(inputs)
    assert "the owner answers" not in triage.reasoning
    assert (
        "the owner answers"
        in offline_triage({**inputs, "sender": "Kim.Lee@KELP.example"}).reasoning
    )


def test_a_domain_that_only_unicode_lowercases_to_ours_is_a_look_alike() -> None:
    ours, theirs = "kelp.example", f"{KELVIN}elp.example"
    assert imitates(theirs, ours) and not imitates("KELP.example", ours)
    assert lookalike(theirs, ours) and not lookalike("mail.kelp.example", ours)
    reason = lookalike_reason(f"maya@{theirs}", "Maya", f"maya@{ours}")
    assert reason is not None and "imitates" in reason
    assert lookalike_reason("maya@Mail.KELP.example", "Maya", f"maya@{ours}") is None


def test_the_support_and_assistant_checks_see_the_domain_as_written() -> None:
    from inboxflow.graphs.assistant.senders import unverified_reason
    from inboxflow.graphs.support.senders import domain_of
    from inboxflow.mail import Email

    assert domain_of(f"maya@{KELVIN}ELP.example") == f"{KELVIN}elp.example"
    email = Email.model_validate(
        {
            "message_id": "m1@x",
            "thread_id": "t1",
            "mailbox": "owner@kelp.example",
            "sender": {"address": f"maya@{KELVIN}elp.example"},
            "to": [{"address": "owner@kelp.example"}],
            "subject": "Invoice",
            "body_text": "Please pay.",
            "received_at": "2027-01-14T09:12:31+00:00",
        }
    )
    reason = unverified_reason(email, "owner@kelp.example", "mx.google.com")
    assert reason is not None and "imitates kelp.example" in reason


def test_a_look_alike_patient_sees_no_reservation_of_the_patient(tmp_path) -> None:
    from inboxflow.adapters.embedded_drugs import EmbeddedDrugs
    from inboxflow.adapters.sqlite_store import SqliteCheckpointStore

    store = SqliteCheckpointStore(tmp_path / "drugs.db")
    drugs = EmbeddedDrugs(store)
    name = next(d["name"] for d in drugs.drugs if not d.get("prescription"))
    made = drugs.reserve("Kim.Lee@Kelp.example", name, None, "k1")
    assert "error" not in made, made
    assert [r["reservation_id"] for r in drugs.reservations(KIM)] == [made["reservation_id"]]
    assert drugs.reservations(f"{KELVIN}im.lee@kelp.example") == []
    store.close()


def test_every_whitespace_and_control_character_makes_no_address() -> None:
    refused = [chr(c) for c in range(0x3100) if chr(c).isspace() or c < 0x20 or c == 0x7F]
    assert "\u3000" in refused and "\x85" in refused and "\u2028" in refused
    for char in refused:
        with pytest.raises(ValueError):
            address_key(f"kim{char}lee@example.com")
    for char in ("\u200b", "é", "_", "\u00ad"):  # not whitespace: the address is kept
        assert address_key(f"kim{char}lee@example.com") == f"kim{char}lee@example.com"
