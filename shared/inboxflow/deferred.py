"""Pydantic models whose validators are built on first use.

A node function imports every model of its graph's state and of the mail it
reads, but validates only a few of them on its own (its state, which builds its
nested parts with it). Building each class's validator at import would be most
of a node's cold start beyond the floor (docs/performance.md), so these classes
defer it (pydantic's ``defer_build``) to the first validation; what they accept
and refuse is the same.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class DeferredModel(BaseModel):
    """A ``BaseModel`` built on first use: subclass it instead of ``BaseModel``."""

    model_config = ConfigDict(defer_build=True)


__all__ = ["DeferredModel"]
