"""``inboxflow eval collect`` (issue 43 part 1): reviewers' decisions taken through the approval
API become a data set on which ``inboxflow eval`` reproduces every decision as labels;
addresses and names are pseudonymised with the deployment's key; a deadline's decision and an
erased person's are never collected; ``--check`` finds the cases of a person erased since."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from inboxflow.approvals.service import approval_service
from inboxflow.dev.cli import app
from inboxflow.dev.eval.cases import load_eval_set
from inboxflow.dev.eval.pseudonyms import KEY_DOCUMENT, Pseudonyms
from inboxflow.dev.eval.runner import RunOptions, case_runtime, close_runtime, run_cases
from inboxflow.dev.file_inbox import FileInbox
from inboxflow.engine.waits import TIMEOUT_REVIEWER, Approval, approval_path
from inboxflow.mail import load_email_file
from inboxflow.personal.erasure import Eraser
from inboxflow.schema import APPROVALS, EVAL_COLLECTED
from tests.harness.paths import ROOT

CONFIG = ROOT / "inboxflow.yaml"
MAIL = ROOT / "evals" / "mail" / "planner"
OPTIONS = RunOptions(config=CONFIG)


@dataclass
class Live:
    """A deployment's embedded home where mail came in and reviewers decided."""

    home: Path
    runtime: Any
    traces: dict[str, str] = field(default_factory=dict)

    def deliver(self, name: str, label: str) -> str:
        inbox = FileInbox(self.runtime, self.runtime.ports.config)
        delivered = inbox.deliver(load_email_file(MAIL / name), gmail_id=f"live-{name}")
        self.runtime.bus.drain()
        assert delivered.trace_id is not None
        self.traces.setdefault(label, delivered.trace_id)
        return delivered.trace_id

    def waiting(self, label: str) -> Approval:
        rows = self.runtime.store.list(APPROVALS.name, [("trace_id", "==", self.traces[label])])
        pending = [Approval.model_validate(d) for _, d in rows if d["status"] == "pending"]
        assert pending, f"{label} waits for nobody"
        return pending[0]

    def decide(self, label: str, choice: str, **more: Any) -> Approval:
        """Decide as the first reviewer, through the approval service (a reviewer's API call)."""
        approval = self.waiting(label)
        service = approval_service(self.runtime.ports)
        service.decisions.decide_as(approval.approval_id, approval.reviewers[0], choice, **more)
        self.runtime.bus.drain()
        return approval

    def approvals(self) -> list[tuple[str, dict[str, Any]]]:
        return sorted(self.runtime.store.list(APPROVALS.name), key=lambda row: row[0])


def collect(live: Live, out: Path, *more: str) -> Any:
    result = CliRunner().invoke(
        app, ["eval", "collect", str(out), "--home", str(live.home), *more], catch_exceptions=False
    )
    return result


@pytest.fixture
def live(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Live]:
    """Approve, edit, reject, a conversation approved then answered, and a deadline's reject."""
    for name in ("INBOXFLOW_HOME", "INBOXFLOW_STORE", "GOOGLE_CLOUD_PROJECT", "INBOXFLOW_CONFIG"):
        monkeypatch.delenv(name, raising=False)
    home = tmp_path / "home"
    home.mkdir()
    runtime = case_runtime(home, OPTIONS)
    live = Live(home, runtime)
    live.deliver("missing-details.eml", "approved")
    live.decide("approved", "approve")
    live.deliver("license-hash-il.eml", "edited")
    planned = json.loads(live.waiting("edited").payload["inputs"])
    edited = json.dumps({**planned, "year": 2019}, indent=2, sort_keys=True)
    live.decide("edited", "edit", edit={"inputs": edited}, comment="It is the 2019 model.")
    live.deliver("es-complete-request.eml", "rejected")
    live.decide("rejected", "reject", comment="Wrong customer: <b>ask</b> again.")
    live.deliver("answer-1-request.eml", "conversation")
    live.decide("conversation", "approve")
    runtime.clock.advance(600)
    live.deliver("answer-2-reply.eml", "conversation-reply")
    live.deliver("full-1-request.eml", "deadline")
    _decided_by_the_deadline(live, live.waiting("deadline"))
    yield live
    close_runtime(runtime)


def _decided_by_the_deadline(live: Live, approval: Approval) -> None:
    """What the deadline's reject-on-timeout policy records (``Deadlines._reject_on_timeout``)."""
    store, now = live.runtime.store, live.runtime.clock.now()
    decided = approval.decided("reject", TIMEOUT_REVIEWER, now, timed_out_at=now)
    store.set(approval_path(approval.approval_id), decided.model_dump())
    approval_service(live.runtime.ports).decisions.publish_resume(decided)
    live.runtime.bus.drain()


