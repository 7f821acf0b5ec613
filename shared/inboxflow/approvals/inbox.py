"""A reviewer's inbox as queries: what waits for them, counts per graph, their history.

Every list is one indexed query (``schema.APPROVALS`` declares the composite
indexes; the SQLite store builds the same ones): ``may_decide`` array-contains
the reviewer, ``status == pending`` (and ``graph``/``kind``/``mailbox`` when
filtered), ordered by deadline, 50 a page, the next page starting after the
last deadline shown. Counts per graph are aggregation queries (no documents
read on Firestore). Search over sender and subject (which live in the
unindexed ``context``) filters the first ``SEARCH_WINDOW`` waiting approvals
in memory: Firestore has no substring index.

A reviewer sees only approvals that list them (reviewers or escalate_to);
``approval`` refuses every other id with the same 404 as a missing one.

The history also says what each decision taught (``lessons``: the preference-memory
changes whose source is the resumed step, ``{trace_id}:{step + 1}``, in any mailbox and
namespace: one listing of the small ``memory`` collection, then one read per change) and
whether ``inboxflow eval collect`` took it into a data set (``collected``: one query on
``eval_collected`` by ``decided_at``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from ..clock import Clock
from ..engine.waits import Approval, read_approval
from ..ports.documents import DocumentStore, Filter
from ..schema import APPROVALS, EVAL_COLLECTED, MEMORY, MEMORY_HISTORY
from .errors import ApprovalError

PAGE_SIZE = 50
SEARCH_WINDOW = 500
"""How many waiting approvals (soonest deadline first) a search looks through."""
HISTORY_DAYS = 30
HISTORY_LIMIT = 200
MAX_FILTER_CHARS = 200


@dataclass(frozen=True)
class InboxFilter:
    """What the list is narrowed to (empty: everything waiting for the reviewer).

    Attributes:
        graph: only this graph's approvals.
        kind: only this pause kind.
        mailbox: only approvals of email to this mailbox.
        search: words that must all appear in the sender or the subject.
        after: where the previous page ended: its last deadline and approval id
            (approvals with the same deadline come in id order, as both stores order them).
    """

    graph: str = ""
    kind: str = ""
    mailbox: str = ""
    search: str = ""
    after: tuple[float, str] | None = None

    @classmethod
    def from_args(cls, args: Any) -> InboxFilter:
        """From query-string arguments (``graph``, ``kind``, ``mailbox``, ``q``, ``after``).

        Raises:
            ApprovalError: 400 a value too long or ``after`` not a number.
        """
        values = {
            name: str(args.get(name) or "").strip() for name in ("graph", "kind", "mailbox", "q")
        }
        if any(len(value) > MAX_FILTER_CHARS for value in values.values()):
            raise ApprovalError(400, "Bad request", "a filter is too long")
        after_arg = str(args.get("after") or "").strip()
        deadline, _, approval_id = after_arg.partition(" ")
        try:
            after = (float(deadline), approval_id) if after_arg else None
        except ValueError:
            raise ApprovalError(400, "Bad request", "after is not a page's end") from None
        if len(after_arg) > MAX_FILTER_CHARS:
            raise ApprovalError(400, "Bad request", "after is not a page's end")
        return cls(values["graph"], values["kind"], values["mailbox"], values["q"], after)

    @property
    def narrowed(self) -> bool:
        """Whether anything but paging is set."""
        return bool(self.graph or self.kind or self.mailbox or self.search)


@dataclass
class InboxPage:
    """One page of the waiting list.

    Attributes:
        items: the approvals, soonest deadline first.
        next_after: the ``after`` of the next page, or None on the last one.
    """

    items: list[Approval]
    next_after: tuple[float, str] | None = None


@dataclass(frozen=True)
class Lesson:
    """A preference-memory change a decision made (``memory.PreferenceMemory``'s history).

    Attributes:
        mailbox: whose memory.
        namespace: ``response_preferences``, ``triage_preferences``...
        version: the version the change made.
        why: what the change said about itself.
        changed: the preferences it changed, with their new values.
    """

    mailbox: str
    namespace: str
    version: int
    why: str
    changed: dict[str, Any]


def not_found() -> ApprovalError:
    """The one refusal of an approval id a reviewer may not open (missing or not theirs)."""
    return ApprovalError(404, "Not found", "there is no such approval in your inbox")


class Inbox:
    """A reviewer's waiting approvals and history, as indexed queries.

    Args:
        store: where approvals live.
        clock: time source (the history's 30 days).
        graphs: the graph names counts are given for (the runtime's graphs).
    """

    def __init__(
        self,
        store: DocumentStore,
        clock: Clock,
        graphs: Callable[[], Iterable[str]],
    ) -> None:
        self.store = store
        self.clock = clock
        self.graphs = graphs

    def waiting(self, reviewer: str, query: InboxFilter, page_size: int = PAGE_SIZE) -> InboxPage:
        """The approvals waiting for ``reviewer``, soonest deadline first, one page."""
        where: list[Filter] = [
            ("may_decide", "array_contains", reviewer),
            ("status", "==", "pending"),
        ]
        for name in ("graph", "kind", "mailbox"):
            if getattr(query, name):
                where.append((name, "==", getattr(query, name)))
        if query.after is not None:
            where.append(("deadline", ">=", query.after[0]))
        wanted = SEARCH_WINDOW if query.search else page_size + 1
        approvals = self._after(where, query.after, wanted)
        if query.search:
            approvals = [a for a in approvals if _matches_search(a, query.search)]
        items = approvals[:page_size]
        more = len(approvals) > page_size
        return InboxPage(
            items=items,
            next_after=(items[-1].deadline, items[-1].approval_id) if more and items else None,
        )

    def _after(
        self, where: list[Filter], after: tuple[float, str] | None, wanted: int
    ) -> list[Approval]:
        """Up to ``wanted`` approvals by deadline, those up to ``after`` skipped (the same
        deadline comes back in id order; the limit grows past a run of equal deadlines)."""
        limit = wanted
        while True:
            rows = self.store.list(APPROVALS.name, where, order_by="deadline", limit=limit)
            approvals = [
                a
                for a in map(_approval, rows)
                if after is None or (a.deadline, a.approval_id) > after
            ]
            if len(approvals) >= wanted or len(rows) < limit:
                return approvals[:wanted]
            limit *= 2

    def counts(self, reviewer: str) -> dict[str, int]:
        """Waiting approvals per graph (graphs with none left out)."""
        counts = {}
        for graph in self.graphs():
            where: list[Filter] = [
                ("may_decide", "array_contains", reviewer),
                ("status", "==", "pending"),
                ("graph", "==", graph),
            ]
            number = self.store.count(APPROVALS.name, where)
            if number:
                counts[graph] = number
        return counts

    def history(self, reviewer: str, *, mine: bool = False) -> list[Approval]:
        """What was decided in the last 30 days among the approvals ``reviewer`` may see,
        newest first (``mine``: only their own decisions)."""
        since = self.clock.now() - HISTORY_DAYS * 86400
        where: list[Filter] = [
            ("may_decide", "array_contains", reviewer),
            ("decided_at", ">=", since),
        ]
        rows = self.store.list(
            APPROVALS.name, where, order_by="decided_at", descending=True, limit=HISTORY_LIMIT
        )
        decided = [_approval(row) for row in rows]
        return [a for a in decided if a.decided_by == reviewer] if mine else decided

    def lessons(self, approvals: Iterable[Approval]) -> dict[str, list[Lesson]]:
        """What each decision taught, by approval id (decisions that taught nothing left out)."""
        wanted = {f"{a.trace_id}:{a.resume_step}": a.approval_id for a in approvals}
        taught: dict[str, list[Lesson]] = {}
        if not wanted:
            return taught
        for doc_id, doc in self.store.list(MEMORY.name):
            for applied in doc.get("sources") or []:
                approval_id = wanted.get(str(applied.get("source")))
                if approval_id is None:
                    continue
                version = int(applied.get("version") or 0)
                entry = self.store.get(
                    f"{MEMORY.name}/{doc_id}/{MEMORY_HISTORY.name}/{version:06d}"
                )
                if entry is None:  # older than the history keeps
                    continue
                before, after = entry.get("before") or {}, entry.get("after") or {}
                taught.setdefault(approval_id, []).append(
                    Lesson(
                        mailbox=str(doc.get("mailbox", "")),
                        namespace=str(doc.get("namespace", "")),
                        version=version,
                        why=str(entry.get("why", "")),
                        changed={k: v for k, v in after.items() if before.get(k) != v},
                    )
                )
        return taught

    def collected(self, approvals: Iterable[Approval]) -> dict[str, float]:
        """When ``inboxflow eval collect`` last took each decision into a data set, by approval id."""
        decided = {a.approval_id: a.decided_at for a in approvals if a.decided_at is not None}
        if not decided:
            return {}
        since: list[Filter] = [("decided_at", ">=", min(decided.values()))]
        return {
            str(doc["approval_id"]): float(doc.get("collected_at") or 0)
            for _, doc in self.store.list(EVAL_COLLECTED.name, since)
            if doc.get("approval_id") in decided
        }

    def approval(self, reviewer: str, approval_id: str) -> Approval:
        """An approval ``reviewer`` may see.

        Raises:
            ApprovalError: 404 for a missing id and for one that does not list them.
        """
        approval = read_approval(self.store, approval_id)
        if approval is None or reviewer not in approval.may_decide:
            raise not_found()
        return approval


def _approval(row: tuple[str, dict[str, Any]]) -> Approval:
    return Approval.model_validate(row[1])


def _matches_search(approval: Approval, search: str) -> bool:
    haystack = (
        f"{approval.context.get('sender', '')} {approval.context.get('subject', '')}".casefold()
    )
    return all(word in haystack for word in search.casefold().split())
