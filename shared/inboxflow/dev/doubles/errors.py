"""Errors of the Google API doubles, in Google's JSON error format."""

from __future__ import annotations

from typing import Any

STATUS_NAMES = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    409: "ALREADY_EXISTS",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
}
DEFAULT_REASONS = {
    400: "badRequest",
    401: "authError",
    403: "userRateLimitExceeded",
    404: "notFound",
    409: "duplicate",
    429: "rateLimitExceeded",
    500: "backendError",
    503: "backendError",
}
DEFAULT_MESSAGES = {
    403: "User-rate limit exceeded.",
    429: "Too many concurrent requests for user.",
    500: "Backend Error",
    503: "The service is currently unavailable.",
}


class ApiError(Exception):
    """An error answer: HTTP status, message and Google's ``reason``."""

    def __init__(self, status: int, message: str = "", reason: str | None = None) -> None:
        super().__init__(message or DEFAULT_MESSAGES.get(status, "Error"))
        self.status = status
        self.message = message or DEFAULT_MESSAGES.get(status, "Error")
        self.reason = reason or DEFAULT_REASONS.get(status, "unknown")

    def body(self) -> dict[str, Any]:
        """``{"error": {code, message, errors: [{message, domain, reason}], status}}``."""
        return {
            "error": {
                "code": self.status,
                "message": self.message,
                "errors": [{"message": self.message, "domain": "global", "reason": self.reason}],
                "status": STATUS_NAMES.get(self.status, "UNKNOWN"),
            }
        }


__all__ = ["ApiError"]


def owner_key(name: str, alias: str, refusal: str, reason: str) -> str:
    """``name`` of a mailbox or calendar as a key (trimmed, lower case).

    The doubles serve several owners at once, so Google's alias of the caller's own
    (``me``, ``primary``) names none: it is refused with a 400 saying ``refusal``.
    """
    key = name.strip().lower()
    if key == alias:
        raise ApiError(400, refusal, reason)
    return key
