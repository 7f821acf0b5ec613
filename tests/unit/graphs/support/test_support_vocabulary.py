"""The support desk's vocabulary, by family of wording (issue 30's held-out set):
paraphrases in neither ``evals/`` nor ``evals/holdout/``, in each language."""

from __future__ import annotations

import pytest

from inboxflow.graphs.support.signals import find_cues

BILLED_AFTER_ALL = [
    "We closed the account in May and were still charged for June.",
    "Wir haben gekündigt und der Betrag wurde trotzdem abgebucht.",
    "Zrušili jsme účet, a stejně nám strhli další měsíc.",
    "Le compte est fermé mais nous avons été débités quand même.",
    "Cerramos la cuenta y nos volvieron a cobrar en junio.",
    "解約したのに今月も請求されました。",
]
MONEY_BACK = [
    "Please put the payment back on our company card.",
    "Bitte überweisen Sie das Geld zurück.",
    "Chceme vrátit celou částku za březen.",
    "Pouvez-vous récupérer cet argent pour nous et recréditer la carte ?",
    "Necesito recuperar el dinero de marzo.",
    "三月分を返してください。",
]


@pytest.mark.parametrize("text", BILLED_AFTER_ALL)
def test_billed_after_cancelling_is_a_billing_error(text):
    assert "billing_error" in find_cues(text), (text, find_cues(text))


@pytest.mark.parametrize("text", MONEY_BACK)
def test_asking_for_the_money_back_is_a_demand(text):
    assert "demand" in find_cues(text), (text, find_cues(text))


FRUSTRATION_OR_LEAVING = [
    "Three emails and no one has replied to any of them.",
    "Wir sind genervt, niemand meldet sich bei uns.",
    "Na naše hlášení nikdo nereaguje, uvažujeme o jiném dodavateli i ke konkurenci.",
    "Nous en avons ras le bol, personne ne répond au téléphone.",
    "Estamos frustrados, nadie ha respondido en una semana.",
    "サポートから返信がないので困っています。",
]


@pytest.mark.parametrize("text", FRUSTRATION_OR_LEAVING)
def test_frustration_silence_and_threats_to_leave_are_a_complaint(text):
    assert "complaint" in find_cues(text), (text, find_cues(text))


@pytest.mark.parametrize(
    "text",
    ["Od rána se nám nenačítají žádné přehledy.", "Aplikace se vůbec nenačítá, nic se nenačte."],
)
def test_nothing_loading_is_an_outage(text):
    assert "outage" in find_cues(text), (text, find_cues(text))
