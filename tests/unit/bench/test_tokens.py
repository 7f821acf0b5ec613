"""bench/tokens.py and bench/cost.py: the shared prefix and the token price arithmetic."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

BENCH = Path(__file__).resolve().parents[3] / "bench"


def _load(name: str) -> ModuleType:
    sys.path.insert(0, str(BENCH))
    try:
        spec = importlib.util.spec_from_file_location(f"bench_{name}", BENCH / f"{name}.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(BENCH))


tokens = _load("tokens")
cost = _load("cost")


def test_common_prefix_stops_at_the_first_differing_character() -> None:
    assert tokens.common_prefix(["Rules.\nEmail: a", "Rules.\nEmail: b"]) == "Rules.\nEmail: "
    assert tokens.common_prefix(["x"]) == "x"
    assert tokens.common_prefix([]) == ""


def test_rendered_prompt_puts_the_system_instruction_before_the_turns() -> None:
    body = {
        "systemInstruction": {"parts": [{"text": "SYS"}]},
        "contents": [{"role": "user", "parts": [{"text": "hello"}]}],
    }
    assert tokens.rendered_prompt(body) == "SYS\nhello"


def test_estimate_is_characters_over_four_rounded_up() -> None:
    assert tokens.estimate_tokens("") == 0
    assert tokens.estimate_tokens("abcd") == 1
    assert tokens.estimate_tokens("abcde") == 2


def test_summarise_per_email_figures_prefix_and_price() -> None:
    model = "gemini-3.5-flash-lite"
    calls = [
        ("t", model, "FIXED PART " + "a" * 29, 10),  # 40 chars: 10 tokens
        ("t", model, "FIXED PART " + "b" * 29, 30),
    ]
    figures = tokens.summarise(calls, emails=2)["t"]
    assert figures["calls_per_email"] == 1.0
    assert figures["input_tokens_per_email"] == 10.0
    assert figures["output_tokens_per_email"] == 20.0
    assert figures["shared_prefix_chars"] == len("FIXED PART ")
    inp, out = cost.GEMINI_TOKEN_PRICES[model]
    assert figures["usd_per_1000"] == pytest.approx(1000 * (10 * inp.usd + 20 * out.usd))


def test_llm_price_uses_the_models_own_prices_else_the_default() -> None:
    inp, out = cost.GEMINI_TOKEN_PRICES["gemini-3.8-flash"]
    assert cost.llm_price("gemini-3.8-flash", 1000, 100) == pytest.approx(
        1000 * inp.usd + 100 * out.usd
    )
    assert cost.llm_price("unknown-model", 1000, 0) == pytest.approx(
        1000 * cost.PRICES["llm_input_token"]
    )


def test_tokens_json_prices_the_graph_it_measured() -> None:
    measured = {"graphs": [{"graph": "support", "usd_per_1000": 1.5}]}
    assert cost.tokens_usd_per_email(measured, "support") == pytest.approx(0.0015)
    assert cost.tokens_usd_per_email(measured, "planner") is None
