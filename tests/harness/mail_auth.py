"""Authentication-Results as Gmail's receiving servers write them, for test mail that must (or
must not) authenticate its sender (``inboxflow.mail.authentication``)."""

from __future__ import annotations


def gmail_pass(address: str, authserv_id: str = "mx.google.com") -> str:
    """The header value Gmail adds to mail from ``address`` with DKIM, SPF and DMARC passing."""
    domain = address.rpartition("@")[2].lower()
    return (
        f"{authserv_id}; dkim=pass header.i=@{domain} header.s=google header.b=Qm9vdA3x; "
        f"spf=pass (google.com: domain of {address} designates 209.85.220.41 as permitted "
        f"sender) smtp.mailfrom={address}; "
        f"dmarc=pass (p=QUARANTINE sp=QUARANTINE dis=NONE) header.from={domain}"
    )


def gmail_fail(address: str) -> str:
    """The header value Gmail adds to a message claiming ``address`` that fails DMARC."""
    domain = address.rpartition("@")[2].lower()
    return (
        "mx.google.com; spf=fail (google.com: domain of bounce@evil.example does not designate "
        "203.0.113.9 as permitted sender) smtp.mailfrom=bounce@evil.example; "
        f"dmarc=fail (p=REJECT sp=REJECT dis=REJECT) header.from={domain}"
    )


def auth_line(value: str) -> str:
    """``value`` as a raw header line (CRLF-terminated), to put into an .eml."""
    return f"Authentication-Results: {value}\r\n"


def passing(address: str) -> str:
    """A raw Authentication-Results line vouching for ``address``."""
    return auth_line(gmail_pass(address))
