"""Every collection declares its retention and the personal data it can hold; the TTLs, the
code's retention constants and the README's and docs' tables agree with those declarations."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

from inboxflow import schema
from inboxflow.adapters.embedded_quoting import KEY_RETENTION_S
from inboxflow.approvals.records import TOKEN_RETENTION_S
from inboxflow.approvals.sessions import SESSION_RETENTION_S
from inboxflow.approvals.sign_in import SIGN_IN_RETENTION_S
from inboxflow.delivery_attempts import RETENTION_S as ATTEMPT_RETENTION_S
from inboxflow.dev.personal.retention_table import PAGES, TABLE_END, TABLE_START
from inboxflow.engine.runtime import RuntimeOptions
from inboxflow.ingest.claims import Claims
from inboxflow.ingest.sync import IngestOptions
from inboxflow.mail_stamps import RETENTION_S as STAMP_RETENTION_S
from inboxflow.reply_queue import ReplyQueue
from inboxflow.schema import (
    ANYWHERE,
    NO_PERSONAL_DATA,
    Collection,
    PersonalData,
    PersonKey,
    Retention,
)
from inboxflow.threads import ThreadResolver

ROOT = Path(__file__).parents[2]
DAY = 86400


@pytest.mark.parametrize("collection", schema.COLLECTIONS, ids=lambda c: c.name)
def test_every_collection_declares_retention_and_personal_data(collection: Collection) -> None:
    assert collection.retention is not None, f"{collection.name}: declare its retention"
    assert collection.personal is not None, (
        f"{collection.name}: declare its personal data (or NO_PERSONAL_DATA)"
    )
    assert (collection.ttl_field is not None) == (collection.retention.days is not None)


def test_the_declaration_test_refuses_an_undeclared_collection() -> None:
    with pytest.raises(AssertionError, match="declare its retention"):
        test_every_collection_declares_retention_and_personal_data(Collection("sessions"))
    unsaid = Collection("sessions", retention=Retention(None, "kept"))
    with pytest.raises(AssertionError, match="declare its personal data"):
        test_every_collection_declares_retention_and_personal_data(unsaid)


def test_declarations_refuse_what_cannot_hold() -> None:
    with pytest.raises(ValueError, match="TTL field"):
        Collection("x", ttl_field=schema.TTL_FIELD, retention=Retention(None, "forever"))
    with pytest.raises(ValueError, match="TTL field"):
        Collection("x", retention=Retention(30, "a month"))
    with pytest.raises(ValueError, match="unknown person key kind"):
        PersonKey("phone", ANYWHERE)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="both"):
        PersonalData(fields=("email",), found_by=())
    assert not NO_PERSONAL_DATA.holds_personal_data


def test_declared_days_are_the_days_the_code_keeps() -> None:
    threads = inspect.signature(ThreadResolver.__init__).parameters["retention_s"].default
    queued = inspect.signature(ReplyQueue.__init__).parameters["retention_s"].default
    claims = inspect.signature(Claims.__init__).parameters["retention_s"].default
    kept = {
        schema.TRACES: RuntimeOptions().retention_days,
        schema.STEPS: RuntimeOptions().retention_days,
        schema.EFFECTS: RuntimeOptions().retention_days,
        schema.AGENT_RUNS: RuntimeOptions().retention_days,
        schema.APPROVAL_TOKENS: TOKEN_RETENTION_S / DAY,
        schema.INBOX_SIGN_INS: SIGN_IN_RETENTION_S / DAY,
        schema.INBOX_SESSIONS: SESSION_RETENTION_S / DAY,
        schema.DELIVERY_ATTEMPTS: ATTEMPT_RETENTION_S / DAY,
        schema.MAIL_STAMPS: STAMP_RETENTION_S / DAY,
        schema.QUOTE_KEYS: KEY_RETENTION_S / DAY,
        schema.THREADS: threads / DAY,
        schema.TRACE_REPLIES: queued / DAY,
        schema.MAIL_CLAIMS: claims / DAY,
        schema.INGEST_EVENTS: IngestOptions().retention_days,
    }
    for collection, days in kept.items():
        assert collection.retention is not None
        assert collection.retention.days == days, collection.name


def test_every_key_names_a_declared_personal_field_or_the_document() -> None:
    for collection in schema.COLLECTIONS:
        personal = collection.personal
        assert personal is not None
        for key in (*personal.found_by, *personal.leads_to):
            assert key.field in (schema.ANYWHERE, schema.DOCUMENT_ID) or key.field, collection.name


@pytest.mark.parametrize(("page", "table"), PAGES.items())
def test_the_published_tables_are_the_schema_s(page: str, table) -> None:
    text = (ROOT / page).read_text(encoding="utf-8")
    assert TABLE_START in text and TABLE_END in text, f"{page}: the table's markers are gone"
    published = text.split(TABLE_START, 1)[1].split(TABLE_END, 1)[0].strip()
    assert published == table(), (
        f"{page} is out of date: paste `python -m inboxflow.dev.personal.retention_table`"
    )


def test_about_or_only_mentioned() -> None:
    mentioned = PersonalData(
        fields=("notes",), found_by=(), mentioned_in=(PersonKey("address", ANYWHERE),)
    )
    assert mentioned.holds_personal_data
    with pytest.raises(ValueError, match="only a document about a person leads"):
        PersonalData(
            fields=("notes",),
            found_by=(),
            leads_to=(PersonKey("trace_id", schema.DOCUMENT_ID),),
            mentioned_in=(PersonKey("address", ANYWHERE),),
        )
    # another person's trace names the address anywhere: that alone never makes it theirs
    for collection in schema.COLLECTIONS:
        personal = collection.personal
        assert personal is not None
        if personal.leads_to:
            assert PersonKey("address", ANYWHERE) not in personal.found_by, collection.name
