"""The agent graph's tool registry: every tool some profile may use (a profile picks its own)."""

from __future__ import annotations

from ....engine.tools import ToolRegistry
from .common import COMMON_TOOLS
from .pharmacy import PHARMACY_TOOLS

AGENT_TOOLS = ToolRegistry([*COMMON_TOOLS, *PHARMACY_TOOLS])
"""All tools of the agent graph; ``inboxflow.yaml`` profiles name the ones they offer."""

__all__ = ["AGENT_TOOLS"]
