"""The planner graph: multi-turn work with a customer over email (PPA quotes)."""
