"""What a customer's first email asks for, read from its intent: a quote, or something for the
agency (a claim, a cover change, a cancellation, a billing question), or unclear.

The reading composes a few parts (:data:`.cues.FRAMES`), not phrases learnt from mail:

| kind          | when                                                                    |
|---------------|-------------------------------------------------------------------------|
| cancellation  | a cancel word and a policy or insurance named, no quote asked for, not   |
|               | another insurer's ("my Geico policy") nor a switch to us                 |
| cover change  | a change of who or what is covered (add, remove, sold) and an existing   |
|               | policy ("my policy", "the policy", a policy number); or an existing      |
|               | policy or a policy number's shape with two cars named (one for another)  |
| billing       | a billing matter and an existing policy                                  |
| claim         | an incident that happened (a past event, or an incident noun with        |
|               | "yesterday"... or to report), or an incident on an existing policy; no   |
|               | quote asked for                                                          |
| quote         | a quote asked for, or the quote's details given (three fields or more)   |
| unclear       | none of these: the offline model hands it to a person                    |

The guard ``not_a_quote`` (:mod:`.guards`) holds the first four whatever the model plans.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import Literal

from .cues import FRAMES
from .extract import fold, read_message, vehicles_named

Kind = Literal["quote", "claim", "cover change", "cancellation", "billing", "unclear"]
_QUOTE_FIELDS = 3
"""A first email that gives this many of the quote's fields asks for a quote."""
_POLICY_NUMBER = r"(?:n[or°º]\.?|nr\.?|number|numero|nummer|cislo|#)?[ \t:#]*[a-z]{0,4}[-/ ]?\d{4,}"


_NEW = r"(?:new|nuev[ao]|nouvel(?:le)?|neue[nr]?|nieuwe|nuov[ao]|nov[ao]|nowa|nowe)\b"
"""A new policy is a quote, not one the customer has."""


@dataclass(frozen=True)
class RequestKind:
    """What the email asks for, and the words that show it (for the agency's reason).

    Attributes:
        kind: see the module table.
        evidence: the email's own words that decided it ("sold", "policy PA-55120").
    """

    kind: Kind
    evidence: tuple[str, ...] = ()

    @property
    def for_the_agency(self) -> bool:
        """A claim, a cover change, a cancellation or a billing question."""
        return self.kind not in ("quote", "unclear")


def _words(frame: str) -> str:
    latin: list[tuple[int, str]] = []
    other: list[tuple[int, str]] = []
    for phrases in FRAMES[frame].values():
        for phrase in phrases:
            word = fold(phrase)
            stem = word.endswith("*")
            word = word.rstrip("*")
            escaped = re.escape(word).replace("\\ ", r"\s+") + (r"\w*" if stem else "")
            (latin if word.isascii() else other).append((len(word), escaped))
    parts = [e for _, e in sorted(latin, reverse=True)]
    alternatives = [rf"(?<!\w)(?:{'|'.join(parts)})(?!\w)"] if parts else []
    return "|".join(alternatives + [e for _, e in sorted(other, reverse=True)])


@cache
def _frame(name: str) -> re.Pattern[str]:
    return re.compile(_words(name))


@cache
def _existing_policy() -> re.Pattern[str]:
    """A policy that is the customer's: "my policy", "the policy", "policy PA-55120"."""
    policy = _words("policy")
    return re.compile(
        rf"(?<!\w)(?:{_words('mine')})\s+(?:(?!{_NEW})\w+\s+)?(?:{policy})"
        rf"|(?:{policy})\s*{_POLICY_NUMBER}(?!\w)"
    )


_WITH = r"(?:with|at|from|through|con|en|bei|der|chez|aupres\s+de|bij|presso|com|na|w|u|v)"
_POLICY_NUMBER_SHAPE = re.compile(r"(?<![\w-])[A-Z]{2,4}-?\d{3,}(?:[-/]\d{2,})*(?![\w-])")
"""A policy number as insurers print it (``BLA-4410-9921``, ``PA-55120``): capitals, then
digits in groups."""


