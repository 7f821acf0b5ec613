"""Ports: the interfaces through which the runtime and nodes reach the world."""