def test_collected_decisions_reproduce_as_labels_and_approvals_stay_as_they_were(
    live: Live, tmp_path: Path
) -> None:
    before = live.approvals()
    out = tmp_path / "collected"
    result = collect(live, out, "--keep-text")
    assert result.exit_code == 0, result.output
    assert "4 case(s)" in result.output and "1 (a deadline decided)" in result.output
    assert live.approvals() == before  # collect never changes an approval

    dataset = load_eval_set(out)
    cases = {case.id: case for case in dataset.cases}
    assert len(cases) == 4
    assert all(case.tags == ("collected", "planner") for case in cases.values())
    by_decision = {
        case.decide[0].choice + ("-conversation" if len(case.mail) > 1 else ""): case
        for case in cases.values()
    }
    assert set(by_decision) == {"approve", "edit", "reject", "approve-conversation"}
    approved = by_decision["approve"]
    assert approved.expect["action"] == "ask_customer" and approved.expect["status"] == "waiting"
    edit = by_decision["edit"]
    assert edit.decide[0].comment == "It is the 2019 model."
    assert '"year": 2019' in edit.decide[0].fields["inputs"]  # type: ignore[index]
    assert edit.criteria and edit.criteria.startswith("The reviewer's version: inputs:")
    rejected = by_decision["reject"]
    assert set(rejected.never) == {"sent", "drafted"}
    assert rejected.note == "Wrong customer: <b>ask</b> again."
    assert dict(rejected.expect) == {"graph": "planner"}

    results = run_cases(dataset.cases, OPTIONS, jobs=1)
    failing = {
        r.case_id: (r.error, [c for c in r.checks if not c.ok], r.never_broken)
        for r in results
        if not r.passed
    }
    assert failing == {}

    records = {doc_id: doc for doc_id, doc in live.runtime.store.list(EVAL_COLLECTED.name)}
    sidecar = json.loads((out / "collected.json").read_text())
    assert sorted(records) == sorted(a for ids in sidecar["cases"].values() for a in ids)
    deadline = live.traces["deadline"]
    assert not any(doc["trace_id"] == deadline for doc in records.values())


def test_addresses_and_names_are_pseudonyms_of_the_deployments_key(
    live: Live, tmp_path: Path
) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    outputs = [collect(live, first, "--keep-text"), collect(live, second, "--since", "400d")]
    assert [result.exit_code for result in outputs] == [0, 0]
    key = live.runtime.store.get(KEY_DOCUMENT)["key"]
    assert not any(key in result.output for result in outputs)  # never printed
    assert collect(live, tmp_path / "third", "--since", "3 weeks").exit_code == 2
    originals = [
        load_email_file(MAIL / name) for name in ("missing-details.eml", "answer-2-reply.eml")
    ]
    for folder in (first, second):
        written = "\n".join(p.read_text() for p in sorted(folder.rglob("*")) if p.is_file())
        assert key not in written  # the key stays in the deployment
        for email in originals:
            assert email.sender.address not in written.lower()
            assert email.sender.name.split()[0] not in written
        assert "quotes@brightlane.io" in written  # the team's mailbox stays
    withheld = [json.loads(p.read_text()) for p in (second / "mail").iterdir()]
    assert {mail["body"] for mail in withheld} == {"[body withheld: collected without --keep-text]"}
    kept = [json.loads(p.read_text()) for p in (first / "mail").iterdir()]
    # the same key: the same pseudonyms in both sets
    assert sorted(m["from"]["address"] for m in kept) == sorted(
        m["from"]["address"] for m in withheld
    )
    # the conversation's reply names its request's (pseudonymised) id in its thread headers
    reply = next(m for m in kept if "references" in m["headers"] or "in-reply-to" in m["headers"])
    ids = {m["headers"]["message-id"] for m in kept}
    thread = reply["headers"].get("references", "") + reply["headers"].get("in-reply-to", "")
    assert any(message_id in thread for message_id in ids)


def test_a_hand_written_data_set_is_never_overwritten(live: Live, tmp_path: Path) -> None:
    written = tmp_path / "mine"
    (written / "mail").mkdir(parents=True)
    (written / "cases.yaml").write_text("cases: []\n")
    (written / "mail" / "keep.json").write_text("{}")
    result = collect(live, written)
    assert result.exit_code == 2 and "was not collected" in result.output
    assert (written / "mail" / "keep.json").exists()
    again = tmp_path / "again"
    assert collect(live, again).exit_code == 0 and collect(live, again).exit_code == 0