@cache
def _other_insurer() -> re.Pattern[str]:
    """A policy or insurance qualified by a name (``my Geico policy``, ``insurance with
    Allstate``, ``meine HUK-Versicherung``): the name's capital is checked on the text."""
    held = rf"(?:{_words('policy')}|{_words('insurance')})"
    return re.compile(
        rf"(?<!\w)(?:{_words('mine')})\s+(?P<a>[a-z][\w&'.]*)[\s-]+{held}"
        rf"|{held}\s+{_WITH}\s+(?P<b>[a-z][\w&'.-]*)"
    )


def _elsewhere(folded: str, text: str) -> tuple[str, tuple[int, int]] | None:
    """Another insurer's policy the email names (its words and where), or None: a name
    written with a capital that is none of our frames' words."""
    ours = re.compile(rf"^(?:{_words('mine')}|{_NEW}|{_words('policy')}|{_words('insurance')})$")
    for match in _other_insurer().finditer(folded):
        group = "a" if match.group("a") else "b"
        start, end = match.span(group)
        if text[start].isupper() and not ours.match(folded[start:end]):
            return text[match.start() : match.end()], match.span()
    return None


def _overlap(one: tuple[int, int], other: tuple[int, int]) -> bool:
    return one[0] < other[1] and other[0] < one[1]


def _found(name: str, folded: str, text: str) -> str | None:
    match = _frame(name).search(folded)
    return text[match.start() : match.end()] if match else None


def _unless_make(word: str | None, makes: set[str]) -> str | None:
    return None if word is not None and fold(word) in makes else word


def request_kind(text: str) -> RequestKind:
    """What ``text`` (a customer's first email, without what it quotes) asks for."""
    folded = fold(text)
    elsewhere = _elsewhere(folded, text)
    policy_match = _existing_policy().search(folded)
    if policy_match and elsewhere and _overlap(policy_match.span(), elsewhere[1]):
        policy_match = None  # "my Geico policy" is not ours
    policy = text[policy_match.start() : policy_match.end()] if policy_match else None
    named = policy or _found("policy", folded, text) or _found("insurance", folded, text)
    quote = _found("quote", folded, text)
    cancel = _found("cancel", folded, text)
    switch = _found("switch", folded, text)
    if cancel and named and not quote and not (elsewhere or switch):
        # cancelling another insurer's policy to move here is no cancellation with us
        return RequestKind("cancellation", (cancel, named))
    change = _found("change", folded, text)
    if change and policy:
        return RequestKind("cover change", (change, policy))
    number = _policy_number(text)
    cars = set(vehicles_named(text))
    if (policy or number) and len(cars) >= 2 and not elsewhere:
        # a car for another on an existing policy (its number): a cover change, not a quote
        return RequestKind("cover change", (policy or number or "", *sorted(m for m, _ in cars)))
    billing = _found("billing", folded, text)
    if billing and policy:
        return RequestKind("billing", (billing, policy))
    fields = len(read_message(text).values)
    # A word of an incident that is a vehicle's make named here ("Škoda" is Czech for damage)
    # tells nothing of an incident.
    makes = {make for make, _ in cars}
    event = _unless_make(_found("incident_event", folded, text), makes)
    incident = _unless_make(_found("incident", folded, text), makes)
    recently = _found("recently", folded, text) or _found("report", folded, text)
    happened = event or (incident if recently else None)
    if (incident or event) and policy and not quote:
        return RequestKind("claim", tuple(w for w in (event or incident, policy) if w))
    if happened and not quote and fields < _QUOTE_FIELDS:
        return RequestKind("claim", tuple(w for w in (happened, recently) if w))
    if quote or fields >= _QUOTE_FIELDS:
        return RequestKind("quote", (quote,) if quote else ())
    return RequestKind("unclear")


def _policy_number(text: str) -> str | None:
    """A policy number's shape in ``text`` that no field of the quote reads (a licence number
    is not a policy), or None."""
    values = {str(v).replace(" ", "") for v in read_message(text).values.values()}
    for match in _POLICY_NUMBER_SHAPE.finditer(text):
        if match.group(0).replace(" ", "") not in values:
            return match.group(0)
    return None


def not_a_quote(text: str) -> str | None:
    """Why ``text`` is for the agency rather than a quote (``claim: "was stolen"``), or None
    (a quote request, or unclear)."""
    kind = request_kind(text)
    if not kind.for_the_agency:
        return None
    return f"{kind.kind}: " + ", ".join(f'"{word}"' for word in kind.evidence)


__all__ = ["RequestKind", "not_a_quote", "request_kind"]
