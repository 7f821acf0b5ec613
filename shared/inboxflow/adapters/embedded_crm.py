"""An embedded CRM with sample customers on each plan (the demo and the tests use it)."""

from __future__ import annotations

from collections.abc import Iterable

from ..graphs.support.crm import CRM, Customer
from ..mail.addresses import address_key_or_none

_FIELDS = ("customer_id", "name", "email", "plan", "tenure_months", "seats", "region")
_SAMPLES = (
    ("cus_free_lucia", "Lucía Fernández", "lucia.fernandez@example.es", "free", 3, 1, "eu"),
    ("cus_free_sam", "Sam Okafor", "sam.okafor@example.org", "free", 1, 1, "us"),
    ("cus_pro_brightpath", "Brightpath Studio", "ops@brightpath.example", "pro", 14, 12, "eu"),
    (
        "cus_ent_northwind",
        "Northwind Logistics",
        "it-admin@northwind.example",
        "enterprise",
        38,
        450,
        "us",
    ),
    (
        "cus_ent_siam",
        "Siam Retail Group",
        "support-lead@siamretail.example",
        "enterprise",
        22,
        180,
        "apac",
    ),
)
SAMPLE_CUSTOMERS: tuple[Customer, ...] = tuple(
    Customer.model_validate(dict(zip(_FIELDS, row, strict=True))) for row in _SAMPLES
)


class EmbeddedCRM(CRM):
    """Customers held in memory; the samples unless others are given."""

    def __init__(self, customers: Iterable[Customer] = SAMPLE_CUSTOMERS) -> None:
        self._by_email = {address_key_or_none(c.email): c for c in customers}

    def find_by_email(self, address: str) -> Customer | None:
        key = address_key_or_none(address)
        return None if key is None else self._by_email.get(key)
