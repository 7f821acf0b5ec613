"""Which graph an email starts: the routing rules of ``inboxflow.yaml``, first match wins.

:func:`route` is pure: the email, the config and the mailbox in, a
:class:`RouteDecision` out, with why each earlier rule did not match (for
``inboxflow route``). ``header_match`` patterns are compiled once, when the config is
loaded, and run by RE2 (:mod:`inboxflow.header_patterns`): linear time on any header.

Routing chooses a graph and grants no trust. ``forwarded_from`` matches when any of the
signals of :func:`forwarded_signal` names the address, all of which a sender can write;
whatever trusts a sender (a Crisp patient line, a reviewer's reply, a customer's answer
to a wait) asks :mod:`inboxflow.mail.authentication` itself, whatever the route.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from email.utils import getaddresses
from typing import TYPE_CHECKING

from .config import DEFAULT_GRAPH, InboxflowConfig, Match
from .header_patterns import MAX_MATCHED_CHARS
from .mail import Email
from .mail.addresses import address_key_or_none, domain_key_or_none, same_address
from .mail.forwarded import auto_forwarded_by, forward_of

if TYPE_CHECKING:
    from .engine.graph import Graph


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
        signal: for a rule with ``forwarded_from``, which signal named the address
            (``forwarded_from info@x.cz via X-Forwarded-For``).
    """

    graph: str
    profile: str | None = None
    rule: str | None = None
    reasons_not_matched: list[tuple[str, str]] = field(default_factory=list)
    mailbox: str | None = None
    signal: str | None = None


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
    given = (mailbox or email.mailbox or "").strip()
    mailbox = address_key_or_none(given) or given.lower() or None
    misses: list[tuple[str, str]] = []
    for _, rule in config.rules_for(mailbox):
        why = mismatch(email, rule.match, mailbox)
        if why is None:
            signal = None
            if rule.match.forwarded_from is not None:
                wanted = rule.match.forwarded_from.strip()
                signal = f"forwarded_from {wanted} via {forwarded_signal(email, wanted, mailbox)}"
            return RouteDecision(rule.route, rule.profile, rule.name, misses, mailbox, signal)
        misses.append((rule.name, why))
    return RouteDecision(default, None, None, misses, mailbox)


def mismatch(email: Email, match: Match, mailbox: str | None = None) -> str | None:
    """Why ``match`` does not hold for ``email`` (the first failing condition), or None.

    ``mailbox``: the mailbox the mail was delivered to (default the email's own), never
    a forwarder of it.
    """
    sender = email.sender.address.strip()
    if match.sender_email is not None and not same_address(sender, match.sender_email):
        wanted_key = address_key_or_none(match.sender_email) or match.sender_email.strip()
        return f"sender_email: {address_key_or_none(sender) or sender} is not {wanted_key}"
    if match.sender_domain is not None:
        key = address_key_or_none(sender)
        domain = key.rpartition("@")[2] if key else ""
        wanted = match.sender_domain.strip().lstrip("@")
        if not domain or domain != domain_key_or_none(wanted):
            return (
                f"sender_domain: {domain or '(none)'} is not {domain_key_or_none(wanted) or wanted}"
            )
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
        wanted = match.forwarded_from.strip()
        if forwarded_signal(email, wanted, mailbox) is None:
            return f"forwarded_from: no signal names {wanted} ({', '.join(SIGNALS)})"
    return None


SIGNALS = (
    "X-Forwarded-For",
    "X-Forwarded-To",
    "X-Forwarded-From",
    "Resent-From",
    "the forwarded message",
    "Reply-To",
    "From",
)
"""What ``forwarded_from`` reads, in order (docs/routing.md): Gmail's auto-forwarding
headers, the headers other forwarders add, the forwarded block of a manual forward,
``Reply-To`` and the sender. All are written by whoever sent the mail: they route, they
never vouch."""


def forwarded_signal(email: Email, address: str, mailbox: str | None = None) -> str | None:
    """The first signal naming ``address`` as where ``email`` was forwarded from, or None.

    - ``X-Forwarded-For`` / ``X-Forwarded-To``: Gmail's auto-forwarding writes
      ``X-Forwarded-For: forwarder destination`` and ``X-Forwarded-To: destination`` at
      each hop; any address they name but the mailbox it was delivered to is on the way;
    - ``X-Forwarded-From``, ``Resent-From`` (RFC 5322 §3.6.6): forwarders' own headers;
    - ``the forwarded message``: the ``From`` or ``To`` of the message a manual forward
      carries (:func:`inboxflow.mail.forwarded.forward_of`);
    - ``Reply-To``, and ``From``: the sender.

    Addresses are compared by :mod:`inboxflow.mail.addresses`.
    """
    if address_key_or_none(address) is None:
        return None
    header = auto_forwarded_by(email, address, mailbox)
    if header is not None:
        return _title(header)
    for header in ("x-forwarded-from", "resent-from"):
        if any(same_address(a, address) for a in _addresses(email.header(header))):
            return _title(header)
    forward = forward_of(email)
    if forward is not None:
        where = "an attached message" if forward.layout == "attached" else "the forwarded block"
        if same_address(forward.sender.address, address):
            return f"{where} (From)"
        if any(same_address(a, address) for a in forward.to):
            return f"{where} (To)"
    if any(same_address(a, address) for a in _addresses(email.header("reply-to"))):
        return "Reply-To"
    if same_address(email.sender.address, address):
        return "From"
    return None


def _title(header: str) -> str:
    return "-".join("X" if part == "x" else part.capitalize() for part in header.split("-"))


def _addresses(value: str) -> Iterator[str]:
    for line in value.split("\n"):
        for _, found in getaddresses([line]):
            if found:
                yield found


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
