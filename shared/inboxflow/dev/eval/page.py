"""The report as one self-contained HTML page (``inboxflow eval --html FILE``).

No script, no external resource: styles inline, the calibration chart as inline
SVG, each failing case's step log embedded (a link jumps to it). The template
autoescapes: every value that comes from mail (subjects, reasons, deltas) is
text, never markup.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any

import jinja2

CHART_WIDTH = 520
CHART_HEIGHT = 180


@cache
def _environment() -> jinja2.Environment:
    environment = jinja2.Environment(
        loader=jinja2.PackageLoader("inboxflow.dev.eval", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    environment.filters["pct"] = _pct
    environment.filters["short"] = _short
    return environment


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value * 100:.1f}%"


def _short(value: Any, limit: int = 300) -> str:
    import json

    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def calibration_bars(bands: list[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Geometry of the calibration chart: one bar per confidence band, height = accuracy."""
    width = CHART_WIDTH / max(1, len(bands))
    bars = []
    for index, band in enumerate(bands):
        accuracy = band.get("accuracy")
        height = (CHART_HEIGHT - 30) * (accuracy or 0.0)
        bars.append(
            {
                "x": round(index * width + 6, 1),
                "width": round(width - 12, 1),
                "y": round(CHART_HEIGHT - 20 - height, 1),
                "height": round(height, 1),
                "label": f"{band['low']:.1f}-{band['high']:.1f}",
                "value": _pct(accuracy) if band.get("cases") else "no case",
                "cases": band.get("cases", 0),
                "mid": round(index * width + width / 2, 1),
            }
        )
    return bars


def render_page(document: Mapping[str, Any]) -> str:
    """The HTML page of a report document (``report.build_report``)."""
    failures = list(document["failures"])
    anchors = {failure["id"]: f"case-{index}" for index, failure in enumerate(failures)}
    return (
        _environment()
        .get_template("report.html")
        .render(
            report=document,
            failures=failures,
            anchors=anchors,
            bars=calibration_bars(list(document["calibration"])),
            chart={"width": CHART_WIDTH, "height": CHART_HEIGHT},
        )
    )
