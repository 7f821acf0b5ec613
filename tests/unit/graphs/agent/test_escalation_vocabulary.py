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
    assert cues("complaint").find(text), text


SYMPTOM_AFTER_A_MEDICINE = [
    "Since I started the antibiotic I feel dizzy and have a rash. Should I carry on taking it?",
    "I get nausea after taking the iron tablets, do I keep taking them?",
    "Nach der Einnahme von Diclofenac habe ich Bauchschmerzen und Übelkeit.",
    "Ich habe Juckreiz und Ausschlag, soll ich die Salbe weiter einnehmen oder aufhören?",
    "Po užití Nurofenu mám vyrážku a točí se mi hlava, mám ho dál brát?",
    "Od včerejška mám černou stolici a bolí mě žaludek.",
    "Depuis que je prends ce sirop, j'ai des vertiges ; dois-je continuer à prendre ?",
    "Tengo mareos desde que tomo la pastilla, ¿debo seguir tomando?",
    "薬を飲んでから吐き気とめまいがあります。飲み続けても大丈夫ですか。",
]


@pytest.mark.parametrize("text", SYMPTOM_AFTER_A_MEDICINE)
def test_a_symptom_after_a_medicine_is_a_question_for_a_pharmacist(text):
    assert cues("medical_advice").find(text), text


@pytest.mark.parametrize(
    "text",
    [
        "Do you have Panadol in stock at the Karlín branch?",
        "Haben Sie Voltaren Gel in der Filiale am Hauptbahnhof vorrätig?",
        "Máte prosím v Olomouci Paralen 500? Díky.",
        "Avez-vous du Doliprane en stock ?",
    ],
)
def test_a_stock_question_is_no_question_for_a_pharmacist(text):
    assert not cues("medical_advice").find(text), cues("medical_advice").find(text)
