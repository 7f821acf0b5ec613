"""``inboxflow kb`` as a user runs it: real processes, the embedded store or the Firestore emulator."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from inboxflow.knowledge import sample_kb_paths

CLI = [sys.executable, "-c", "from inboxflow.dev.cli import main; main()"]


def kb(*args: str, cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLI, "kb", *args],
        cwd=cwd,
        env={**os.environ, "COLUMNS": "200"},
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def table_rows(output: str) -> dict[str, list[str]]:
    """Rows of a rich table by their first cell (the header row uses other borders)."""
    rows = {}
    for line in output.splitlines():
        if line.startswith("│"):
            cells = [cell.strip() for cell in line.strip("│").split("│")]
            rows[cells[0]] = cells[1:]
    return rows


def write_docs(folder: Path) -> tuple[Path, Path]:
    refunds = folder / "refunds.md"
    refunds.write_text(
        "# Refunds\n\n## Duplicate charges\n\nA customer charged twice gets the duplicate "
        "payment refunded in full within 5 business days.\n\n## Cancellations\n\n"
        "Annual plans can be cancelled within 30 days for a full refund.\n",
        encoding="utf-8",
    )
    shipping = folder / "shipping.txt"
    shipping.write_text(
        "Orders ship from Rotterdam within two business days.\n\n"
        "Express delivery to the UK takes one day; tracking numbers arrive by email.\n",
        encoding="utf-8",
    )
    return refunds, shipping


def check_add_list_search(tmp_path: Path) -> None:
    refunds, shipping = write_docs(tmp_path)
    added = kb("add", str(refunds), str(shipping), cwd=tmp_path)
    assert added.returncode == 0, added.stderr
    assert "refunds.md" in added.stdout and "shipping.txt" in added.stdout

    listed = kb("list", cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    rows = table_rows(listed.stdout)
    assert set(rows) == {"refunds.md", "shipping.txt"}
    assert rows["refunds.md"][:3] == ["Refunds", "-", "2"]
    assert rows["shipping.txt"][:3] == ["Shipping", "-", "1"]

    found = kb("search", "I was billed twice, I want my money back", "--limit", "2", cwd=tmp_path)
    assert found.returncode == 0, found.stderr
    hits = [line for line in found.stdout.splitlines() if ".md#" in line or ".txt#" in line]
    assert "refunds.md#000" in hits[0] and "Duplicate charges" in hits[0]

    found = kb("search", "when will my parcel be delivered? tracking", cwd=tmp_path)
    hits = [line for line in found.stdout.splitlines() if ".md#" in line or ".txt#" in line]
    assert "shipping.txt#000" in hits[0]

    # Categories: shown, set, given on add, and searched by (a filter in the store).
    assert kb("category", "refunds.md", cwd=tmp_path).stdout.strip() == "refunds.md: (none)"
    moved = kb("category", "refunds.md", "billing", cwd=tmp_path)
    assert moved.returncode == 0 and "refunds.md: category billing (2 chunks)" in moved.stdout
    assert kb("category", "refunds.md", cwd=tmp_path).stdout.strip() == "refunds.md: billing"
    given = kb("add", str(shipping), "--category", "logistics", cwd=tmp_path)
    assert given.returncode == 0, given.stderr
    rows = table_rows(kb("list", cwd=tmp_path).stdout)
    assert (rows["refunds.md"][1], rows["shipping.txt"][1]) == ("billing", "logistics")
    parcel = "when will my parcel be delivered? tracking"
    only = kb("search", parcel, "--category", "billing", cwd=tmp_path)
    hits = [line for line in only.stdout.splitlines() if ".md#" in line or ".txt#" in line]
    assert hits and all("refunds.md#" in hit and "billing" in hit for hit in hits)
    bad = kb("category", "refunds.md", "Billing Team", cwd=tmp_path)
    assert bad.returncode == 2 and "lower-case" in bad.stdout
    assert kb("category", "ghost.md", "billing", cwd=tmp_path).returncode == 1

    # Re-adding a shorter version replaces the document's chunks (front matter: its category).
    refunds.write_text(
        "---\ncategory: billing\n---\n# Refunds\n\nNo refunds after 30 days.\n", encoding="utf-8"
    )
    assert kb("add", str(refunds), cwd=tmp_path).returncode == 0
    listed = table_rows(kb("list", cwd=tmp_path).stdout)["refunds.md"]
    assert listed[:3] == ["Refunds", "billing", "1"]

    removed = kb("remove", "shipping.txt", cwd=tmp_path)
    assert removed.returncode == 0 and "removed shipping.txt (1 chunks)" in removed.stdout
    assert "shipping.txt" not in kb("list", cwd=tmp_path).stdout


def test_add_list_search_remove_on_the_embedded_store(tmp_path: Path):
    check_add_list_search(tmp_path)
    assert (tmp_path / ".inboxflow" / "inboxflow.db").is_file()


@pytest.mark.emulator
def test_add_list_search_remove_on_the_firestore_emulator(firestore_env, tmp_path: Path):
    check_add_list_search(tmp_path)
    assert not (tmp_path / ".inboxflow" / "inboxflow.db").exists()


def test_seed_loads_the_sample_kb_and_home_selects_the_store(tmp_path: Path):
    seeded = kb("seed", "--home", "elsewhere", cwd=tmp_path)
    assert seeded.returncode == 0, seeded.stderr
    listed = kb("list", "--home", "elsewhere", cwd=tmp_path)
    rows = table_rows(listed.stdout)
    for path in sample_kb_paths():
        assert rows[path.name][1] in ("billing", "technical", "general")
    found = kb("search", "nonprofit discount for a charity", "--home", "elsewhere", cwd=tmp_path)
    assert "pricing-and-plans.md#004" in found.stdout
    assert "empty" in kb("list", cwd=tmp_path).stdout  # the default home has nothing


def test_clear_errors(tmp_path: Path):
    missing = kb("add", "nope.md", cwd=tmp_path)
    assert missing.returncode == 2 and "no such file: nope.md" in missing.stdout
    pdf = tmp_path / "policy.pdf"
    pdf.write_bytes(b"%PDF-1.4")
    wrong = kb("add", str(pdf), cwd=tmp_path)
    assert wrong.returncode == 2 and "only .md, .markdown, .txt" in wrong.stdout
    empty = kb("search", "anything", cwd=tmp_path)
    assert empty.returncode == 1 and "nothing found" in empty.stdout
    assert kb("remove", "ghost.md", cwd=tmp_path).returncode == 1
