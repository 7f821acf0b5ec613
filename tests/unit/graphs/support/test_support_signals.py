"""The support desk's cue lists (``graphs/support/signals.py``, ``cues/``): each signal in each
language, with wording that is not in ``evals/`` (inflections, no diacritics, no spaces)."""

from __future__ import annotations

import pytest

from inboxflow.graphs.support.signals import compile_phrase, find_cues, fold, text_signals
from inboxflow.graphs.support.urgency import (
    escalation_rule,
    floor_urgency,
    rule_urgency,
    signal_issue_type,
)


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        # English paraphrases
        ("Somebody has been logging in from an unknown IP and it was not me.", "security"),
        ("My colleague entered her password on a fake login page.", "security"),
        ("The whole platform went down an hour ago, nobody can work.", "outage"),
        ("Half of our saved reports are gone since the migration.", "data_loss"),
        ("You overcharged us in March: 30 seats instead of 18.", "billing_error"),
        ("Uploads time out every afternoon.", "service_disruption"),
        ("I need to talk to a manager about this today.", "escalation_demand"),
        ("We want our money back for the unused months.", "demand"),
        ("Frankly this support is useless.", "complaint"),
        # Czech, with inflections and with or without diacritics
        ("Dnes ráno se do našeho účtu někdo přihlásil z ciziny.", "security"),
        ("Od rána máme výpadek, žádný z uživatelů se nepřihlásí.", "outage"),
        ("Po aktualizaci zmizely všechny naše sestavy.", "data_loss"),
        ("Strhli jste nam platbu dvakrat.", "billing_error"),
        ("Export je strašně pomalý a pořád padá.", "service_disruption"),
        ("Chci mluvit s vedoucím.", "escalation_demand"),
        ("Požaduji vrácení peněz.", "demand"),
        ("Je to naprosto nepřijatelné.", "complaint"),
        # German, French, Spanish
        ("Unser Konto wurde gehackt, bitte sperren Sie den Zugang.", "security"),
        ("Seit 9 Uhr ist die Plattform nicht erreichbar.", "outage"),
        ("Wir wurden zweimal für Februar belastet.", "billing_error"),
        ("Quelqu'un a piraté notre compte.", "security"),
        ("Le service est en panne depuis ce matin.", "outage"),
        ("On nous a facturé deux fois le même mois.", "billing_error"),
        ("Alguien hackeó nuestra cuenta anoche.", "security"),
        ("La plataforma está caída desde las nueve.", "outage"),
        ("Nos cobraron dos veces la suscripción.", "billing_error"),
        ("Exijo un reembolso completo.", "demand"),
        # Japanese: no spaces between words
        ("昨夜、管理者アカウントが乗っ取られた可能性があります。", "security"),
        ("今朝からシステム障害で全員がログインできません。", "outage"),
        ("先月分が二重請求されています。", "billing_error"),
        ("レポートのデータが消えてしまいました。", "data_loss"),
        ("責任者と話をさせてください。", "escalation_demand"),
    ],
)
def test_each_kind_is_found_in_each_language(text, kind):
    assert kind in find_cues(text), (text, find_cues(text))


@pytest.mark.parametrize(
    "text",
    [
        "How do I add a colleague to my workspace?",
        "Jak mohu přidat kolegu do pracovního prostoru?",
        "Wie kann ich einen Kollegen hinzufügen?",
        "Thanks, the scheduled delivery works great.",
    ],
)
def test_a_plain_question_carries_no_problem_demand_or_complaint(text):
    found = find_cues(text)
    assert not found.keys() & {
        "security",
        "outage",
        "data_loss",
        "billing_error",
        "demand",
        "escalation_demand",
        "complaint",
    }, found


def test_folding_reads_case_and_diacritics_alike_and_keeps_japanese_intact():
    assert fold("VÝPADEK, Zeitüberschreitung!") == " vypadek zeituberschreitung "
    assert fold("ダウン") == " ダウン "  # voiced kana are not stripped like accents
    assert fold("\uff1f") == " ? "  # the fullwidth question mark


def test_stems_gaps_and_word_boundaries():
    assert compile_phrase("vypadk*", "words").search(fold("kvůli výpadku"))
    assert compile_phrase("charged ~ twice", "words").search(fold("charged our card twice"))
    gap = compile_phrase("charged ~ twice", "words")
    assert not gap.search(fold("charged it and then a week later we paid one more time twice"))
    assert not compile_phrase("slow", "words").search(fold("a slowly growing team"))
    with pytest.raises(ValueError, match="words or substring"):
        compile_phrase("x", "regex")


def test_signals_read_every_text_given():
    assert text_signals("Re: question", "不正アクセスの可能性") == {"security"}


@pytest.mark.parametrize(
    ("plan", "signals", "floor"),
    [
        ("free", {"security"}, "critical"),
        ("enterprise", {"outage"}, "critical"),
        ("free", {"outage"}, "high"),
        ("free", {"data_loss"}, "high"),
        ("enterprise", {"service_disruption"}, "high"),
        ("pro", {"service_disruption"}, "high"),
        ("pro", {"billing_error"}, "medium"),
        ("enterprise", {"billing_error"}, "high"),
        ("free", {"billing_error"}, None),
        ("free", {"general_question"}, None),
    ],
)
def test_the_urgency_floor(plan, signals, floor):
    found = floor_urgency(plan, signals)
    assert (found[0] if found else None) == floor


def test_escalation_and_the_specialist_the_signals_name():
    assert escalation_rule("free", {"security"})
    assert escalation_rule("enterprise", {"data_loss"})
    assert escalation_rule("pro", {"outage"}) is None
    assert signal_issue_type({"billing_error", "outage"}) == "billing"
    assert signal_issue_type({"security"}) == "technical"
    assert signal_issue_type(set(), {"billing_topic"}) == "billing"
    assert signal_issue_type(set()) is None
    assert rule_urgency("free", {"general_question"}) == ("low", "free + general question is low")
