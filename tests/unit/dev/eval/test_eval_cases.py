"""The data set format of ``inboxflow eval`` read exactly as written (issue 26), and every
mistake in it refused with the case named; how labels match outcome values."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from inboxflow.dev.eval.cases import CaseError, Comparison, Decision, load_eval_set
from inboxflow.dev.eval.checks import matches
from tests.harness.paths import DATA

FOLDER = DATA / "evals"


def test_the_hand_written_folder_loads_exactly():
    dataset = load_eval_set(FOLDER)
    assert dataset.folder == FOLDER and dataset.config is None  # the repo's inboxflow.yaml routes
    cases = {case.id: case for case in dataset.cases}
    assert list(cases) == [
        "pipeline-pricing",
        "pipeline-spam",
        "pipeline-bulk-newsletter",
        "pipeline-complaint-approved",
        "agent-reservation",
        "agent-medical-question",
        "support-outage-enterprise",
        "support-follow-up-continues-ticket",
        "assistant-newsletter-ignored",
        "assistant-meeting-request",
        "planner-quote-conversation",
    ]
    pricing = cases["pipeline-pricing"]
    assert pricing.mail == (FOLDER / "mail" / "pricing.eml",)
    assert pricing.mailbox is None and pricing.decide == ()
    assert dict(pricing.expect) == {
        "graph": "pipeline",
        "category": "inquiry",
        "confidence": Comparison(">=", 0.8),
        "status": "done",
        "drafted": ["priya.raman@kestrel-logistics.com"],
        "tools": "create_draft",
    }
    assert pricing.never == ("sent",) and pricing.tags == ("en",)
    assert pricing.criteria is not None and pricing.criteria.startswith("Gives the Business plan")
    assert pricing.note == (
        "A known customer asking for prices: a confident inquiry, drafted for the owner."
    )
    assert cases["pipeline-bulk-newsletter"].expect["status"] == ["done", "rejected"]
    assert cases["pipeline-bulk-newsletter"].safety
    assert cases["agent-reservation"].never == ("sent", "to:info@dostupnost-leku.cz")
    assert cases["agent-medical-question"].expect["tools"] == [
        ["escalate"],
        ["search_drugs", "escalate"],
    ]
    assert cases["assistant-meeting-request"].expect["tools"] == Comparison(">=", 1.0)
    planner = cases["planner-quote-conversation"]
    assert planner.mail == (FOLDER / "mail" / "quote-ask.json", FOLDER / "mail" / "quote-reply.eml")
    assert planner.mailbox == "quotes@brightlane.io"
    assert planner.decide == (Decision("approve"),) * 4
    assert not planner.safety


def test_a_folder_with_its_own_inboxflow_yaml_routes_by_it(tmp_path):
    folder = _copy(tmp_path)
    (folder / "inboxflow.yaml").write_text("routing: {rules: []}\n")
    assert load_eval_set(folder).config == folder / "inboxflow.yaml"


def _copy(tmp_path: Path) -> Path:
    folder = tmp_path / f"set{len(list(tmp_path.iterdir()))}"
    shutil.copytree(FOLDER, folder)
    return folder


def _refused(tmp_path: Path, cases_yaml: str) -> str:
    folder = _copy(tmp_path)
    (folder / "cases.yaml").write_text(cases_yaml)
    with pytest.raises(CaseError) as refused:
        load_eval_set(folder)
    return str(refused.value)


@pytest.mark.parametrize(
    ("case", "says"),
    [
        (
            "  - id: a\n    mail: mail/pricing.eml\n    expected: {graph: pipeline}\n",
            "unknown key(s) expected",
        ),
        ("  - id: a\n    mail: mail/nope.eml\n", "mail mail/nope.eml: no such file"),
        (
            "  - id: a\n    mail: [mail/pricing.eml, mail/gone.json]\n",
            "mail mail/gone.json: no such file",
        ),
        ("  - id: a\n    mail: mail/pricing.txt\n", "use .eml or .json"),
        (
            "  - id: a\n    mail: mail/pricing.eml\n    expect: {confidence: '>=high'}\n",
            "bad comparison '>=high'",
        ),
        (
            "  - id: a\n    mail: mail/pricing.eml\n    expect: {confidence: '=>0.8'}\n",
            "bad comparison '=>0.8'",
        ),
        (
            "  - id: a\n    mail: mail/pricing.eml\n    expect: {urgncy: high}\n",
            "unknown outcome field 'urgncy'",
        ),
        ("  - id: a\n    mail: mail/pricing.eml\n    never: [emailed]\n", "got 'emailed'"),
        ("  - id: a\n    mail: mail/pricing.eml\n    never: ['to:nobody']\n", "got 'to:nobody'"),
        (
            "  - id: a\n    mail: mail/pricing.eml\n    decide: [{pick: approve}]\n",
            "a decision mapping has `choice:`",
        ),
        (
            "  - id: a\n    mail: mail/pricing.eml\n    mailbox: support\n",
            "`mailbox:` must be an email address",
        ),
        ("  - id: a\n    mail: mail/pricing.eml\n    tags: safety\n", "`tags:` must be a list"),
    ],
)
def test_a_mistake_is_refused_naming_the_case(tmp_path, case, says):
    message = _refused(tmp_path, "cases:\n" + case)
    assert "case 'a'" in message and says in message


def test_duplicate_ids_and_unknown_top_level_keys_are_refused(tmp_path):
    twice = "cases:\n  - {id: a, mail: mail/spam.json}\n  - {id: a, mail: mail/pricing.eml}\n"
    assert "case 'a': duplicate id" in _refused(tmp_path, twice)
    assert "unknown: defaults" in _refused(tmp_path, "defaults: {}\ncases: []\n")
    assert "not valid YAML (line 3)" in _refused(tmp_path, "cases:\n  - id: a\n mail: x\n")


def test_a_mail_file_that_is_not_an_email_is_refused(tmp_path):
    folder = _copy(tmp_path)
    (folder / "mail" / "broken.json").write_text('{"subject": "no sender"}')
    (folder / "cases.yaml").write_text("cases:\n  - {id: b, mail: mail/broken.json}\n")
    with pytest.raises(CaseError, match=r"case .b.: mail mail/broken.json: not an email"):
        load_eval_set(folder)


@pytest.mark.parametrize(
    ("expected", "actual", "ok"),
    [
        ("inquiry", "Inquiry", True),
        ("inquiry", "spam", False),
        (["waiting", "needs_review"], "needs_review", True),
        (["waiting", "needs_review"], "done", False),
        (Comparison(">=", 0.8), 0.8, True),
        (Comparison(">=", 0.8), 0.79, False),
        (Comparison("<", 0.5), None, False),
        (True, True, True),
        (True, 1, False),
        ([], [], True),
        ([], ["a@b.example"], False),
        (["b@x.example", "a@x.example"], ["a@x.example", "b@x.example"], True),
        ([["escalate"], ["search_drugs", "escalate"]], ["search_drugs", "escalate"], True),
        ("create_draft", ["get_contact", "create_draft"], True),
        ("send_email", ["get_contact", "create_draft"], False),
        (Comparison(">=", 1), ["x"], True),
        (Comparison(">=", 1), [], False),
        (None, None, True),
    ],
)
def test_labels_match_outcome_values(expected, actual, ok):
    assert matches(expected, actual) is ok


@pytest.mark.parametrize("case_id", ["a/b", "../escape", "x\\\\y", "two words", "tab\\there"])
def test_an_id_that_is_not_one_path_segment_is_refused_in_one_line(tmp_path, case_id):
    """Issue 39, item 7: an id with ``/`` errored while running (it names documents)."""
    message = _refused(tmp_path, f'cases:\n  - id: "{case_id}"\n    mail: mail/pricing.eml\n')
    assert "`id:`" in message and "without /" in message
    assert "\n" not in message
