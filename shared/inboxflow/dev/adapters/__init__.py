"""Adapters only local runs and tests use, never deployed: an in-memory Gmail reader."""
