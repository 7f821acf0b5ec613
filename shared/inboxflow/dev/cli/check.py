"""``inboxflow check``: the preflight a user runs with their Gemini key (see ``gemini_preflight``)."""

from __future__ import annotations

import os

import typer
from rich.markup import escape

from inboxflow.dev.cli.render import cli_console


def check() -> None:
    """Check the Gemini key and every configured model before anything depends on them.

    Lists the models the key can use; for each configured model, one structured
    answer and one function-call round trip (thought signature included); one
    embedding batch. Prints what failed and how to fix it; exits 1 on any failure.
    With ``INBOXFLOW_LLM=offline`` there is nothing to check: says so and passes.
    """
    from inboxflow.config import ConfigError, load_config
    from inboxflow.dev.ops.gemini_preflight import CheckResult, run_preflight
    from inboxflow.graphs import graph_registry
    from inboxflow.llm_selection import gemini_settings

    console = cli_console()
    try:
        config = load_config(None, graph_registry(os.environ), os.environ)
        settings = gemini_settings(os.environ, config.gemini.by_role())
    except (ConfigError, ValueError) as exc:
        console.print(f"[red]FAIL[/] configuration: {escape(str(exc))}")
        raise typer.Exit(1) from None
    if settings is None and (os.environ.get("INBOXFLOW_LLM") or "").strip().lower() == "offline":
        # llm = "offline" deploys: nothing calls Gemini, so there is nothing to check.
        console.print("skipped: INBOXFLOW_LLM=offline, the offline model calls no Gemini")
        return
    if settings is None:
        console.print(
            "[red]FAIL[/] no Gemini configured: set GEMINI_API_KEY (Gemini API), or "
            "GOOGLE_GENAI_USE_VERTEXAI=true with GOOGLE_CLOUD_PROJECT (Vertex AI)"
        )
        raise typer.Exit(1)
    console.print(f"Checking {escape(settings.describe())}")

    def show(result: CheckResult) -> None:
        mark = "[green]ok  [/]" if result.ok else "[red]FAIL[/]"
        console.print(f"{mark} {escape(result.name)}: {escape(result.detail)}")
        if result.fix:
            console.print(f"     fix: {escape(result.fix)}")

    results = run_preflight(settings, config, show)
    failed = [r for r in results if not r.ok]
    if failed:
        console.print(f"[red]{len(failed)} of {len(results)} checks failed[/]")
        raise typer.Exit(1)
    console.print(f"[green]all {len(results)} checks passed[/]")
