"""``inboxflow eval``: measure every graph's judgment on a labelled data set (docs/evaluating.md)."""
