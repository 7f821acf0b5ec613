"""The support-desk graph: tickets, translator, supervisor, specialists (``route: support``)."""
