"""An embedded CRM with sample customers on each plan (the demo and the tests use it)."""

from __future__ import annotations

from collections.abc import Iterable

from ..ports.crm import CRM, Customer

SAMPLE_CUSTOMERS: tuple[Customer, ...] = (
    Customer(
        customer_id="cus_free_lucia",
        name="Lucía Fernández",
        email="lucia.fernandez@example.es",
        plan="free",
        tenure_months=3,
        seats=1,
        region="eu",
    ),
    Customer(
        customer_id="cus_free_sam",
        name="Sam Okafor",
        email="sam.okafor@example.org",
        plan="free",
        tenure_months=1,
        seats=1,
        region="us",
    ),
    Customer(
        customer_id="cus_pro_brightpath",
        name="Brightpath Studio",
        email="ops@brightpath.example",
        plan="pro",
        tenure_months=14,
        seats=12,
        region="eu",
    ),
    Customer(
        customer_id="cus_ent_northwind",
        name="Northwind Logistics",
        email="it-admin@northwind.example",
        plan="enterprise",
        tenure_months=38,
        seats=450,
        region="us",
    ),
    Customer(
        customer_id="cus_ent_siam",
        name="Siam Retail Group",
        email="support-lead@siamretail.example",
        plan="enterprise",
        tenure_months=22,
        seats=180,
        region="apac",
    ),
)


class EmbeddedCRM(CRM):
    """Customers held in memory; the samples unless others are given."""

    def __init__(self, customers: Iterable[Customer] = SAMPLE_CUSTOMERS) -> None:
        self._by_email = {c.email.lower(): c for c in customers}

    def find_by_email(self, address: str) -> Customer | None:
        return self._by_email.get(address.strip().lower())
