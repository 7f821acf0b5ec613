"""The one Google API layer: its failure table, once, on real ``HttpError`` objects; then the
same answers through both of its users (GoogleApiGmailReader, GoogleWorkspace) on the double."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httplib2
import pytest
from googleapiclient.errors import HttpError

from inboxflow.adapters.google_api import (
    ApiFailure,
    FailureKind,
    GoogleApiConnection,
    PortErrors,
    classify,
    failure_of,
    http_error_failure,
)
from inboxflow.adapters.google_gmail_reader import GoogleApiGmailReader
from inboxflow.adapters.google_workspace import GoogleWorkspace
from inboxflow.adapters.sqlite_store import SqliteCheckpointStore
from inboxflow.dev.doubles.errors import ApiError
from inboxflow.dev.doubles.google_api import GoogleApiDouble
from inboxflow.errors import RetryableError
from inboxflow.ports.gmail_reader import GmailError

MAILBOX = "maya.chen@brightlane.io"
RATE, DOWN, GONE, NO = (
    FailureKind.RATE_LIMITED,
    FailureKind.UNAVAILABLE,
    FailureKind.NOT_FOUND,
    FailureKind.PERMANENT,
)

TABLE = [
    # status, reason (Google's errors[].reason), kind
    (429, "rateLimitExceeded", RATE),
    (429, None, RATE),
    (403, "rateLimitExceeded", RATE),
    (403, "userRateLimitExceeded", RATE),
    (403, "quotaExceeded", RATE),
    (403, "forbidden", NO),
    (403, "insufficientPermissions", NO),
    (403, "domainPolicy", NO),
    (408, None, DOWN),
    (500, "backendError", DOWN),
    (502, None, DOWN),
    (503, "backendError", DOWN),
    (504, None, DOWN),
    (404, "notFound", GONE),
    (400, "invalidArgument", NO),
    (401, "authError", NO),
    (409, "duplicate", NO),
    (412, None, NO),
]


def http_error(status: int, body: Any) -> HttpError:
    content = body if isinstance(body, bytes) else json.dumps(body).encode()
    return HttpError(httplib2.Response({"status": status}), content, uri="https://example/x")


@pytest.mark.parametrize(("status", "reason", "kind"), TABLE)
def test_the_failure_table(status: int, reason: str | None, kind: FailureKind) -> None:
    error = http_error(status, ApiError(status, "Some message.", reason).body())
    failure = http_error_failure(error, "gmail.users.messages.list")
    assert failure == ApiFailure(
        kind, status, f"gmail.users.messages.list answered {status}: Some message."
    )
    assert failure.kind.retryable == (kind in (RATE, DOWN))


def test_rate_limit_reasons_in_error_info_details_count_too() -> None:
    body = {
        "error": {
            "code": 403,
            "message": "Quota exceeded for quota metric 'Queries'.",
            "status": "PERMISSION_DENIED",
            "details": [
                {
                    "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                    "reason": "RATE_LIMIT_EXCEEDED",
                    "domain": "googleapis.com",
                }
            ],
        }
    }
    assert http_error_failure(http_error(403, body)).kind is RATE
    body["error"]["details"][0]["reason"] = "ACCESS_TOKEN_SCOPE_INSUFFICIENT"
    assert http_error_failure(http_error(403, body)).kind is NO


def test_a_403_without_reasons_is_a_rate_limit_only_when_its_message_says_so() -> None:
    assert classify(403, [], "User Rate Limit Exceeded") is RATE
    assert classify(403, [], "The caller does not have permission") is NO
    assert classify(403, ["forbidden"], "rate limit mentioned in passing") is NO


def test_a_body_that_is_not_json_is_judged_by_its_status() -> None:
    assert http_error_failure(http_error(502, b"<html>Bad Gateway</html>")).kind is DOWN
    assert http_error_failure(http_error(403, b"<html>Forbidden</html>")).kind is NO


def test_transport_errors_are_unavailable_and_other_exceptions_are_not_ours() -> None:
    refused = failure_of(ConnectionRefusedError("refused"), "calendar.freebusy.query")
    assert refused is not None and (refused.kind, refused.status) == (DOWN, 0)
    assert "calendar.freebusy.query: no answer" in refused.message
    timed_out = failure_of(TimeoutError("timed out"))
    assert timed_out is not None and timed_out.kind is DOWN
    lost = failure_of(httplib2.ServerNotFoundError("no such host"))
    assert lost is not None and lost.kind is DOWN
    assert failure_of(KeyError("x")) is None


class Refused(Exception):
    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


def test_port_errors_raise_the_ports_own_types() -> None:
    class Expired(GmailError):
        pass

    errors = PortErrors(rate_limited=GmailError, unavailable=GmailError, permanent=Refused)
    assert isinstance(errors.error(ApiFailure(NO, 400, "bad")), Refused)
    assert isinstance(errors.error(ApiFailure(GONE, 404, "gone")), Refused)
    expired = errors.with_not_found(Expired).error(ApiFailure(GONE, 404, "too old"))
    assert isinstance(expired, Expired) and expired.status == 404 and str(expired) == "too old"


# --- the same answers through both adapters on the double -------------------------------------


@pytest.fixture
def double() -> Iterator[GoogleApiDouble]:
    with GoogleApiDouble() as running:
        yield running


@pytest.fixture
def workspace(tmp_path: Path, double: GoogleApiDouble) -> Iterator[GoogleWorkspace]:
    store = SqliteCheckpointStore(tmp_path / "w.db")
    yield GoogleWorkspace(MAILBOX, store, api_url=double.url, num_retries=0)
    store.close()


@pytest.mark.parametrize(("status", "reason", "kind"), [row for row in TABLE if row[2] != GONE])
def test_both_adapters_treat_an_answer_alike(
    double: GoogleApiDouble,
    workspace: GoogleWorkspace,
    status: int,
    reason: str | None,
    kind: FailureKind,
) -> None:
    reader = GoogleApiGmailReader(api_url=double.url, environ=os.environ)
    double.fail_next("messages.list", status, reason=reason, times=2)
    with pytest.raises(GmailError) as read:
        reader.list_messages(MAILBOX, ["INBOX"], "")
    with pytest.raises(Exception) as wrote:
        workspace.mark_as_read("someone@example.com")  # looks the message up: messages.list
    assert isinstance(read.value, RetryableError) == kind.retryable
    assert isinstance(wrote.value, RetryableError) == kind.retryable
    assert read.value.status == wrote.value.status == status  # type: ignore[attr-defined]


def test_reads_are_retried_on_retryable_answers_with_backoff(double: GoogleApiDouble) -> None:
    waits: list[float] = []
    api = GoogleApiConnection(double.url, num_retries=3, sleep=waits.append, environ=os.environ)
    errors = PortErrors(rate_limited=GmailError, unavailable=GmailError, permanent=GmailError)
    double.fail_next("getProfile", 408)
    double.fail_next("getProfile", 403, reason="quotaExceeded")
    double.fail_next("getProfile", 503)
    profile = api.execute(
        api.service("gmail", "v1", MAILBOX).users().getProfile(userId=MAILBOX), errors
    )
    assert profile["emailAddress"] == MAILBOX
    assert len(waits) == 3 and all(0 < w <= 30 for w in waits) and waits[2] >= 2
    double.fail_next("getProfile", 403, reason="forbidden")
    with pytest.raises(GmailError, match="403"):
        api.execute(api.service("gmail", "v1", MAILBOX).users().getProfile(userId=MAILBOX), errors)
    assert len(waits) == 3  # a permanent answer is not retried
