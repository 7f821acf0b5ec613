"""The agent graph: tool-using LLM agent profiles (``route: agent, profile: NAME``)."""
