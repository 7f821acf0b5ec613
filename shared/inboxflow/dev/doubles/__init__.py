"""Local HTTP doubles of the Google APIs we call (Gemini, Gmail v1, Calendar v3).

They are served on loopback and reached through the real client libraries,
in tests, in ``inboxflow dev`` and in the demo; they are not used in production.
"""
