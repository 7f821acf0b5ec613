"""Personal-data tooling, never deployed: a person's access document (``inboxflow person``)
and the retention tables of README.md and docs/personal-data.md."""
