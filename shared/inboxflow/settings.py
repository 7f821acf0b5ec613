"""Settings from the environment, and the one place that picks the adapters.

Rules (first match wins):
- store: ``INBOXFLOW_STORE`` (sqlite|firestore); else firestore when
  ``FIRESTORE_EMULATOR_HOST`` is set or when running on Cloud Run/Functions
  (``K_SERVICE``); else the embedded SQLite file under ``INBOXFLOW_HOME``.
- bus: ``INBOXFLOW_BUS`` (inprocess|pubsub); else pubsub when
  ``PUBSUB_EMULATOR_HOST`` or ``K_SERVICE`` is set; else in-process.
- tasks: ``INBOXFLOW_TASKS`` (sqlite|cloudtasks); else cloudtasks when
  ``CLOUD_TASKS_EMULATOR_HOST`` or ``K_SERVICE`` is set; else SQLite-scheduled.
- workspace: ``google`` (Gmail and Calendar through the Google API) when
  ``INBOXFLOW_GOOGLE_API_URL`` (the local double) or Gmail credentials
  (``INBOXFLOW_GMAIL_CREDENTIALS[_SECRET]``) are set; else ``store`` (embedded).
- quoting: the quoting API at ``INBOXFLOW_QUOTING_URL`` (``HttpQuoting``) when it
  is set; else none is wired and the planner uses the embedded one.
- dead-lettering: Pub/Sub's own dead-letter policy (production), unless
  ``INBOXFLOW_DEAD_LETTERING=function`` (the emulated topology): then the function
  counts failed deliveries itself (``delivery_attempts``) under a
  ``RedeliveryPolicy`` of ``INBOXFLOW_MAX_DELIVERY_ATTEMPTS`` (default 10) and
  ``INBOXFLOW_RETRY_MINIMUM_BACKOFF_S`` / ``..._MAXIMUM_BACKOFF_S`` (10 and 600,
  Terraform's defaults).

``inboxflow.services.build_runtime`` turns these into adapters; nothing else does.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

StoreKind = Literal["sqlite", "firestore"]
BusKind = Literal["inprocess", "pubsub"]
TasksKind = Literal["sqlite", "cloudtasks"]
WorkspaceKind = Literal["store", "google"]


def _workspace_kind(env: Mapping[str, str]) -> WorkspaceKind:
    google = (
        env.get("INBOXFLOW_GOOGLE_API_URL")
        or env.get("INBOXFLOW_GMAIL_CREDENTIALS")
        or env.get("INBOXFLOW_GMAIL_CREDENTIALS_SECRET")
    )
    return "google" if google else "store"


def _choice(value: str | None, allowed: tuple[str, ...], variable: str) -> str | None:
    if value is None or value == "":
        return None
    if value not in allowed:
        raise ValueError(f"{variable}={value!r}: expected one of {', '.join(allowed)}")
    return value


@dataclass(frozen=True)
class RedeliveryPolicy:
    """When a function that counts its own failed deliveries gives a message up.

    Attributes:
        max_attempts: failed deliveries before the message is dead-lettered.
        minimum_backoff_s, maximum_backoff_s: the retry policy production's push
            subscription has (exponential, doubling from the minimum).
    """

    max_attempts: int = 10
    minimum_backoff_s: float = 10.0
    maximum_backoff_s: float = 600.0

    @property
    def budget_s(self) -> float:
        """How long production's retry policy spreads ``max_attempts`` deliveries over."""
        return sum(
            min(self.minimum_backoff_s * 2**i, self.maximum_backoff_s)
            for i in range(self.max_attempts - 1)
        )

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> RedeliveryPolicy | None:
        """The policy of ``INBOXFLOW_DEAD_LETTERING=function``; None for ``pubsub`` (the default)."""
        mode = _choice(
            env.get("INBOXFLOW_DEAD_LETTERING"), ("pubsub", "function"), "INBOXFLOW_DEAD_LETTERING"
        )
        if mode != "function":
            return None
        defaults = cls()
        policy = cls(
            max_attempts=int(env.get("INBOXFLOW_MAX_DELIVERY_ATTEMPTS") or defaults.max_attempts),
            minimum_backoff_s=float(
                env.get("INBOXFLOW_RETRY_MINIMUM_BACKOFF_S") or defaults.minimum_backoff_s
            ),
            maximum_backoff_s=float(
                env.get("INBOXFLOW_RETRY_MAXIMUM_BACKOFF_S") or defaults.maximum_backoff_s
            ),
        )
        if policy.max_attempts < 1 or policy.minimum_backoff_s < 0:
            raise ValueError(f"INBOXFLOW_MAX_DELIVERY_ATTEMPTS / backoff out of range: {policy}")
        return policy


