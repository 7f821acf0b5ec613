"""A graph that lives only in the tests: proof that a graph is a self-contained plug-in."""
