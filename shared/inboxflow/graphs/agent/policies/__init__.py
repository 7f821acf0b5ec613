"""Scripted policies the offline model plays, one per shipped profile."""
