"""Error taxonomy of the step protocol (docs/architecture.md §5, errors).

Retryable errors are raised out of the entry point so that Pub/Sub redelivers
with backoff. Permanent errors are acknowledged and recorded where they can be
queried: on the trace (``needs_review``) or, for input that is not a valid
envelope for a live trace, in the ``failures`` collection (``failed``).
"""


class InboxflowError(Exception):
    """Base class of every error the runtime raises on purpose."""


class RetryableError(InboxflowError):
    """Transient: timeouts, rate limits, 5xx, contention. Redeliver later."""


class EarlyArrival(RetryableError):
    """The envelope is ahead of the checkpoint: its predecessor has not committed yet."""


class LeaseHeld(RetryableError):
    """Another worker holds a live lease on this step: a concurrent duplicate."""


class Contention(RetryableError):
    """A transaction lost against a concurrent writer."""


class PermanentError(InboxflowError):
    """Retrying cannot help: the input or the node's output is wrong."""


class BadEnvelope(PermanentError):
    """The message is not an envelope at all (not base64, not JSON, fields missing)."""


class RejectedEnvelope(PermanentError):
    """A well-formed envelope that no live trace can accept (unknown node, wrong graph...)."""


class NodeFailed(PermanentError):
    """A node failed for good (schema violation, retries exhausted); the trace needs review."""


class StepMoved(InboxflowError):
    """The checkpoint is past the step: someone else committed it (a duplicate delivery).

    Attributes:
        checkpoint: the checkpoint as read, when the reader had it (saves a re-read).
    """

    def __init__(self, message: str, checkpoint: object = None) -> None:
        super().__init__(message)
        self.checkpoint = checkpoint
