"""Which graph an email starts: the routing rules of ``inboxflow.yaml``, first match wins.

:func:`route` is pure: the email, the config and the mailbox in, a
:class:`RouteDecision` out, with why each earlier rule did not match (for
``inboxflow route``). ``header_match`` patterns are compiled once, when the config is
loaded, and run by RE2 (:mod:`inboxflow.header_patterns`): linear time on any header.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .config import DEFAULT_GRAPH, InboxflowConfig, Match
from .header_patterns import MAX_MATCHED_CHARS
from .mail import Email

if TYPE_CHECKING:
    from .graph import Graph

_BODY_FROM_LINE = re.compile(
    r"^[>\s]*\**(?:from|von|de|van|da|från|fra)\**\s*:\s*(.+)$", re.IGNORECASE | re.MULTILINE
)
_ADDRESS = re.compile(r"[\w.!#$%&'*+/=?^`{|}~-]+@[\w-]+(?:\.[\w-]+)+")


@dataclass(frozen=True)
class RouteDecision:
    """Where an email goes, and why.

    Attributes:
        graph: the graph to start.
        profile: the agent profile, for a graph that takes one.
        rule: the rule that matched; ``None`` when none did (the default graph)
            or when the graph was named explicitly.
        reasons_not_matched: ``(rule, why)`` for each rule tried before.
        mailbox: the mailbox the rules were chosen for.
    """

    graph: str
    profile: str | None = None
    rule: str | None = None
    reasons_not_matched: list[tuple[str, str]] = field(default_factory=list)
    mailbox: str | None = None


def route(
    email: Email,
    config: InboxflowConfig,
    mailbox: str | None = None,
    default: str = DEFAULT_GRAPH,
) -> RouteDecision:
    """The first rule whose conditions all hold: the mailbox's own rules, then the global ones.

    Args:
        email: the parsed email.
        config: the validated config.
        mailbox: whose rules apply first; default the email's own mailbox.
        default: the graph when no rule matches (ingest passes the mailbox's graph).
    """
    mailbox = (mailbox or email.mailbox or "").strip().lower() or None
    misses: list[tuple[str, str]] = []
    for _, rule in config.rules_for(mailbox):
        why = mismatch(email, rule.match)
        if why is None:
            return RouteDecision(rule.route, rule.profile, rule.name, misses, mailbox)
        misses.append((rule.name, why))
    return RouteDecision(default, None, None, misses, mailbox)


def mismatch(email: Email, match: Match) -> str | None:
    """Why ``match`` does not hold for ``email`` (the first failing condition), or None."""
    sender = email.sender.address.strip().lower()
    if match.sender_email is not None and sender != match.sender_email.strip().lower():
        return f"sender_email: {sender} is not {match.sender_email.strip().lower()}"
    if match.sender_domain is not None:
        domain = sender.rpartition("@")[2]
        wanted = match.sender_domain.strip().lower().lstrip("@")
        if domain != wanted:
            return f"sender_domain: {domain or '(none)'} is not {wanted}"
    contains = match.subject_contains
    if contains is not None and contains.lower() not in email.subject.lower():
        return f"subject_contains: {contains!r} not in {email.subject[:60]!r}"
    for header, pattern in match.patterns.items():
        value = email.header(header)
        if not value:
            return f"header_match: no {header} header"
        if len(value) > MAX_MATCHED_CHARS:
            return f"header_match: {header} of {len(value)} characters (patterns see at most {MAX_MATCHED_CHARS})"
        if not pattern.search(value):
            return f"header_match: {header} {value[:60]!r} does not match {pattern.pattern!r}"
    if match.forwarded_from is not None:
        wanted = match.forwarded_from.strip().lower()
        if wanted not in forwarded_senders(email):
            return f"forwarded_from: no forwarded mail from {wanted}"
    return None


def forwarded_senders(email: Email) -> set[str]:
    """Addresses an email may have been forwarded from, lowercased.

    ``X-Forwarded-From``, ``Reply-To``, the senders of attached forwarded
    messages, ``From:`` lines in the body (an inline forwarded block, quoted or
    not, in a few languages), and the sender itself.
    """
    found = {email.sender.address.strip().lower()}
    for header in ("x-forwarded-from", "reply-to"):
        found.update(a.lower() for a in _ADDRESS.findall(email.header(header)))
    for forwarded in email.forwarded:
        found.update(a.lower() for a in _ADDRESS.findall(forwarded.sender))
    for line in _BODY_FROM_LINE.findall(email.body_text):
        found.update(a.lower() for a in _ADDRESS.findall(line))
    return found


def explicit(
    graph: str, profile: str | None, config: InboxflowConfig, graphs: Mapping[str, Graph]
) -> RouteDecision:
    """A graph named by hand (``inboxflow run --graph NAME --profile P``), checked like a rule.

    Raises:
        ValueError: unknown graph, or a profile missing, unexpected or undeclared.
    """
    target = graphs.get(graph)
    if target is None:
        raise ValueError(f"unknown graph {graph!r}; graphs: {', '.join(sorted(graphs))}")
    names = config.profile_names()
    if target.takes_profile and profile is None:
        raise ValueError(
            f"graph {graph!r} needs --profile; profiles: {', '.join(names) or '(none declared)'}"
        )
    if not target.takes_profile and profile is not None:
        raise ValueError(f"graph {graph!r} takes no profile (got {profile!r})")
    if profile is not None and profile not in names:
        raise ValueError(
            f"unknown profile {profile!r}; profiles: {', '.join(names) or '(none declared)'}"
        )
    return RouteDecision(graph, profile)
