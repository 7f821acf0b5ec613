"""Look-alike senders (``inboxflow.graphs.lookalike``): one confusables table and one detector
for the pipeline, the assistant and the support desk (each graph's policy is tested with the graph)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from inboxflow.graphs.lookalike import (
    MAX_VARIANTS,
    _distance,
    disguised_word,
    resemblance,
    skeleton,
    variants,
)


@pytest.mark.parametrize(
    ("sender", "measure"),
    [
        ("brlghtpath.example", "same_look"),
        ("brightpath-example.com", "runs_on"),
        ("quilfield.example", "letters_near"),
        ("brightpath-payments.com", "holds_name"),
    ],
)
def test_a_resemblance_says_how_a_domain_resembles_a_known_one(sender: str, measure: str) -> None:
    known = "quillfield.example" if sender.startswith("quil") else "brightpath.example"
    found = resemblance(sender, known)
    assert found is not None and getattr(found, measure) is True


def test_the_known_domain_and_its_subdomains_resemble_nothing() -> None:
    assert resemblance("brightlane.io", "brightlane.io") is None
    assert resemblance("mail.brightlane.io", "brightlane.io") is None
    assert resemblance("", "brightlane.io") is None
    assert resemblance("brightlane.co", "brightlane.io").name_edits == 0  # type: ignore[union-attr]
    assert resemblance("brightlane.co", "ab.io").name_edits is None  # type: ignore[union-attr]


def test_look_alike_characters_read_as_the_letters_they_pass_for() -> None:
    assert skeleton("Micros0ft") == "microsoft"
    assert skeleton("PayPaI") == "paypal"
    assert skeleton("rnicrosoft") == "microsoft"
    assert disguised_word("Micros0ft Account Team") == ("Micros0ft", "microsoft")
    assert disguised_word("Studio 42 B2B Supplies") is None


def test_variants_are_one_swap_away_in_the_tables_order() -> None:
    assert variants("brlghtpath.example") == ["brightpath.example"]
    assert variants("northw1nd.example") == [
        "northvv1nd.example",
        "northwlnd.example",
        "northwind.example",
        "n0rthw1nd.example",
    ]
    assert len(variants("oooooooooooooo.example")) == MAX_VARIANTS


def _reference_distance(a: str, b: str) -> int:
    """Levenshtein distance cell by cell (what ``_distance`` computed before it went a column
    at a time)."""
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]


@settings(max_examples=2000, deadline=None)
@given(st.text(alphabet="abcl1iéx", max_size=14), st.text(alphabet="abcl1iéx", max_size=14))
def test_the_edit_distance_is_levenshteins(a: str, b: str) -> None:
    assert _distance(a, b) == _reference_distance(a, b)
    assert _distance("brightlane", "brlghtlane") == 1 and _distance("kitten", "sitting") == 3


def test_a_resemblance_is_asked_once_per_pair() -> None:
    resemblance.cache_clear()
    first = resemblance("brightlane-io.com", "brightlane.io")
    assert resemblance("brightlane-io.com", "brightlane.io") is first
    assert resemblance.cache_info().hits == 1
