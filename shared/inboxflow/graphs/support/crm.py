"""The support desk's CRM service: who a customer is, looked up by their email address.

Adapters: ``EmbeddedCRM`` (``adapters/embedded_crm.py``, the sample customers) and
``HttpCRM`` (``adapters/http_crm.py``, a REST CRM at ``INBOXFLOW_CRM_URL``).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Literal

from pydantic import BaseModel, Field

from ...errors import NodeFailed, RetryableError
from ...ports.wired import Service
from ...schema import guest_customer_id

Plan = Literal["free", "pro", "enterprise"]


class Customer(BaseModel):
    """One customer account as the support desk sees it.

    Attributes:
        customer_id: stable id (``cus_...``), part of every ticket path.
        name: the customer's (or company's) name.
        email: the address they write from (lowercase).
        plan: ``free``, ``pro`` or ``enterprise``.
        tenure_months: months since they signed up.
        seats: licensed seats.
        region: where the account is hosted (``eu``, ``us``...).
    """

    customer_id: str
    name: str
    email: str
    plan: Plan
    tenure_months: int = Field(ge=0)
    seats: int = Field(ge=1)
    region: str


def guest_customer(address: str, name: str | None = None) -> Customer:
    """A sender the CRM does not know, as a ``free``-plan prospect.

    The id is ``schema.guest_customer_id``: ``guest_`` and a hash of ``address``, so every
    message from that address lands on the same guest's tickets (and a look-alike's elsewhere).

    Args:
        address: the sender's ``mail.addresses.address_key`` (the caller's: no port parses
            addresses, and no Unicode case folding may make a look-alike the same guest).
        name: the sender's display name.
    """
    email = address.strip()
    return Customer(
        customer_id=guest_customer_id(email),
        name=(name or "").strip() or email,
        email=email,
        plan="free",
        tenure_months=0,
        seats=1,
        region="unknown",
    )


class CRMError(NodeFailed):
    """The CRM refused the request or answered something unreadable (retrying cannot help)."""


class CRMUnavailable(RetryableError):
    """The CRM timed out or failed transiently through the adapter's own retries."""


class CRM(ABC):
    """Customer records."""

    @abstractmethod
    def find_by_email(self, address: str) -> Customer | None:
        """The customer writing from ``address`` (case-insensitive), or None.

        Raises:
            CRMError: the CRM refused the request or its answer is unreadable.
            CRMUnavailable: the CRM stayed unavailable through the adapter's retries.
        """


CUSTOMERS = Service[CRM]("crm", CRM)
"""The support desk's declaration of the service (``Graph(services=...)``)."""
