"""inboxflow: email agents that run serverless on Google Cloud.

One Cloud Function per graph node, connected by Pub/Sub, state checkpointed
in Firestore keyed by trace_id. The same code runs locally on an embedded
default (SQLite + an in-process bus).
"""

__version__ = "0.1.0"
