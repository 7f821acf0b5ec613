"""One identity for an email address: the key every comparison of addresses uses.

Two addresses are the same person's only when their keys are equal. The key is the
address trimmed of spaces and angle brackets, its local part lowercased in ASCII only
(``Kim.Lee`` is ``kim.lee``; the long s, the Kelvin sign or fullwidth letters are never folded
into ASCII ones), and its domain ASCII-lowercased and IDNA 2008 encoded (``bücher.de`` is
``xn--bcher-kva.de``; ``gma\u0131l.com`` with a dotless i is ``xn--gmal-nza.com``, not
``gmail.com``). A domain IDNA 2008 refuses (fullwidth forms, the long s, the Kelvin sign)
is not an address at all. Unicode case folding (``str.casefold``, ``re.IGNORECASE`` on
``str`` patterns) must never compare addresses: it makes a look-alike one person with
the address it imitates.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import idna

_ASCII_UPPER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
_FORBIDDEN = frozenset('<>()[]\\,;:"')
_SPACE_OR_CONTROL = re.compile(r"[\s\x00-\x1f\x7f]")
"""What ``str.isspace`` calls whitespace (``\\s`` of a ``str`` pattern is the same set) and the
ASCII control characters."""


def ascii_lower(text: str) -> str:
    """``text`` with A-Z lowercased and every other character as it was."""
    return text.translate(_ASCII_UPPER)


def address_key(address: str) -> str:
    """The key an address is compared by (see the module docstring).

    Raises:
        ValueError: not one address (``local@domain``, no spaces or control characters),
            or a domain IDNA 2008 does not allow.
    """
    value = address.strip().strip("<>").strip() if isinstance(address, str) else ""
    local, at, domain = value.rpartition("@")
    domain = domain.rstrip(".")
    if (
        not at
        or not local
        or "." not in domain
        or _SPACE_OR_CONTROL.search(value)
        or _FORBIDDEN.intersection(domain)
        or "@" in local.strip('"')
    ):
        raise ValueError(f"not an email address: {address!r}")
    return f"{ascii_lower(local)}@{domain_key(domain)}"


def domain_key(domain: str) -> str:
    """A domain as it is compared: ASCII-lowercased, IDNA 2008 encoded, no final dot.

    Raises:
        ValueError: a domain IDNA 2008 does not allow.
    """
    lowered = ascii_lower(domain.strip().rstrip("."))
    if lowered.isascii():
        if not lowered or any(not label for label in lowered.split(".")):
            raise ValueError(f"not a domain: {domain!r}")
        return lowered
    try:
        return idna.encode(lowered, uts46=False).decode("ascii")
    except idna.IDNAError as error:
        raise ValueError(f"not a domain IDNA 2008 allows: {domain!r} ({error})") from None


def _key_or_none(key: Callable[[str], str], value: str | None) -> str | None:
    """``key(value)``, or None where ``key`` refuses it (``ValueError``) or it is None."""
    try:
        return key(value or "")
    except ValueError:
        return None


def address_key_or_none(address: str | None) -> str | None:
    """``address_key(address)``, or None where it is not an address."""
    return _key_or_none(address_key, address)


def same_address(first: str | None, second: str | None) -> bool:
    """Whether both are addresses and name the same mailbox (equal keys)."""
    key = address_key_or_none(first)
    return key is not None and key == address_key_or_none(second)


def domain_key_or_none(domain: str | None) -> str | None:
    """``domain_key(domain)``, or None where it is not a domain IDNA 2008 allows."""
    return _key_or_none(domain_key, domain)


def within_domain(domain: str | None, parent: str | None) -> bool:
    """Whether ``domain`` is ``parent`` or one of its subdomains (by ``domain_key``; False when
    either is not a domain)."""
    key, parent_key = domain_key_or_none(domain), domain_key_or_none(parent)
    if key is None or parent_key is None:
        return False
    return key == parent_key or key.endswith(f".{parent_key}")
