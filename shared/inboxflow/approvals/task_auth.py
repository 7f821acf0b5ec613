"""Who may call ``/timeout`` and ``/digest``: the queue and the scheduler, wherever they are served.

Both endpoints act without a person (a timeout applies the approval's policy, a
digest sweep sends mail), so neither answers an anonymous caller:

- on Cloud Run (``oidc.verification_enabled``: ``K_SERVICE``, or
  ``INBOXFLOW_TASKS_VERIFY``), the caller's Google OIDC token is checked
  (:func:`~inboxflow.approvals.oidc.verify_task_oidc`: Cloud Tasks and Cloud
  Scheduler mint it for the invoker);
- everywhere else (``inboxflow serve``, the dev server, functions-framework run
  by hand), the caller presents ``Authorization: Bearer`` with the **local task
  token**: 32 random bytes, URL-safe, in ``{home}/task-token``, created with mode
  0600 by whichever process needs it first (the server to check a call, the
  embedded queue or the Cloud Tasks emulator's tasks to make one). Whoever can
  read the home may call; nobody else can.

Anything else is a 401 before the service is touched: no digest is sent and no
task record is written.
"""

from __future__ import annotations

import contextlib
import hmac
import os
import secrets
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .errors import ApprovalError
from .oidc import verification_enabled, verify_task_oidc

TOKEN_FILE = "task-token"
"""Under the home: the local task token (mode 0600)."""


def local_task_token(home: Path) -> str:
    """The home's local task token, drawn (and written with mode 0600) the first time.

    Raises:
        OSError: the home cannot be written.
    """
    path = home / TOKEN_FILE
    with contextlib.suppress(FileNotFoundError):
        return _read(path)
    home.mkdir(parents=True, exist_ok=True)
    token = secrets.token_urlsafe(32)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:  # another process drew it first: theirs counts
        return _read(path)
    with os.fdopen(fd, "w", encoding="ascii") as handle:
        handle.write(token)
    return token


def _read(path: Path) -> str:
    """The token in ``path``; its mode narrowed to 0600 when someone widened it."""
    if stat.S_IMODE(path.stat().st_mode) & 0o077:
        path.chmod(0o600)
    token = path.read_text(encoding="ascii").strip()
    if len(token) < 32:
        raise ApprovalError(500, "Misconfigured", f"{path} holds no task token: delete it")
    return token


def bearer_of(request: Any) -> str | None:
    """The ``Authorization: Bearer`` value of ``request``, or None."""
    scheme, _, value = str(request.headers.get("Authorization", "")).partition(" ")
    return value.strip() if scheme.lower() == "bearer" and value.strip() else None


def local_task_check(home: Path, environ: Mapping[str, str]) -> Any:
    """``(request) -> None`` for ``handle_http``'s ``verify_task``: OIDC where verification is
    on (in ``environ``, the entry point's environment), else the home's local task token.

    Raises (from the check):
        ApprovalError: 401 without the token or with another; OIDC's statuses when on.
    """

    def check(request: Any) -> None:
        if verification_enabled(environ):
            verify_task_oidc(request, environ)
            return
        presented = bearer_of(request)
        expected = local_task_token(home)
        if presented is None or not hmac.compare_digest(presented.encode(), expected.encode()):
            raise ApprovalError(
                401, "Unauthorized", f"present the local task token ({home / TOKEN_FILE})"
            )

    return check


def describe(home: Path, environ: Mapping[str, str]) -> str:
    """How ``/timeout`` and ``/digest`` are authenticated here, in one line (``serve`` prints it)."""
    if verification_enabled(environ):
        return "/timeout and /digest: Google OIDC tokens of the tasks invoker"
    return f"/timeout and /digest: the local task token in {home / TOKEN_FILE} (mode 0600)"


__all__ = ["TOKEN_FILE", "bearer_of", "describe", "local_task_check", "local_task_token"]
