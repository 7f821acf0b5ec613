"""The support graph's nodes."""
