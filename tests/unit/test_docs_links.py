"""The README and docs/ link to files and headings that exist, as GitHub renders them.

Mutation: rename a heading or a page a link names -> red; drop a section docstrings cite as
``docs/architecture.md §N`` -> red.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^(```|~~~)")
CITATION = re.compile(r"docs/architecture\.md\s+§(\d+)")


def _prose(text: str) -> list[str]:
    """The lines outside fenced code blocks."""
    lines, fenced = [], False
    for line in text.splitlines():
        if FENCE.match(line.strip()):
            fenced = not fenced
        elif not fenced:
            lines.append(line)
    return lines


def _anchors(page: Path) -> set[str]:
    """GitHub's heading ids: lowercase, punctuation dropped, spaces to hyphens, -N for repeats."""
    seen: dict[str, int] = {}
    anchors = set()
    for line in _prose(page.read_text(encoding="utf-8")):
        heading = re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not heading:
            continue
        slug = re.sub(r"[^\w\- ]", "", heading.group(1).lower()).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        anchors.add(slug if count == 0 else f"{slug}-{count}")
    return anchors


def _links(page: Path) -> list[str]:
    return [
        m.group(1) for line in _prose(page.read_text(encoding="utf-8")) for m in LINK.finditer(line)
    ]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(page: Path) -> None:
    broken = []
    for target in _links(page):
        if re.match(r"[a-z]+:", target):
            continue  # http(s), mailto: not checked offline
        path, _, anchor = target.partition("#")
        resolved = (page.parent / path).resolve() if path else page
        if not resolved.exists():
            broken.append(f"{target}: no such file")
        elif anchor and resolved.suffix == ".md" and anchor not in _anchors(resolved):
            broken.append(f"{target}: no heading #{anchor}")
    assert not broken, f"{page.relative_to(ROOT)}: " + "; ".join(broken)


def test_the_readme_stays_an_overview() -> None:
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) < 250, f"README.md has {len(lines)} lines: move detail to docs/"


def test_every_cited_section_of_the_design_document_exists() -> None:
    numbered = {
        int(m.group(1))
        for m in re.finditer(
            r"^## (\d+)\. ", (ROOT / "docs" / "architecture.md").read_text("utf-8"), re.M
        )
    }
    cited: dict[int, list[str]] = {}
    for folder in ("shared", "tests", "functions", "infra"):
        for path in (ROOT / folder).rglob("*"):
            if path.suffix not in (".py", ".tf") or ".egg-info" in str(path):
                continue
            for m in CITATION.finditer(path.read_text(encoding="utf-8")):
                cited.setdefault(int(m.group(1)), []).append(str(path.relative_to(ROOT)))
    assert cited, "no docstring cites docs/architecture.md"
    missing = {n: where for n, where in cited.items() if n not in numbered}
    assert not missing, f"cited sections missing from docs/architecture.md: {missing}"
