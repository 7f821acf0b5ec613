"""Reviewer digests on the Firestore emulator: racing function instances (each its own client,
transactions not serialised in-process) send one digest; a crash between the claim and the send
sends it once after the lease.

Mutation tried: the ``busy`` check of a live claim removed -> the race sends two.
"""

from __future__ import annotations

import os

import pytest

from inboxflow.adapters.inprocess_bus import SimulatedCrash
from inboxflow.approvals.digests import DIGEST_LEASE_S
from inboxflow.clock import FakeClock
from tests.harness.digest import DigestWorld, digest_config, race, utc

pytestmark = [pytest.mark.emulator]

ANA = "ana@brightlane.io"


def _store() -> object:
    from inboxflow.adapters.firestore_store import FirestoreCheckpointStore

    return FirestoreCheckpointStore.from_env(os.environ, serialize_transactions=False)


def test_racing_instances_send_one_digest(firestore_env: object) -> None:
    stores = [_store() for _ in range(4)]
    world = DigestWorld(
        stores[0],  # type: ignore[arg-type]
        FakeClock(utc("2027-01-15 10:00")),
        digest_config({ANA: {"notify": "digest"}}),  # the daily summary (08:00 UTC) is due
    )
    world.pend([ANA], "support")
    world.pend([ANA])
    try:
        outcomes = race(world, ANA, stores)  # type: ignore[arg-type]
    finally:
        for store in stores:
            store.close()  # type: ignore[attr-defined]
    actions = sorted(outcome.action for outcome in outcomes)
    assert actions == ["busy", "busy", "busy", "sent"], actions
    [digest] = world.digests_to(ANA)
    assert "pipeline: 1" in digest["text"] and "support: 1" in digest["text"]


def test_a_crash_after_the_claim_sends_once_after_the_lease(firestore_env: object) -> None:
    store = _store()
    world = DigestWorld(
        store,  # type: ignore[arg-type]
        FakeClock(utc("2027-01-15 10:00")),
        digest_config({ANA: {"notify": "digest"}}, {"daily_at": None}),
    )
    world.pend([ANA])

    def crash(point: str) -> None:
        if point == "after_claim":
            raise SimulatedCrash(point)

    with pytest.raises(SimulatedCrash):
        world.make(fault=crash).send_due(ANA)
    assert world.digests.send_due(ANA).action == "busy"
    world.clock.advance(DIGEST_LEASE_S)
    assert world.digests.send_due(ANA).action == "sent"
    world.clock.advance(DIGEST_LEASE_S)
    assert world.digests.send_due(ANA).action == "not_due"
    assert len(world.digests_to(ANA)) == 1
    store.close()  # type: ignore[attr-defined]