def test_the_same_address_gets_the_same_pseudonym_under_one_key_only() -> None:
    one, same, other = Pseudonyms(b"k" * 32), Pseudonyms(b"k" * 32), Pseudonyms(b"x" * 32)
    address = "Lena.Fischer@nordwerk-studio.de"
    assert one.address(address) == same.address(address.lower()) != other.address(address)
    assert one.name("Lena Fischer") == same.name("Lena Fischer") != other.name("Lena Fischer")
    assert one.name("Lena").isalpha()  # still reads as a name
    one.register(address, "Lena Fischer")
    text = one.text("Lena wrote from lena.fischer@nordwerk-studio.de, see nordwerk-studio.de")
    assert "Lena" not in text and "nordwerk" not in text
    assert one.address(address) in text and one.name("Lena") in text
    kept = Pseudonyms(b"k" * 32, keep=["quotes@brightlane.io"])
    assert kept.address("Quotes@brightlane.io") == "quotes@brightlane.io"


def test_an_erased_persons_decisions_are_never_collected(live: Live, tmp_path: Path) -> None:
    """Even while their erasure is unfinished (records still there): the record decides."""
    customer = load_email_file(MAIL / "missing-details.eml").sender.address
    store = live.runtime.store

    def crash(_held: Any) -> None:
        raise RuntimeError("the erasure run dies before it deleted anything")

    eraser = Eraser(store, live.runtime.ports.vectors, live.runtime.clock, on_erased=crash)
    with pytest.raises(RuntimeError):
        eraser.erase(customer, "dpo@brightlane.io")
    assert store.list(APPROVALS.name, [("trace_id", "==", live.traces["approved"])])
    out = tmp_path / "collected"
    result = collect(live, out, "--keep-text")
    assert result.exit_code == 0, result.output
    assert "(an erased person)" in result.output
    collected = {doc["trace_id"] for _, doc in store.list(EVAL_COLLECTED.name)}
    assert live.traces["approved"] not in collected and live.traces["edited"] in collected


def test_check_names_the_cases_of_a_person_erased_after_collection(
    live: Live, tmp_path: Path
) -> None:
    out = tmp_path / "collected"
    assert collect(live, out).exit_code == 0
    assert collect(live, out, "--check").output.strip().endswith(": ok")
    customer = load_email_file(MAIL / "es-complete-request.eml").sender.address
    Eraser(live.runtime.store, live.runtime.ports.vectors, live.runtime.clock).erase(
        customer, "dpo@brightlane.io"
    )
    checked = collect(live, out, "--check")
    assert checked.exit_code == 1
    assert "1 case(s) to remove" in checked.output
    sidecar = json.loads((out / "collected.json").read_text())
    flagged = [line.split(":")[0] for line in checked.output.splitlines()[:-1]]
    assert len(flagged) == 1 and flagged[0] in sidecar["cases"]


READ_BY_COLLECT = ("approvals", "traces", "effects", "mailbox_sent", "mailbox_drafts")


@pytest.mark.emulator
def test_collect_on_firestore_writes_the_same_set_through_the_same_port(
    live: Live, tmp_path: Path, firestore_env: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The live home's records copied into the Firestore emulator (the key too) collect into
    the same data set with ``--project`` as with ``--home``."""
    from inboxflow.adapters.firestore_store import FirestoreCheckpointStore
    from inboxflow.schema import PSEUDONYM_KEYS

    monkeypatch.setenv("INBOXFLOW_STORE", "sqlite")  # the emulator's variables would pick it
    embedded = tmp_path / "embedded"
    assert collect(live, embedded, "--keep-text").exit_code == 0
    firestore = FirestoreCheckpointStore.from_env(os.environ)
    for name in (*READ_BY_COLLECT, PSEUDONYM_KEYS.name):
        for doc_id, doc in live.runtime.store.list(name):
            firestore.set(f"{name}/{doc_id}", doc)
    cloud = tmp_path / "cloud"
    result = collect(live, cloud, "--keep-text", "--project", os.environ["GOOGLE_CLOUD_PROJECT"])
    assert result.exit_code == 0, result.output
    assert os.environ["INBOXFLOW_STORE"] == "firestore"  # what --project chose
    assert (cloud / "cases.yaml").read_text() == (embedded / "cases.yaml").read_text()
    for path in (embedded / "mail").iterdir():
        assert (cloud / "mail" / path.name).read_text() == path.read_text()
    assert len(firestore.list(EVAL_COLLECTED.name)) == 4
    firestore.close()
