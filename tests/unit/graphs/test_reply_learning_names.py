"""A learnt greeting or note never carries the customer's name to another customer's draft:
the first name becomes ``{first_name}``, the rest of the name is left out, a greeting that
names them by another part only is not learnt, a note writes the name ``[name]`` (for the
offline rules and for a model's answer alike: ``settled``)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from inboxflow.graphs.reply_learning import WORD, name_words, settled, without_name
from inboxflow.graphs.reply_rules import response_rules

SALUTATIONS = ["Hi", "Hello", "Dear", "Guten Tag", "Bonjour", "Hola", "Dobrý den", "Hej"]
names = st.text(alphabet=st.characters(whitelist_categories=("Lu", "Ll")), min_size=2, max_size=12)


@pytest.mark.parametrize(
    ("line", "learnt"),
    [
        ("Guten Tag Sabine Keller,", "Guten Tag {first_name},"),
        ("Hello Sabine,", "Hello {first_name},"),
        ("Dear Ms Keller,", None),  # named by the surname only: not learnt
        ("Hi there,", "Hi there,"),
        ("Hello team,", "Hello team,"),
    ],
)
def test_a_greeting_keeps_only_the_first_name_as_a_placeholder(line, learnt):
    words = name_words({"first_name": "Sabine", "name": "Sabine Keller"})
    assert without_name(line, "Sabine", words) == learnt


@given(
    salutation=st.sampled_from(SALUTATIONS),
    first=names,
    last=names,
    with_last=st.booleans(),
    punctuation=st.sampled_from([",", "!", "", " ,"]),
)
def test_no_part_of_the_customers_name_is_learnt(salutation, first, last, with_last, punctuation):
    first, last = first.capitalize(), last.capitalize()
    line = f"{salutation} {first}{' ' + last if with_last else ''}{punctuation}"
    details = {"first_name": first, "name": f"{first} {last}"}
    learnt = settled({"greeting": line, "notes": [f"never: promise {last} a refund"]}, {}, details)
    words = name_words(details)
    for part in (learnt["greeting"], *learnt["notes"]):
        tokens = {t.casefold() for t in WORD.findall(part.replace("{first_name}", " "))}
        assert not tokens & words, part
    assert "{first_name}" in learnt["greeting"] or first.casefold() in {
        w.casefold() for w in salutation.split()
    }


def test_a_models_greeting_naming_the_customer_keeps_the_one_before():
    details = {"first_name": "Sabine", "name": "Sabine Keller"}
    answer = {"greeting": "Dear Ms Keller,", "sign_off": "Viele Grüße", "notes": []}
    kept = settled(answer, {"greeting": "Hi {first_name},"}, details)
    assert kept["greeting"] == "Hi {first_name},"
    assert kept["sign_off"] == "Viele Grüße"


def test_the_offline_rules_learn_the_style_not_the_name():
    before = "Hi Sabine,\n\nThanks for writing.\n\nBest regards,\nSupport"
    after = "Guten Tag Sabine Keller,\n\nDanke.\n\nViele Grüße,\nTobias"
    profile = {"greeting": "Hi {first_name},", "sign_off": "Best regards", "tone": "", "notes": []}
    import json

    update = response_rules(
        {
            "profile": json.dumps(profile),
            "details": json.dumps(
                {
                    "before": {"content": before},
                    "after": {"content": after},
                    "comment": "Never tell Sabine about the Rotterdam warehouse",
                    "first_name": "Sabine",
                    "name": "Sabine Keller",
                }
            ),
        }
    )
    assert update.profile.greeting == "Guten Tag {first_name},"
    assert "never: Never tell [name] about the Rotterdam warehouse" in update.profile.notes
