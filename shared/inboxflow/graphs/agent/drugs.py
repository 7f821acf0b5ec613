"""The pharmacy agent's drug service: a catalogue of drugs, pharmacies and stock, and reservations.

Adapter: ``EmbeddedDrugs`` (``adapters/embedded_drugs.py``): a catalogue file
(the sample ships in ``inboxflow/graphs/agent/samples/drugs.json``) and
reservations as documents in the checkpoint store, so a reservation made in
one run is found in the next.

Reservation ids derive from a key the caller gives (the effect journal's key):
making the same reservation twice with one key returns the first.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

from ...ports.wired import Service


class DrugCatalogue(ABC):
    """Drugs, where they are in stock, and patients' reservations."""

    @abstractmethod
    def search(self, query: str, limit: int = 5) -> list[dict[str, Any]]:
        """Drugs matching ``query`` (name, active substance, words of either), best first.

        Each: ``name``, ``substance``, ``strength``, ``form``, ``prescription`` (bool),
        ``pharmacies``: ``[{pharmacy_id, name, city, stock}]`` (stock > 0 first).
        """

    @abstractmethod
    def reserve(
        self, patient: str, drug_name: str, pharmacy_id: str | None, key: str
    ) -> dict[str, Any]:
        """Reserve one pack for ``patient``; the first pharmacy with stock when none is named.

        Returns:
            The reservation (``reservation_id``, ``drug``, ``pharmacy_id``, ``status``
            ``active``), or ``{"error": ...}`` when the drug is unknown or out of stock.
        """

    @abstractmethod
    def reservations(self, patient: str, drug_name: str | None = None) -> list[dict[str, Any]]:
        """The patient's active reservations (of ``drug_name`` only, when given)."""

    @abstractmethod
    def cancel(self, patient: str, drug_name: str) -> dict[str, Any]:
        """Cancel the patient's active reservations of ``drug_name``: ``{cancelled: [ids]}``."""


DRUGS = Service[DrugCatalogue]("drugs", DrugCatalogue)
"""The agent's declaration of the service (``Graph(services=...)``, ``ctx.ports.service``)."""
