"""Operators' tooling the CLI drives, never deployed: repair a trace (``repair``), read and
replay dead letters (``pubsub_dead_letters``), check a Gemini key (``gemini_preflight``)."""
