"""Which graph an email starts: the routing rules of ``inboxflow.yaml``, first match wins.

:func:`route` is pure: the email, the config and the mailbox in, a
:class:`RouteDecision` out, with why each earlier rule did not match (for
``inboxflow route``). ``header_match`` patterns are compiled once, when the config is
loaded, and run by RE2 (:mod:`inboxflow.header_patterns`): linear time on any header.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .config import DEFAULT_GRAPH, InboxflowConfig, Match
from .header_patterns import MAX_MATCHED_CHARS
from .mail import Email
from .mail.authentication import check_sender, configured_authserv_id

if TYPE_CHECKING:
    from .graph import Graph


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
    authserv_id = configured_authserv_id(config)
    for _, rule in config.rules_for(mailbox):
        why = mismatch(email, rule.match, authserv_id)
        if why is None:
            return RouteDecision(rule.route, rule.profile, rule.name, misses, mailbox)
        misses.append((rule.name, why))
    return RouteDecision(default, None, None, misses, mailbox)


def mismatch(email: Email, match: Match, authserv_id: str | None = None) -> str | None:
    """Why ``match`` does not hold for ``email`` (the first failing condition), or None.

    ``authserv_id``: the receiving server whose verdict authenticates the sender for
    ``forwarded_from`` (default: the configured one).
    """
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
        # Reply-To, X-Forwarded-From and "From:" lines in the body are the sender's to write.
        wanted = match.forwarded_from.strip().lower()
        checked = check_sender(email, authserv_id)
        if checked.address is None:
            return f"forwarded_from: the sender is not authenticated ({checked.reason})"
        if not checked.is_sender(wanted):
            return f"forwarded_from: the authenticated sender {checked.address} is not {wanted}"
    return None


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
