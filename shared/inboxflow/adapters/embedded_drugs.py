"""The embedded drug catalogue: a JSON catalogue file, reservations in the checkpoint store.

The catalogue: ``{"pharmacies": [{id, name, city}], "drugs": [{name, substance,
strength, form, prescription, stock: {pharmacy_id: packs}}]}``. Reservations are
``reservations/{id}`` documents (``patient``, ``drug``, ``pharmacy_id``, ``status``,
``created_at``), the id derived from the caller's key.
"""

from __future__ import annotations

import hashlib
import json
import unicodedata
from functools import cache
from pathlib import Path
from typing import Any

from ..clock import Clock, SystemClock
from ..graphs.agent.drugs import DrugCatalogue
from ..mail.addresses import address_key_or_none, ascii_lower
from ..ports.documents import DocumentStore
from ..schema import RESERVATIONS

SAMPLE_CATALOGUE = (
    Path(__file__).resolve().parent.parent / "graphs" / "agent" / "samples" / "drugs.json"
)


def fold(text: str) -> str:
    """Lowercase without diacritics (``Paralen`` matches ``paralen``, ``léky`` ``leky``)."""
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


@cache
def _read_catalogue(path: str) -> dict[str, Any]:
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    if not isinstance(data, dict) or "drugs" not in data or "pharmacies" not in data:
        raise ValueError(f"{path}: a drug catalogue needs 'drugs' and 'pharmacies'")
    return data


class EmbeddedDrugs(DrugCatalogue):
    """The catalogue from a file, reservations in ``store``."""

    def __init__(
        self,
        store: DocumentStore,
        catalogue: str | Path = SAMPLE_CATALOGUE,
        clock: Clock | None = None,
    ) -> None:
        self.store = store
        self.clock = clock or SystemClock()
        data = _read_catalogue(str(catalogue))
        self.pharmacies: dict[str, dict[str, Any]] = {p["id"]: p for p in data["pharmacies"]}
        self.drugs: list[dict[str, Any]] = list(data["drugs"])

    def search(self, query: str, limit: int = 5) -> list[dict[str, Any]]:
        words = {
            w for w in "".join(c if c.isalnum() else " " for c in fold(query)).split() if len(w) > 2
        }
        scored = []
        for drug in self.drugs:
            name_words = set(fold(f"{drug['name']} {drug['substance']}").split())
            score = len(words & name_words)
            if score:
                scored.append((-score, drug["name"], drug))
        return [self._view(drug) for _, _, drug in sorted(scored)[: max(1, limit)]]

    def _view(self, drug: dict[str, Any]) -> dict[str, Any]:
        stock = dict(drug.get("stock") or {})
        pharmacies = [
            {
                "pharmacy_id": pid,
                "name": self.pharmacies[pid]["name"],
                "city": self.pharmacies[pid]["city"],
                "stock": int(packs),
            }
            for pid, packs in stock.items()
            if pid in self.pharmacies
        ]
        pharmacies.sort(key=lambda p: (p["stock"] <= 0, p["pharmacy_id"]))
        return {
            "name": drug["name"],
            "substance": drug["substance"],
            "strength": drug.get("strength", ""),
            "form": drug.get("form", ""),
            "prescription": bool(drug.get("prescription", False)),
            "pharmacies": pharmacies,
        }

    def _find(self, drug_name: str) -> dict[str, Any] | None:
        wanted = fold(drug_name).strip()
        for drug in self.drugs:
            if fold(drug["name"]) == wanted:
                return drug
        found = self.search(drug_name, 1)
        return next((d for d in self.drugs if found and d["name"] == found[0]["name"]), None)

    def reserve(
        self, patient: str, drug_name: str, pharmacy_id: str | None, key: str
    ) -> dict[str, Any]:
        drug = self._find(drug_name)
        if drug is None:
            return {"error": f"no drug {drug_name!r} in the catalogue"}
        view = self._view(drug)
        if drug.get("prescription"):
            return {"error": f"{drug['name']} needs a prescription: it cannot be reserved by email"}
        in_stock = [p for p in view["pharmacies"] if p["stock"] > 0]
        if pharmacy_id is not None:
            in_stock = [p for p in in_stock if p["pharmacy_id"] == pharmacy_id]
        if not in_stock:
            where = f" at {pharmacy_id}" if pharmacy_id else ""
            return {"error": f"{drug['name']} is out of stock{where}"}
        chosen = in_stock[0]
        reservation_id = "r-" + hashlib.sha256(key.encode()).hexdigest()[:16]
        doc = {
            "reservation_id": reservation_id,
            "patient": _patient_key(patient),
            "drug": drug["name"],
            "pharmacy_id": chosen["pharmacy_id"],
            "pharmacy": chosen["name"],
            "status": "active",
            "created_at": self.clock.now(),
        }
        path = RESERVATIONS.path(reservation_id)
        if not self.store.create(path, doc):
            return dict(self.store.get(path) or doc)
        return doc

    def reservations(self, patient: str, drug_name: str | None = None) -> list[dict[str, Any]]:
        found = self.store.list(
            RESERVATIONS.name,
            where=[("patient", "==", _patient_key(patient)), ("status", "==", "active")],
        )
        docs = [doc for _, doc in found]
        if drug_name is not None:
            drug = self._find(drug_name)
            name = drug["name"] if drug else drug_name
            docs = [d for d in docs if fold(d["drug"]) == fold(name)]
        return sorted(docs, key=lambda d: (d.get("created_at") or 0, d["reservation_id"]))

    def cancel(self, patient: str, drug_name: str) -> dict[str, Any]:
        cancelled = []
        for doc in self.reservations(patient, drug_name):
            self.store.set(
                RESERVATIONS.path(doc["reservation_id"]),
                {**doc, "status": "cancelled", "cancelled_at": self.clock.now()},
            )
            cancelled.append(doc["reservation_id"])
        return {"cancelled": cancelled}


def _patient_key(patient: str) -> str:
    """A patient's address as reservations are kept and found: its ``address_key`` (no Unicode
    case folding: a look-alike is another patient)."""
    return address_key_or_none(patient) or ascii_lower(patient.strip())
