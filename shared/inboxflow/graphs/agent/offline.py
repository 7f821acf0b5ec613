"""The offline model's scripted policies for the agent's turns (see :mod:`.tasks`), one per
shipped profile.

The pharmacy profile, scripted: what the offline model does in each turn.

It reads the conversation (the inquiry and the tool results so far) and asks
for the next tools the way the system prompt tells a real model to:
``search_drugs`` (with ``manage_reservation`` ``check`` beside it when the patient
asks about a reservation), then ``manage_reservation`` ``create`` when they want
a pack held, ``web_search`` when the drug is unknown, ``create_draft`` to the
patient in their language, and a one-line summary with no tool call. Questions
for medical advice go to ``escalate``. Same conversation, same turn.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from ...ports.llm import AgentTurn, ChatMessage, ToolCall
from ..reply_learning import PROMPT_PREFERENCES, apply_preferences, read_preferences

_PATIENT = re.compile(r"[(<]([^()<>\s]+@[^()<>\s]+)[)>]")
_SUBJECT = re.compile(r"^Subject: (.*)$", re.MULTILINE)
_REPLIES_TO = re.compile(r"^Replies go to: <([^<>\s]+@[^<>\s]+)>$", re.MULTILINE)
_MEDICAL = re.compile(
    r"side effect|dosage|dose|interact|pregnan|can i take|is it safe|nežádoucí|vedlejší účin|"
    r"dávkován|kolik tablet|těhotens|můžu (?:to )?užívat|mohu (?:to )?užívat|kombinovat",
    re.IGNORECASE,
)
_RESERVE = re.compile(r"reserv|hold|put aside|rezerv|zamluv|odlož|podržet", re.IGNORECASE)
_CHECK = re.compile(
    r"my reservation|existing reservation|already reserved|moje rezervace|mou rezervaci|"
    r"rezervaci, kterou|už mám rezerv|zrušit rezerv|cancel",
    re.IGNORECASE,
)
_NO_RESERVE = re.compile(
    r"(?:do not|don't|dont|no need to|not to|without) (?:\w+ )?(?:reserv|hold|put)|no reservation|"
    r"\bnerezerv|\bnezamlouv|\bneodkl[aá]d|\bnedr[zž]|nen[ií] t[rř]eba rezerv|nemus[ií]te (?:nic )?rezerv|"
    r"bez rezervace|nicht reservier|keine reservierung|ne (?:me |nous )?r[ée]serv|sans r[ée]serv|"
    r"pas besoin de r[ée]serv|no (?:me |lo |la )?reserv|sin reservar",
    re.IGNORECASE,
)
"""A request not to reserve ("nic nerezervujte", "don't hold it"): the patient only asks."""
_CZECH = re.compile(r"[ěščřžůň]|dobrý den|děkuji", re.IGNORECASE)


def _results(messages: list[ChatMessage]) -> list[tuple[str, dict[str, Any]]]:
    found = []
    for message in messages:
        if message.get("role") == "tool":
            try:
                content = json.loads(str(message.get("content") or "{}"))
            except json.JSONDecodeError:
                content = {}
            found.append((str(message.get("name")), content if isinstance(content, dict) else {}))
    return found


def _turn(
    messages: list[ChatMessage], *calls: tuple[str, Mapping[str, Any]], text: str = ""
) -> AgentTurn:
    number = sum(1 for m in messages if m.get("role") == "assistant") + 1
    return AgentTurn(
        text=text,
        tool_calls=tuple(
            ToolCall(f"call_{number}_{i}", name, json.dumps(dict(args), ensure_ascii=False))
            for i, (name, args) in enumerate(calls)
        ),
    )


def pharmacy_policy(messages: list[ChatMessage], tools: list[dict[str, Any]]) -> AgentTurn:
    """The next turn of the pharmacy agent for this conversation."""
    offered = {str(t.get("function", {}).get("name")) for t in tools}
    inquiry = next((str(m.get("content") or "") for m in messages if m.get("role") == "user"), "")
    patient_match = _PATIENT.search(inquiry.splitlines()[0] if inquiry else "")
    patient = patient_match.group(1) if patient_match else ""
    replies_to = _REPLIES_TO.search(inquiry)
    if replies_to:
        patient = replies_to.group(1)
    subject_match = _SUBJECT.search(inquiry)
    subject = subject_match.group(1).strip() if subject_match else ""
    body = inquiry[subject_match.end() :].strip() if subject_match else inquiry
    czech = bool(_CZECH.search(body))
    done = _results(messages)
    names = [name for name, _ in done]

    if "create_draft" in names or "send_reply" in names:
        outcome = dict(done)["create_draft" if "create_draft" in names else "send_reply"]
        if "error" in outcome:
            return _turn(messages, text=f"Could not write the reply: {outcome['error']}")
        return _turn(messages, text=f"Drafted a reply to {patient or 'the sender'} ({subject}).")
    if "escalate" in names:
        return _turn(messages, text="Escalated to a pharmacist.")
    if _MEDICAL.search(body) and "escalate" in offered:
        reason = "the patient asks for medical advice (dosage, side effects or interactions)"
        return _turn(messages, ("escalate", {"reason": reason}))
    if "search_drugs" not in names:
        calls: list[tuple[str, Mapping[str, Any]]] = [
            ("search_drugs", {"query": f"{subject} {body}"[:300], "limit": 3})
        ]
        if _CHECK.search(body):
            wanted = _drug_words(f"{subject} {body}")
            calls.append(("manage_reservation", {"action": "check", "drug_name": wanted}))
        return _turn(messages, *calls)
    drugs = list(dict(done)["search_drugs"].get("drugs") or [])
    drug = drugs[0] if drugs else None
    if drug is None and "web_search" not in names and "web_search" in offered:
        return _turn(messages, ("web_search", {"query": f"{subject} {body}"[:200]}))
    reserved = dict(done).get("manage_reservation")
    wants = bool(_RESERVE.search(body)) and not _CHECK.search(body) and not _NO_RESERVE.search(body)
    if drug is not None and wants and reserved is None and not drug.get("prescription"):
        in_stock = [p for p in drug.get("pharmacies", []) if p.get("stock", 0) > 0]
        named = next((p for p in in_stock if _mentions(body, p)), None)
        if in_stock:
            args: dict[str, Any] = {"action": "create", "drug_name": drug["name"]}
            if named is not None:
                args["pharmacy_id"] = named["pharmacy_id"]
            return _turn(messages, ("manage_reservation", args))
    reply = apply_preferences(_reply_body(drug, reserved, czech, wants), _taught(messages))
    re_subject = subject if subject.lower().startswith("re:") else f"Re: {subject}"
    return _turn(messages, ("create_draft", {"to": patient, "subject": re_subject, "body": reply}))


def _taught(messages: list[ChatMessage]) -> dict[str, Any]:
    """The preferences the system prompt carries (:mod:`..reply_learning`), ``{}`` if none."""
    system = next((str(m.get("content") or "") for m in messages if m.get("role") == "system"), "")
    _, found, after = system.partition(PROMPT_PREFERENCES + "\n")
    return read_preferences(after.split("\n", 1)[0]) if found else {}


def _drug_words(text: str) -> str:
    words = re.findall(r"\b[A-ZÁČĎÉĚÍŇÓŘŠŤÚŮÝŽ][a-záčďéěíňóřšťúůýž]{3,}\b(?:\s+\d+)?", text)
    common = {
        "Dobrý",
        "Hello",
        "Dear",
        "Thank",
        "Thanks",
        "Please",
        "Děkuji",
        "Prosím",
        "Moje",
        "Mám",
    }
    return next((w for w in words if w.split()[0] not in common), text[:40])


def _mentions(body: str, pharmacy: Mapping[str, Any]) -> bool:
    text = body.lower()
    return (
        str(pharmacy.get("city", "")).lower() in text
        or str(pharmacy.get("name", "")).lower() in text
    )


def _reply_body(
    drug: Mapping[str, Any] | None, reserved: Mapping[str, Any] | None, czech: bool, wants: bool
) -> str:
    hello, bye = (
        ("Dobrý den,", "S pozdravem\nDostupnost léků")
        if czech
        else ("Hello,", "Kind regards\nDostupnost léků")
    )
    if drug is None:
        line = (
            "tento lék bohužel v naší nabídce nenacházíme. Ověřte prosím jeho přesný název."
            if czech
            else "we could not find this medicine in our partner pharmacies. Please check its exact name."
        )
        return f"{hello}\n\n{line}\n\n{bye}"
    stock = [p for p in drug.get("pharmacies", []) if p.get("stock", 0) > 0]
    where = ", ".join(
        f"{p['name']} ({p['city']}, {p['stock']} ks)"
        if czech
        else f"{p['name']} ({p['city']}, {p['stock']} packs)"
        for p in stock
    )
    lines = []
    if reserved and "reservations" in reserved:
        found = reserved["reservations"]
        lines.append(
            (
                f"vaši rezervaci {found[0]['drug']} v lékárně {found[0]['pharmacy']} evidujeme."
                if found
                else "žádnou aktivní rezervaci na vaše jméno neevidujeme."
            )
            if czech
            else (
                f"your reservation of {found[0]['drug']} at {found[0]['pharmacy']} is active."
                if found
                else "we have no active reservation under your address."
            )
        )
    if stock:
        lines.append(
            f"{drug['name']} je skladem: {where}."
            if czech
            else f"{drug['name']} is in stock at: {where}."
        )
    else:
        lines.append(
            f"{drug['name']} momentálně není skladem."
            if czech
            else f"{drug['name']} is currently out of stock."
        )
    if drug.get("prescription"):
        lines.append(
            "Lék je vázaný na recept, e-mailem ho rezervovat nelze."
            if czech
            else "It needs a prescription, so it cannot be reserved by email."
        )
    if reserved and "reservation_id" in reserved:
        lines.append(
            f"Jedno balení jsme vám rezervovali v lékárně {reserved['pharmacy']} (rezervace {reserved['reservation_id']})."
            if czech
            else f"We reserved one pack for you at {reserved['pharmacy']} (reservation {reserved['reservation_id']})."
        )
    elif reserved and "error" in reserved:
        lines.append(
            f"Rezervace se nezdařila: {reserved['error']}."
            if czech
            else f"The reservation failed: {reserved['error']}."
        )
    elif wants and stock and not drug.get("prescription"):
        pass
    return f"{hello}\n\n" + " ".join(lines) + f"\n\n{bye}"
