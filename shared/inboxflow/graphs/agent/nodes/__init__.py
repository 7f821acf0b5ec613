"""The agent graph's nodes, one module each."""
