"""The pharmacy's offline model reserves only what the patient asks it to reserve:
a request not to reserve (in any of its wordings) is a stock question."""

from __future__ import annotations

import json

import pytest

from inboxflow.graphs.agent.offline import pharmacy_policy

TOOLS = [
    {"function": {"name": name}} for name in ("search_drugs", "manage_reservation", "create_draft")
]
FOUND = {
    "drugs": [
        {
            "name": "Claritine 10",
            "prescription": False,
            "pharmacies": [{"pharmacy_id": "p1", "name": "Centrum", "city": "Brno", "stock": 4}],
        }
    ]
}


def _next_call(body: str) -> str:
    messages = [
        {"role": "user", "content": f"From: (pat@example.cz)\nSubject: Claritine\n{body}"},
        {"role": "tool", "name": "search_drugs", "content": json.dumps(FOUND)},
    ]
    turn = pharmacy_policy(messages, TOOLS)  # type: ignore[arg-type]
    return turn.tool_calls[0].name


@pytest.mark.parametrize(
    "body",
    [
        "Is Claritine 10 in stock? Please don't reserve it yet, I'll drop by.",
        "Do you have Claritine? No need to hold a pack for me.",
        "Máte Claritine 10? Zatím mi ho nezamlouvejte, jen se informuji.",
        "Máte Claritine? Rezervaci nepotřebuji, není třeba rezervovat.",
        "Haben Sie Claritine? Bitte noch nicht reservieren.",
        "Avez-vous du Claritine ? Pas besoin de réserver.",
        "¿Tienen Claritine? No lo reserven todavía.",
    ],
)
def test_a_request_not_to_reserve_gets_an_answer_and_no_reservation(body):
    assert _next_call(body) == "create_draft", body


@pytest.mark.parametrize(
    "body",
    ["Could you reserve one pack of Claritine 10 for me?", "Prosím rezervujte mi Claritine 10."],
)
def test_a_request_to_reserve_still_reserves(body):
    assert _next_call(body) == "manage_reservation", body
