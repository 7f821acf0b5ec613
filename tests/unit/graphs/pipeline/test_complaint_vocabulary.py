"""The pipeline's complaint vocabulary, by family of wording (issue 30's held-out set):
paraphrases in neither ``evals/`` nor ``evals/holdout/``, in each language."""

from __future__ import annotations

import pytest

from inboxflow.graphs.pipeline.cues import complaint_cues
from inboxflow.graphs.pipeline.offline import classify_offline
from inboxflow.mail import email_from_json, prompt_fields

MONEY_BACK = [
    "We cancelled in March, yet you charged us anyway for April. Please reverse the charge.",
    "Our account was still billed after the contract ended; I want the full amount back.",
    "Obwohl wir gekündigt haben, wurde der Beitrag trotzdem abgebucht. Bitte zurückbuchen.",
    "Vypověděli jsme smlouvu, a přesto strhli další platbu. Chceme peníze zpět.",
    "Nous avons résilié mais avons été prélevés quand même ; merci de recréditer la carte.",
    "Di de baja la cuenta y me cobraron igual este mes; quiero recuperar mi dinero.",
    "先月解約したのに今月も勝手に引き落とされました。返してください。",
]


def _classify(body: str):
    email = email_from_json(
        {
            "from": "Robin Vale <robin@vale-works.example>",
            "to": ["maya.chen@brightlane.io"],
            "subject": "Our account",
            "body": body,
        }
    )
    return classify_offline(prompt_fields(email))


@pytest.mark.parametrize("text", MONEY_BACK)
def test_money_taken_after_cancelling_or_wanted_back_is_a_complaint(text):
    assert complaint_cues().find(text), text
    assert _classify(text).category == "complaint", text


FRUSTRATION_OR_LEAVING = [
    "Honestly I am fed up: four tickets and still no reply from anyone.",
    "If this is not fixed by Friday we will take our business elsewhere.",
    "Ich bin ehrlich gesagt genervt, seit zwei Wochen antwortet niemand.",
    "Wenn das so bleibt, müssen wir den Anbieter wechseln.",
    "Jsem z toho naštvaný, na tři e-maily nikdo nereaguje.",
    "Zvažujeme přechod ke konkurenci.",
    "Franchement, nous sommes exaspérés : toujours aucune réponse.",
    "Estoy harto, nadie contesta a mis correos.",
    "何度連絡しても返信がないので、他社に乗り換えを考えています。",
]


@pytest.mark.parametrize("text", FRUSTRATION_OR_LEAVING)
def test_frustration_silence_and_threats_to_leave_are_a_complaint(text):
    assert complaint_cues().find(text), text
    assert _classify(text).category == "complaint", text
