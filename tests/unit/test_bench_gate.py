"""The CI gate of ``bench/runtime.py --gate``: node code per hop against the runtime's (issue 42)."""

from __future__ import annotations

from bench.runtime import GATE_RATIO, gate


def test_node_code_up_to_twice_the_runtime_passes(capsys):
    assert GATE_RATIO == 2.0
    assert gate(node_ms=1.0, runtime_ms=1.0) == 0
    assert gate(node_ms=2.0, runtime_ms=1.0) == 0
    assert "passed" in capsys.readouterr().out


def test_node_code_over_twice_the_runtime_fails_and_prints_both_figures(capsys):
    assert gate(node_ms=13.4, runtime_ms=0.99) == 1
    out = capsys.readouterr().out
    assert "FAILED" in out and "13.400 ms" in out and "0.990 ms" in out and "13.54x" in out
