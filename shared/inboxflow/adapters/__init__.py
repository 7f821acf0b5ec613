"""Adapters: embedded (SQLite, in-process) and Google Cloud implementations of the ports."""