@dataclass(frozen=True)
class Settings:
    """Deployment settings, read once at start-up."""

    home: Path
    project: str
    store: StoreKind
    bus: BusKind
    tasks: TasksKind
    node: str | None = None
    region: str = "us-central1"
    workspace: WorkspaceKind | None = None
    """``None``: chosen from ``environ`` (see the module docstring)."""
    quoting_url: str | None = None
    """The quoting API's base URL (``None``: ``INBOXFLOW_QUOTING_URL`` of ``environ``, if any)."""
    redelivery: RedeliveryPolicy | None = None
    """Set when the functions dead-letter by counting (the emulator); None: Pub/Sub does it."""
    environ: Mapping[str, str] = field(default_factory=dict, repr=False, compare=False)
    """The variables the settings were read from (the entry point's environment; empty when the
    settings are built by hand); adapters that need more (credentials) get them from here."""

    def __post_init__(self) -> None:
        if self.workspace is None:
            object.__setattr__(self, "workspace", _workspace_kind(self.environ))
        if self.quoting_url is None:
            object.__setattr__(
                self, "quoting_url", self.environ.get("INBOXFLOW_QUOTING_URL", "").strip() or None
            )

    @property
    def sqlite_path(self) -> Path:
        """The embedded store's file."""
        return self.home / "inboxflow.db"

    @classmethod
    def from_env(cls, environ: Mapping[str, str]) -> Settings:
        """Read settings from ``environ`` (what the entry point read from the process)."""
        env = environ
        in_cloud = bool(env.get("K_SERVICE"))
        store = _choice(env.get("INBOXFLOW_STORE"), ("sqlite", "firestore"), "INBOXFLOW_STORE") or (
            "firestore" if env.get("FIRESTORE_EMULATOR_HOST") or in_cloud else "sqlite"
        )
        bus = _choice(env.get("INBOXFLOW_BUS"), ("inprocess", "pubsub"), "INBOXFLOW_BUS") or (
            "pubsub" if env.get("PUBSUB_EMULATOR_HOST") or in_cloud else "inprocess"
        )
        tasks = _choice(
            env.get("INBOXFLOW_TASKS"), ("sqlite", "cloudtasks"), "INBOXFLOW_TASKS"
        ) or ("cloudtasks" if env.get("CLOUD_TASKS_EMULATOR_HOST") or in_cloud else "sqlite")
        return cls(
            home=Path(env.get("INBOXFLOW_HOME", ".inboxflow")),
            project=env.get("GOOGLE_CLOUD_PROJECT")
            or env.get("GCLOUD_PROJECT")
            or "inboxflow-local",
            store=store,  # type: ignore[arg-type]
            bus=bus,  # type: ignore[arg-type]
            tasks=tasks,  # type: ignore[arg-type]
            node=env.get("INBOXFLOW_NODE") or None,
            region=env.get("INBOXFLOW_REGION", "us-central1"),
            workspace=_workspace_kind(env),
            redelivery=RedeliveryPolicy.from_env(env),
            environ=dict(env),
        )
