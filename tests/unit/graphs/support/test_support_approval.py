"""A support reply approved through the approval function: review page, edit, one reply."""

from __future__ import annotations

from pathlib import Path

from inboxflow.adapters.store_workspace import StoreWorkspace
from inboxflow.knowledge import knowledge_base_for, seed_knowledge
from tests.harness.approval import Harness
from tests.harness.support import sample


def test_a_reviewer_edits_and_approves_a_spanish_reply_on_the_review_page(tmp_path: Path) -> None:
    h = Harness(tmp_path)
    seed_knowledge(knowledge_base_for(h.runtime.ports))
    trace_id = h.runtime.start("support", {"email": sample("02").model_dump(mode="json")})
    h.drain()
    approval = h.approval_of(trace_id)
    assert approval.kind == "approve_support_reply"
    (link,) = h.links(approval.approval_id)
    page = h.client.get(link.path).get_data(as_text=True)
    assert "Approve a support reply" in page and "cannot write in" in page

    edit = {"subject": "Re: Exportar un panel a PDF", "reply": "Hola Lucía: use Compartir."}
    form = h.form(link, "approve", **edit)
    response = h.client.post(f"/a/{link.approval_id}", data=form)
    assert response.status_code == 200, response.get_data(as_text=True)
    h.drain()
    assert h.store.get_trace(trace_id).status == "done"  # type: ignore[union-attr]
    workspace = h.runtime.ports.workspace
    assert isinstance(workspace, StoreWorkspace)
    [draft] = [d for d in workspace.drafts() if d["to"] == "lucia.fernandez@example.es"]
    assert draft["body"] == edit["reply"] and draft["subject"] == edit["subject"]
    again = h.client.post(f"/a/{link.approval_id}", data=form)  # a double submit
    h.drain()
    assert again.status_code < 500
    assert len([d for d in workspace.drafts() if d["to"] == "lucia.fernandez@example.es"]) == 1
