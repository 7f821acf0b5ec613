"""The assistant's nodes: triage (triage_router, triage_notify) and the response agent."""
