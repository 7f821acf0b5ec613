"""Agent profiles: the snapshot a run takes at start (the offline policy of each shipped
profile is ``tasks.OFFLINE_POLICIES``).

A profile is declared in ``inboxflow.yaml`` (``profiles:``, see
``inboxflow.config.ProfileConfig``); its system prompt may be one of the
prompts shipped here (``pharmacy.md``).
"""

from __future__ import annotations

from ....config import InboxflowConfig, config_path, load_config
from ....errors import RejectedEnvelope
from ..state import ProfileSnapshot


class UnknownProfile(RejectedEnvelope):
    """The trace names a profile ``inboxflow.yaml`` does not declare."""


def snapshot(name: str | None, config: InboxflowConfig | None = None) -> ProfileSnapshot:
    """The profile ``name`` of the config (default: ``inboxflow.yaml``) as a run keeps it.

    Raises:
        UnknownProfile: no profile given, or none by that name.
    """
    config = config or current_config()
    for profile in config.profiles:
        if profile.name == name:
            return ProfileSnapshot(
                **profile.model_dump(exclude={"system_prompt_file"}),
                system_prompt=profile.system_prompt,
            )
    declared = ", ".join(config.profile_names()) or "(none declared)"
    raise UnknownProfile(f"the agent graph needs a profile; got {name!r}; profiles: {declared}")


_configs: dict[tuple[str, int], InboxflowConfig] = {}


def current_config() -> InboxflowConfig:
    """``inboxflow.yaml`` as :func:`load_config` reads it, parsed once per file version."""
    path = config_path()
    if path is None or not path.is_file():
        return load_config()
    key = (str(path.resolve()), path.stat().st_mtime_ns)
    config = _configs.get(key)
    if config is None:
        config = _configs[key] = load_config(path)
    return config
