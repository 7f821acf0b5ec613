"""Dead-lettering counted by the function (the emulator's topology): the count, the budget
production's retry policy spreads its attempts over, and what a failing store changes."""

from __future__ import annotations

from pathlib import Path

import pytest

from inboxflow.adapters.inprocess_bus import InProcessBus
from inboxflow.adapters.sqlite_store import SqliteCheckpointStore
from inboxflow.clock import FakeClock
from inboxflow.delivery_attempts import DeliveryAttempts, message_id_of
from inboxflow.errors import LeaseHeld
from inboxflow.settings import RedeliveryPolicy, Settings


@pytest.fixture
def store(tmp_path: Path) -> SqliteCheckpointStore:
    return SqliteCheckpointStore(tmp_path / "attempts.db")


def counter(store, clock, **policy) -> tuple[DeliveryAttempts, InProcessBus]:
    bus = InProcessBus(clock=clock)
    return DeliveryAttempts(store, bus, RedeliveryPolicy(**policy), clock), bus


MESSAGE = {"data": "eyJ4IjoxfQ==", "messageId": "m-1", "attributes": {"trace_id": "t-1"}}


def test_the_budget_is_the_retry_policys_backoff_over_the_attempts() -> None:
    assert RedeliveryPolicy(5, 10, 600).budget_s == 10 + 20 + 40 + 80
    assert RedeliveryPolicy(10, 10, 600).budget_s == 10 + 20 + 40 + 80 + 160 + 320 + 600 * 3
    assert RedeliveryPolicy(10, 1, 60).budget_s == 1 + 2 + 4 + 8 + 16 + 32 + 60 * 3


def test_the_setting_is_off_by_default_and_read_from_the_environment() -> None:
    assert Settings.from_env({}).redelivery is None
    assert Settings.from_env({"INBOXFLOW_DEAD_LETTERING": "pubsub"}).redelivery is None
    policy = Settings.from_env(
        {"INBOXFLOW_DEAD_LETTERING": "function", "INBOXFLOW_MAX_DELIVERY_ATTEMPTS": "4"}
    ).redelivery
    assert policy == RedeliveryPolicy(4, 10.0, 600.0)
    with pytest.raises(ValueError, match="INBOXFLOW_DEAD_LETTERING"):
        Settings.from_env({"INBOXFLOW_DEAD_LETTERING": "sometimes"})


def test_a_message_is_dead_lettered_only_after_the_attempts_and_the_budget(store) -> None:
    clock = FakeClock()
    attempts, bus = counter(store, clock, max_attempts=3, minimum_backoff_s=10)
    error = LeaseHeld("step 2 of t-1 is leased by another worker")
    assert attempts.after_failure("pipeline.review", MESSAGE, error) is False
    assert attempts.after_failure("pipeline.review", MESSAGE, error) is False
    # the third attempt, at once: the emulator redelivers every second, production would
    # have waited 10 + 20 s, so the message is not given up yet
    assert attempts.after_failure("pipeline.review", MESSAGE, error) is False
    assert bus.dead_letters == []
    clock.advance(30)
    assert attempts.after_failure("pipeline.review", MESSAGE, error) is True
    ((message, reason),) = bus.dead_letters
    assert message == MESSAGE
    assert reason.startswith("not acknowledged by pipeline.review after 4 deliveries in 30s")
    assert "LeaseHeld: step 2 of t-1 is leased" in reason


def test_counts_are_per_function_and_message(store) -> None:
    clock = FakeClock()
    attempts, _ = counter(store, clock)
    boom = RuntimeError("boom")
    for _ in range(2):
        attempts.after_failure("pipeline.review", MESSAGE, boom)
    attempts.after_failure("ingest", MESSAGE, boom)
    attempts.after_failure("pipeline.review", {**MESSAGE, "messageId": "m-2"}, boom)
    counts = {key: doc["attempts"] for key, doc in store.list("delivery_attempts")}
    assert counts == {"pipeline.review:m-1": 2, "ingest:m-1": 1, "pipeline.review:m-2": 1}
    assert all(doc["expire_at"] > clock.now() for _, doc in store.list("delivery_attempts"))


def test_a_message_without_an_id_or_a_store_that_fails_means_redelivery(store) -> None:
    clock = FakeClock()
    attempts, bus = counter(store, clock, max_attempts=1, minimum_backoff_s=0)
    assert message_id_of({"data": "x"}) is None and message_id_of("text") is None
    assert attempts.after_failure("pipeline.review", {"data": "x"}, RuntimeError()) is False
    store.close()  # the count cannot be written: redeliver, never drop
    assert attempts.after_failure("pipeline.review", MESSAGE, RuntimeError()) is False
    assert bus.dead_letters == []
