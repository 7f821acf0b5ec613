"""``inboxflow eval collect``: reviewers' decisions as a data set of ``inboxflow eval``.

One case per trace with a reviewer's decision in the window (``since``): its email (and
the customer's replies it took, in order: a conversation), the trace's reviewer decisions
in step order as ``decide:``, and labels from them:

- approved: ``expect:`` the outcome as the trace reached it (``outcomes.trace_outcome``;
  scores such as ``confidence`` left out: they are no decision);
- edited: the same, the decision carrying the edited fields, and the reviewer's version
  as ``criteria:``;
- rejected: ``never:`` the mail the trace did not write (``sent``, ``drafted``: what
  approving would have let out), the reviewer's comment as ``note:``.

A trace a deadline decided for (``decided_by`` ``deadline``/``timeout``, or timed out) is
no label: skipped. So is a trace of an erased person (an erasure record for an address it
holds, or for the reviewer who decided). Addresses, names and message ids are
pseudonymised (``pseudonyms``); bodies are kept only with ``keep_text``.

Collect reads approvals, traces and effects and writes two things in the store: the
pseudonym key on first use, and one ``eval_collected/{approval_id}`` record per
approval it used (what the reviewer inbox shows, and what ``check_collected`` reads).
It never changes an approval. ``collected.json`` in the data set lists each case's
approval ids (``collected_records``). The mail is written by ``collected_mail``.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ...engine.waits import TIMEOUT_REVIEWER, Approval
from ...mail import Email
from ...personal.erasure import ErasureRecords
from ...ports.checkpoint import DocumentCheckpointStore
from ...ports.documents import DocumentStore, Filter
from ...schema import APPROVALS, EFFECTS, MAILBOX_DRAFTS, MAILBOX_SENT
from .collected_mail import mail_json, parties
from .collected_records import SIDECAR, record_collected
from .pseudonyms import Pseudonyms, pseudonym_key

TIMEOUT_DECIDERS = frozenset({TIMEOUT_REVIEWER, "timeout", None})
"""``decided_by`` of a decision nobody took (the deadline's), as ``learning.py`` reads it too."""
NOT_LABELS = frozenset({"confidence"})
"""Outcome fields that are scores of the model, not what the reviewer decided."""
MAIL_EFFECTS = ("sent", "drafted")


@dataclass(frozen=True)
class CollectOptions:
    """What to collect.

    Attributes:
        since: decisions taken at or after this time (epoch seconds).
        graph: only this graph's traces.
        mailbox: only mail to this mailbox.
        keep_text: keep bodies (pseudonymised); else each body says it was withheld.
        mail_in_store: the store holds the mail traces wrote (the embedded workspace), so
            ``sent``/``drafted`` can be labels; with Gmail it does not, and they are left out.
    """

    since: float
    graph: str | None = None
    mailbox: str | None = None
    keep_text: bool = False
    mail_in_store: bool = True


@dataclass
class Collection:
    """What one collect wrote.

    Attributes:
        cases: case id -> the approval ids it holds.
        skipped: why traces were left out -> how many.
    """

    cases: dict[str, list[str]] = field(default_factory=dict)
    skipped: dict[str, int] = field(default_factory=dict)

    def skip(self, reason: str) -> None:
        """Count a trace left out for ``reason``."""
        self.skipped[reason] = self.skipped.get(reason, 0) + 1


@dataclass
class _Trace:
    trace_id: str
    graph: str
    reviewed: list[Approval]
    emails: list[Email]
    outcome: dict[str, Any]


def collect(
    store: DocumentCheckpointStore,
    graphs: Mapping[str, Any],
    out: Path,
    options: CollectOptions,
    now: float,
) -> Collection:
    """Write the data set of the decisions since ``options.since`` into ``out``.

    Args:
        store: the deployment's store (embedded, emulated or Firestore).
        graphs: the graphs by name (their pause kinds and outcome fields).
        out: the data set's folder (created; a set collected before is replaced).
        options: what to collect.
        now: the collection time.

    Raises:
        ValueError: ``out`` holds a data set that was not collected (written by hand):
            nothing is written.
    """
    if (out / "cases.yaml").exists() and not (out / SIDECAR).exists():
        raise ValueError(f"{out} holds a data set that was not collected: give another folder")
    collection = Collection()
    traces = []
    listed = _Listed(store)
    for trace_id in _decided_traces(store, graphs, options):
        found = _trace(store, listed, graphs, trace_id, collection)
        if found is not None:
            traces.append(found)
    pseudonyms = Pseudonyms(pseudonym_key(store, now), _team(traces, options))
    for trace in traces:
        for email in trace.emails:
            for party in parties(email):
                pseudonyms.register(party.address, party.name)
    mail_dir = out / "mail"
    if mail_dir.is_dir():
        shutil.rmtree(mail_dir)
    mail_dir.mkdir(parents=True)
    cases = []
    for trace in traces:
        case_id = f"{trace.graph}-{pseudonyms.message_id(trace.trace_id)[:12]}"
        files = []
        for index, email in enumerate(trace.emails):
            name = f"mail/{case_id}-{index + 1}.json"
            document = mail_json(email, pseudonyms, options.keep_text)
            text = json.dumps(document, ensure_ascii=False, indent=1) + "\n"
            (out / name).write_text(text, encoding="utf-8")
            files.append(name)
        cases.append(_case(case_id, files, trace, graphs, pseudonyms, options))
        collection.cases[case_id] = [a.approval_id for a in trace.reviewed]
        people = _people(trace.emails, trace.reviewed)
        record_collected(store, trace.reviewed, trace.graph, people, case_id, out, now)
    _write_cases(out, cases)
    sidecar = {"collected_at": _iso(now), "cases": collection.cases}
    (out / SIDECAR).write_text(json.dumps(sidecar, indent=1) + "\n", encoding="utf-8")
    return collection


def _decided_traces(
    store: DocumentStore, graphs: Mapping[str, Any], options: CollectOptions
) -> list[str]:
    """Traces with a reviewer's decision in the window, oldest decision first (one query on
    ``decided_at``: a single-field index)."""
    where: list[Filter] = [("decided_at", ">=", options.since)]
    rows = store.list(APPROVALS.name, where, order_by="decided_at")
    found: dict[str, None] = {}
    for _, doc in rows:
        approval = Approval.model_validate(doc)
        if options.graph and approval.graph != options.graph:
            continue
        if options.mailbox and approval.mailbox.lower() != options.mailbox.lower():
            continue
        if _waits_for(graphs, approval) == "reviewer":
            found.setdefault(approval.trace_id)
    return list(found)


def _waits_for(graphs: Mapping[str, Any], approval: Approval) -> str:
    graph = graphs.get(approval.graph)
    kind = graph.pause_kinds.get(approval.kind) if graph is not None else None
    return str(getattr(kind, "waits_for", "reviewer"))


def _trace(
    store: DocumentCheckpointStore,
    listed: _Listed,
    graphs: Mapping[str, Any],
    trace_id: str,
    collection: Collection,
) -> _Trace | None:
    """The trace's decisions, mail and outcome, or None (counted as skipped, with why)."""
    from .outcomes import trace_outcome

    checkpoint = store.get_trace(trace_id)
    if checkpoint is None or checkpoint.graph not in graphs:
        collection.skip("trace gone")
        return None
    approvals = sorted(
        (
            Approval.model_validate(doc)
            for _, doc in store.list(APPROVALS.name, [("trace_id", "==", trace_id)])
        ),
        key=lambda approval: approval.step,
    )
    reviewed = [a for a in approvals if _waits_for(graphs, a) == "reviewer"]
    if any(
        a.status == "timed_out" or (a.status == "decided" and a.decided_by in TIMEOUT_DECIDERS)
        for a in reviewed
    ):
        collection.skip("a deadline decided")
        return None
    reviewed = [a for a in reviewed if a.status == "decided"]
    emails = _emails(checkpoint.state, approvals, graphs)
    if not emails:
        collection.skip("no email")
        return None
    if _erased(store, emails, reviewed):
        collection.skip("an erased person")
        return None
    outcome = trace_outcome(listed, graphs, checkpoint)  # type: ignore[arg-type]
    return _Trace(trace_id, checkpoint.graph, reviewed, emails, outcome)


def _emails(
    state: Mapping[str, Any], approvals: Iterable[Approval], graphs: Mapping[str, Any]
) -> list[Email]:
    """The email that started the trace, then the customer's replies it took, in order."""
    first = state.get("email")
    if not isinstance(first, Mapping):
        return []
    emails = [Email.model_validate(first)]
    for approval in approvals:
        reply = (approval.applied_payload or {}).get("email")
        if _waits_for(graphs, approval) == "customer" and isinstance(reply, Mapping):
            emails.append(Email.model_validate(reply))
    return emails


def _people(emails: Iterable[Email], reviewed: Iterable[Approval]) -> set[str]:
    """Every address of the case: the mail's parties and the reviewers who decided."""
    people = {party.address.lower() for email in emails for party in parties(email)}
    people.update(a.decided_by.lower() for a in reviewed if a.decided_by)
    return people


def _erased(store: DocumentStore, emails: list[Email], reviewed: list[Approval]) -> bool:
    records = ErasureRecords(store)
    for address in _people(emails, reviewed):
        try:
            if records.get(address) is not None:
                return True
        except ValueError:  # not an address: nobody was erased under it
            continue
    return False


def _team(traces: Iterable[_Trace], options: CollectOptions) -> set[str]:
    """The team's addresses: the mailboxes the mail came to (and ``--mailbox``)."""
    team = {email.mailbox.lower() for trace in traces for email in trace.emails if email.mailbox}
    if options.mailbox:
        team.add(options.mailbox.lower())
    return team


def _case(
    case_id: str,
    files: list[str],
    trace: _Trace,
    graphs: Mapping[str, Any],
    pseudonyms: Pseudonyms,
    options: CollectOptions,
) -> dict[str, Any]:
    graph = graphs[trace.graph]
    decisions = [_decision(a, graph, pseudonyms) for a in trace.reviewed]
    labels = _labels(trace.outcome, pseudonyms, options)
    expect: dict[str, Any] = {"graph": trace.graph}
    never: list[str] = []
    criteria, notes = [], []
    for approval in trace.reviewed:
        kind = graph.pause_kinds.get(approval.kind)
        choice = kind.choice(approval.decision or "") if kind is not None else None
        if approval.edited:
            expect.update(labels)
            changed = _edited_fields(approval, pseudonyms)
            criteria.append(
                "The reviewer's version: "
                + "; ".join(f"{name}: {value}" for name, value in changed.items())
            )
        elif choice is not None and choice.style == "danger":
            if options.mail_in_store:
                never += [e for e in MAIL_EFFECTS if not trace.outcome.get(e) and e not in never]
            if approval.comment:
                notes.append(pseudonyms.text(approval.comment))
        else:
            expect.update(labels)
        if approval.comment and approval.edited:
            notes.append(pseudonyms.text(approval.comment))
    case: dict[str, Any] = {
        "id": case_id,
        "mail": files if len(files) > 1 else files[0],
        "mailbox": trace.emails[0].mailbox or None,
        "decide": decisions,
        "expect": expect,
    }
    if never:
        case["never"] = never
    case["tags"] = ["collected", trace.graph]
    if criteria:
        case["criteria"] = "\n".join(criteria)
    if notes:
        case["note"] = "\n".join(notes)
    return {key: value for key, value in case.items() if value is not None}


def _labels(
    outcome: Mapping[str, Any], pseudonyms: Pseudonyms, options: CollectOptions
) -> dict[str, Any]:
    """The outcome fields as labels: values that say what happened, pseudonymised."""
    labels: dict[str, Any] = {}
    for name, value in outcome.items():
        if value is None or name in NOT_LABELS or isinstance(value, float):
            continue
        if name in MAIL_EFFECTS:
            if not options.mail_in_store:
                continue
            value = sorted(pseudonyms.address(address) for address in value)
        elif isinstance(value, str):
            value = pseudonyms.text(value)
            if value[:1] in "<>=!":  # it would read as a comparison
                continue
        elif isinstance(value, list):
            value = [pseudonyms.text(item) if isinstance(item, str) else item for item in value]
        labels[name] = value
    return labels


def _edited_fields(approval: Approval, pseudonyms: Pseudonyms) -> dict[str, Any]:
    applied = approval.applied_payload or {}
    changed = {k: v for k, v in applied.items() if approval.payload.get(k) != v}
    return pseudonyms.value(changed)  # type: ignore[no-any-return]


def _decision(approval: Approval, graph: Any, pseudonyms: Pseudonyms) -> Any:
    """The decision as ``decide:`` takes it: a choice, or ``{choice, fields, comment}``."""
    comment = pseudonyms.text(approval.comment) if approval.comment else None
    decision = str(approval.decision)
    if approval.edited:
        kind = graph.pause_kinds.get(approval.kind)
        has_edit = kind is not None and kind.choice("edit") is not None
        choice = "edit" if decision == "edit" or not has_edit else decision
        item: dict[str, Any] = {"choice": choice, "fields": _edited_fields(approval, pseudonyms)}
        if comment:
            item["comment"] = comment
        return item
    if comment:
        return {"choice": decision, "comment": comment}
    return decision


def _write_cases(out: Path, cases: list[dict[str, Any]]) -> None:
    import yaml

    header = (
        "# Collected by `inboxflow eval collect` from reviewers' decisions (docs/evaluating.md).\n"
        "# Addresses, names and message ids are pseudonyms; do not edit collected.json.\n"
    )
    text = yaml.safe_dump({"cases": cases}, allow_unicode=True, sort_keys=False, width=100)
    (out / "cases.yaml").write_text(header + text, encoding="utf-8")


def _iso(when: float) -> str:
    return datetime.fromtimestamp(when, UTC).isoformat()


# --- reading the store once -------------------------------------------------------------------------


class _Listed:
    """The store with its whole-collection listings of effects and mail read once per collect
    (``trace_outcome`` lists them for every trace); everything else goes to the store."""

    CACHED = frozenset({EFFECTS.name, MAILBOX_SENT.name, MAILBOX_DRAFTS.name})

    def __init__(self, store: DocumentStore) -> None:
        self._store = store
        self._listed: dict[str, list[tuple[str, dict[str, Any]]]] = {}

    def list(self, collection: str, where: Iterable[Filter] = (), **kw: Any) -> Any:
        where = tuple(where)
        if collection in self.CACHED and not where and not kw:
            if collection not in self._listed:
                self._listed[collection] = self._store.list(collection)
            return self._listed[collection]
        return self._store.list(collection, where, **kw)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)
