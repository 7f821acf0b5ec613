"""Agent profiles: the snapshot a run takes at start (the offline policy of each shipped
profile is ``tasks.OFFLINE_POLICIES``).

A profile is declared in ``inboxflow.yaml`` (``profiles:``, see
``inboxflow.config.ProfileConfig``); its system prompt may be one of the
prompts shipped here (``pharmacy.md``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ....errors import RejectedEnvelope
from ..state import ProfileSnapshot

if TYPE_CHECKING:
    from ....config import InboxflowConfig


class UnknownProfile(RejectedEnvelope):
    """The trace names a profile ``inboxflow.yaml`` does not declare."""


def snapshot(name: str | None, config: InboxflowConfig | None) -> ProfileSnapshot:
    """The profile ``name`` of the process's ``inboxflow.yaml`` as a run keeps it.

    Raises:
        UnknownProfile: no profile given, none by that name, or no config to read it from.
    """
    if config is None:
        raise UnknownProfile(f"profile {name!r}: no inboxflow.yaml was loaded to read it from")
    for profile in config.profiles:
        if profile.name == name:
            return ProfileSnapshot(
                **profile.model_dump(exclude={"system_prompt_file"}),
                system_prompt=profile.system_prompt,
            )
    declared = ", ".join(config.profile_names()) or "(none declared)"
    raise UnknownProfile(f"the agent graph needs a profile; got {name!r}; profiles: {declared}")
