"""Who really sent an email: the authenticated sender, from our receiving server's verdict.

``From`` says whatever its sender wrote. What the receiving server (Gmail,
authserv-id ``mx.google.com``) found when the message arrived is in the
``Authentication-Results`` header it adds on top (RFC 8601). Every header below
that one came with the message: a sender can add Authentication-Results of their
own, but only *below* ours. So only the topmost header counts, and only when it
names the configured authserv-id.

:func:`check_sender` vouches for an address only when:

- ``From`` is one header holding exactly one well-formed address
  (``Email.from_address``, decided when the message was parsed). ``Sender``,
  ``Return-Path`` or a bare local part may stand in for display, never here;
- the topmost Authentication-Results names the configured authserv-id
  (:func:`configured_authserv_id`);
- it records, for the From domain: ``dmarc=pass`` with ``header.from`` that
  domain; or an aligned ``dkim=pass`` (``header.d``, or the domain of
  ``header.i``, is that domain); or an aligned ``spf=pass`` (the domain of
  ``smtp.mailfrom`` is that domain), unless Gmail says the pass is its "best
  guess" (the domain publishes no SPF record). Any other result (``none``,
  ``neutral``, ``temperror``, ``permerror``, ``fail``...) vouches for nothing.

The header is parsed with ``authres`` (the reference RFC 8601 parser), so
comments, which may hold ``;`` and ``=`` (``spf=pass (google.com: domain of
a@b designates 1.2.3.4 as permitted sender; x=y)``), and quoted values never
pass for results. A header it cannot parse vouches for nothing.

Mail between two addresses of one Google Workspace domain reaches the mailbox
through ``mx.google.com`` too and carries its Authentication-Results. Google
signs it with DKIM for the domain only once DKIM is turned on in the Admin
console (before that with a ``*.gappssmtp.com`` key, which is not aligned); SPF
passes, aligned, when the domain's SPF record includes ``_spf.google.com``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .addresses import domain_key, same_address
from .model import Email

if TYPE_CHECKING:
    from ..config import InboxflowConfig

DEFAULT_AUTHSERV_ID = "mx.google.com"
"""Gmail's receiving servers: the authserv-id of the Authentication-Results they add."""

AUTHSERV_ID_VARIABLE = "INBOXFLOW_AUTHSERV_ID"
"""Overrides ``authserv_id`` of ``inboxflow.yaml`` (a deployment behind another receiving server)."""

HEADER = "authentication-results"


@dataclass(frozen=True)
class SenderCheck:
    """What authentication says of an email's sender.

    Attributes:
        address: the authenticated sender (``Email.from_address``), or None.
        claimed: the address the email claims to be from (``Email.sender``).
        reason: how it was authenticated, or why not (one clause for records).
    """

    address: str | None
    claimed: str
    reason: str

    @property
    def authenticated(self) -> bool:
        """Whether an address was vouched for."""
        return self.address is not None

    def is_sender(self, expected: str) -> bool:
        """Whether the authenticated sender is ``expected`` (``same_address``: ASCII case only)."""
        return self.address is not None and same_address(self.address, expected)


def configured_authserv_id(
    config: InboxflowConfig | None = None, environ: Mapping[str, str] | None = None
) -> str:
    """The authserv-id whose verdict counts: ``INBOXFLOW_AUTHSERV_ID`` of ``environ``, else
    ``authserv_id`` of ``inboxflow.yaml``, else ``mx.google.com``.

    A deployment's config has the variable applied already (``configuration``), so the
    call sites pass the config only.
    """
    env = environ or {}
    configured = config.authserv_id if config is not None else None
    return (env.get(AUTHSERV_ID_VARIABLE) or configured or DEFAULT_AUTHSERV_ID).strip().lower()


def check_sender(email: Email, authserv_id: str | None = None) -> SenderCheck:
    """Whether our receiving server vouches for ``email``'s From address.

    Args:
        email: the parsed email.
        authserv_id: the receiving server's authserv-id; default :func:`configured_authserv_id`.

    Returns:
        The check; ``address`` is set only for a positive, aligned verdict.
    """
    claimed = email.sender.address
    server = (authserv_id or configured_authserv_id()).strip().lower()
    address = email.from_address
    if not address:
        return SenderCheck(None, claimed, "From is not exactly one well-formed address")
    domain = _domain(address)
    if not domain:
        return SenderCheck(None, claimed, "From has no domain IDNA 2008 allows")
    topmost = email.header(HEADER).split("\n")[0].strip()
    if not topmost:
        return SenderCheck(None, claimed, "no Authentication-Results from the receiving server")
    parsed = _parse(topmost)
    if parsed is None:
        return SenderCheck(None, claimed, "the topmost Authentication-Results is unreadable")
    found_id, results = parsed
    if found_id != server:
        return SenderCheck(
            None,
            claimed,
            f"the topmost Authentication-Results is from {found_id[:80]!r}, not {server}",
        )
    # Gmail's guess for a domain without an SPF record is no statement of the domain.
    guessed = "best guess record" in topmost.lower()
    how = _aligned_pass(results, domain, spf=not guessed)
    if how is None:
        summary = ", ".join(f"{method}={result}" for method, result, _ in results) or "none"
        return SenderCheck(
            None, claimed, f"{server} did not authenticate {domain} ({summary[:120]})"
        )
    return SenderCheck(address, claimed, f"{how} for {domain} by {server}")


def authenticated_sender(email: Email, authserv_id: str | None = None) -> str | None:
    """The authenticated sender of ``email`` (see :func:`check_sender`), or None."""
    return check_sender(email, authserv_id).address


Result = tuple[str, str, dict[str, str]]
"""``(method, result, {"ptype.property": value})`` of one resinfo, names lowercased."""


def _parse(header: str) -> tuple[str, list[Result]] | None:
    """The authserv-id and results of one Authentication-Results value, or None if unreadable."""
    import authres

    try:
        parsed: Any = authres.AuthenticationResultsHeader.parse_value(header)
    except Exception:  # authres raises its own SyntaxError and others on malformed input
        return None
    results: list[Result] = []
    for item in parsed.results:
        properties = {
            f"{prop.type}.{prop.name}".lower(): str(prop.value).strip() for prop in item.properties
        }
        results.append((str(item.method).lower(), str(item.result).lower(), properties))
    return str(parsed.authserv_id or "").strip().lower(), results


def _aligned_pass(results: list[Result], domain: str, spf: bool = True) -> str | None:
    """How ``results`` authenticate ``domain`` (``dmarc=pass``...), or None; ``spf``: whether
    an aligned SPF pass counts."""
    for method, result, properties in results:
        if result != "pass":
            continue
        if method == "dmarc" and _domain(properties.get("header.from", "")) == domain:
            return "dmarc=pass"
        if method == "dkim" and domain in (
            _domain(properties.get("header.d", "")),
            _domain(properties.get("header.i", "")),
        ):
            return "aligned dkim=pass"
        if spf and method == "spf" and _domain(properties.get("smtp.mailfrom", "")) == domain:
            return "aligned spf=pass"
    return None


def _domain(value: str) -> str:
    """The domain of an address, ``@domain`` or bare domain, as ``domain_key`` compares it
    ("" when it is none: it then matches no domain)."""
    try:
        return domain_key(value.strip().strip('"').rpartition("@")[2].strip())
    except ValueError:
        return ""


__all__ = [
    "AUTHSERV_ID_VARIABLE",
    "DEFAULT_AUTHSERV_ID",
    "SenderCheck",
    "authenticated_sender",
    "check_sender",
    "configured_authserv_id",
]
