"""The assistant graph: triage (ignore / notify / respond), a reviewed tool loop, preference memory."""
