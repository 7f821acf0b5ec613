"""A CRM over HTTP: ``GET {base}/customers?email=ADDRESS`` with a bearer key.

The service answers ``200 {"customers": [customer, ...]}`` (none or one; more
is refused as ambiguous) or ``404`` for nobody; a customer has the fields of
``graphs.support.crm.Customer``. Each request has a timeout; connection errors,
timeouts, 429 and 5xx are tried again (``attempts`` in all, with backoff,
``Retry-After`` honoured up to ``max_backoff_s``), then ``CRMUnavailable``
lets the runtime redeliver the step. 401/403, other 4xx and unreadable
answers raise ``CRMError``.

``choose_crm`` picks it when ``INBOXFLOW_CRM_URL`` is set (key in
``INBOXFLOW_CRM_API_KEY``, timeout ``INBOXFLOW_CRM_TIMEOUT_S``), else the
embedded sample CRM.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import requests
from pydantic import ValidationError

from ..graphs.support.crm import CRM, CRMError, CRMUnavailable, Customer
from ..mail.addresses import address_key_or_none, same_address

log = logging.getLogger(__name__)

RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
URL_VARIABLE = "INBOXFLOW_CRM_URL"
KEY_VARIABLE = "INBOXFLOW_CRM_API_KEY"
TIMEOUT_VARIABLE = "INBOXFLOW_CRM_TIMEOUT_S"


@dataclass(eq=False)
class HttpCRM(CRM):
    """Customers from a REST CRM.

    Args:
        base_url: the service's root (``https://crm.example.com/api``).
        api_key: sent as ``Authorization: Bearer``; None sends none.
        timeout_s: connect and read timeout of each request.
        attempts: tries per lookup (transient failures only).
        backoff_s: the first wait between tries (doubled each time).
        max_backoff_s: the longest wait, ``Retry-After`` included.
        sleep: how to wait (tests pass a recorder).
        session: the HTTP session (one is made when omitted).
    """

    base_url: str
    api_key: str | None = field(default=None, repr=False)
    timeout_s: float = 5.0
    attempts: int = 3
    backoff_s: float = 0.2
    max_backoff_s: float = 5.0
    sleep: Callable[[float], None] = time.sleep
    session: requests.Session = field(default_factory=requests.Session)

    def __post_init__(self) -> None:
        if not self.base_url.startswith(("http://", "https://")):
            raise ValueError(f"{URL_VARIABLE}: {self.base_url!r} is not an http(s) URL")
        if self.attempts < 1 or self.timeout_s <= 0:
            raise ValueError("the CRM needs at least one attempt and a positive timeout")
        self.base_url = self.base_url.rstrip("/")

    def find_by_email(self, address: str) -> Customer | None:
        email = address_key_or_none(address)
        if email is None:
            return None
        response = self._get("/customers", {"email": email})
        if response.status_code == 404:
            return None
        try:
            body = response.json()
            found = body["customers"]
            if not isinstance(found, list):
                raise TypeError("customers is not a list")
        except (ValueError, KeyError, TypeError) as exc:
            raise CRMError(f"CRM answer for {email} is not {{'customers': [...]}}: {exc}") from None
        if len(found) > 1:
            raise CRMError(f"CRM has {len(found)} customers for {email}: refusing to guess")
        if not found:
            return None
        try:
            customer = Customer.model_validate(found[0])
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(map(str, first["loc"]))
            raise CRMError(f"CRM customer for {email}: {where}: {first['msg']}") from None
        if not same_address(customer.email, email):
            # A CRM that folds Unicode case answers a look-alike with the customer it imitates.
            log.warning("CRM answered %s with the customer of another address", email)
            return None
        return customer

    def _get(self, path: str, params: Mapping[str, str]) -> requests.Response:
        headers = {"Accept": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        url = f"{self.base_url}{path}"
        last = ""
        for attempt in range(1, self.attempts + 1):
            wait = self.backoff_s * 2 ** (attempt - 1)
            try:
                response = self.session.get(
                    url, params=params, headers=headers, timeout=self.timeout_s
                )
            except (requests.ConnectionError, requests.Timeout) as exc:
                last = f"{type(exc).__name__}: {exc}"
            else:
                if response.status_code in (401, 403):
                    raise CRMError(
                        f"CRM refused the request ({response.status_code}): check {KEY_VARIABLE}"
                    )
                if response.status_code not in RETRY_STATUSES:
                    if response.status_code >= 400 and response.status_code != 404:
                        raise CRMError(
                            f"CRM answered {response.status_code}: {response.text[:200]}"
                        )
                    return response
                last = f"HTTP {response.status_code}"
                wait = _retry_after(response, wait)
            if attempt < self.attempts:
                self.sleep(min(wait, self.max_backoff_s))
        raise CRMUnavailable(f"CRM {url} unavailable after {self.attempts} attempts ({last})")


def _retry_after(response: requests.Response, default: float) -> float:
    try:
        return max(0.0, float(response.headers.get("Retry-After", "")))
    except ValueError:
        return default


def choose_crm(environ: Mapping[str, str]) -> CRM:
    """The HTTP CRM when ``INBOXFLOW_CRM_URL`` is set, else the embedded sample CRM.

    Raises:
        ValueError: the URL or the timeout is not valid.
    """
    url = environ.get(URL_VARIABLE, "").strip()
    if not url:
        from .embedded_crm import EmbeddedCRM

        return EmbeddedCRM()
    raw_timeout = environ.get(TIMEOUT_VARIABLE, "5")
    try:
        timeout_s = float(raw_timeout)
    except ValueError:
        raise ValueError(f"{TIMEOUT_VARIABLE}: {raw_timeout!r} is not a number") from None
    return HttpCRM(url, environ.get(KEY_VARIABLE) or None, timeout_s=timeout_s)


__all__ = ["HttpCRM", "choose_crm"]
