"""The agent's escalation vocabulary, by family of wording (issue 30's held-out set):
paraphrases in neither ``evals/`` nor ``evals/holdout/``, in each language."""

from __future__ import annotations

import pytest

from inboxflow.graphs.agent.cues import cues

UNHAPPY = [
    "I phoned twice and nobody answered; frankly I am fed up.",
    "Ich bin verärgert, in Ihrer Filiale antwortet niemand.",
    "Jsem naštvaná, na můj dotaz nikdo neodpověděl.",
    "Je suis en colère, personne ne répond à la pharmacie.",
    "Estoy harta, nadie contesta el teléfono.",
    "電話しても返事がない。",
]


@pytest.mark.parametrize("text", UNHAPPY)
def test_an_unhappy_patient_is_a_complaint(text):
    assert cues("COMPLAINT").find(text), text
