"""The quoting API's client, built on its first call (kept out of ``services``' imports)."""

from __future__ import annotations

from collections.abc import Callable

from ..ports.quoting import Applicant, Driver, Quote, QuoteSession, QuotingService, Rate, Vehicle


class LazyQuoting(QuotingService):
    """The quoting API's client, built on first call (``requests`` is imported only then)."""

    def __init__(self, build: Callable[[], QuotingService]) -> None:
        self._build = build
        self._service: QuotingService | None = None

    @property
    def service(self) -> QuotingService:
        """The underlying service (built now if needed)."""
        if self._service is None:
            self._service = self._build()
        return self._service

    def initiate(self, applicant: Applicant, key: str) -> QuoteSession:
        return self.service.initiate(applicant, key)

    def add_driver(self, quote_id: str, driver: Driver, key: str) -> Quote:
        return self.service.add_driver(quote_id, driver, key)

    def add_vehicle(self, quote_id: str, vehicle: Vehicle, key: str) -> Quote:
        return self.service.add_vehicle(quote_id, vehicle, key)

    def rate(self, quote_id: str, key: str) -> Rate:
        return self.service.rate(quote_id, key)

    def get(self, quote_id: str) -> Quote:
        return self.service.get(quote_id)
