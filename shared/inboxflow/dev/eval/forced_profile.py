"""``inboxflow eval --profile NAME``: the routing of a data set with one agent profile forced.

Every rule that routes to a graph taking an agent profile (``agent``) names ``NAME``
instead of its own, so the same cases run through another profile of the same config
(another model, prompt or tools). The copy is written to a folder of the caller's; each
profile's ``system_prompt_file`` found beside the original is made absolute, so the copy
reads the same prompts.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from ...config import ConfigError, load_config, parse_yaml, read_config_text

FORCED_NAME = "inboxflow.yaml"


def write_forced_profile(
    source: Path, profile: str, graphs: Mapping[str, Any], folder: Path
) -> Path:
    """Write ``source`` with every profile-taking rule naming ``profile`` into ``folder``.

    Returns:
        The written config, checked as the runtime will read it.

    Raises:
        ConfigError: ``source`` cannot be read, has no profile ``profile``, or the
            result is not a valid config.
    """
    import yaml

    data = parse_yaml(read_config_text(source), source)
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: not a mapping")
    profiles = [p for p in data.get("profiles") or [] if isinstance(p, dict)]
    names = [str(p.get("name")) for p in profiles]
    if profile not in names:
        raise ConfigError(
            f"{source}: no agent profile {profile!r}; profiles: {', '.join(names) or '(none)'}"
        )
    taking = {name for name, graph in graphs.items() if getattr(graph, "takes_profile", False)}
    for rule in _rules(data.get("routing") or {}):
        if rule.get("route") in taking:
            rule["profile"] = profile
    for declared in profiles:
        prompt = declared.get("system_prompt_file")
        if isinstance(prompt, str) and (source.parent / prompt).is_file():
            declared["system_prompt_file"] = str((source.parent / prompt).resolve())
    target = folder / FORCED_NAME
    target.write_text(yaml.safe_dump(data, allow_unicode=True, sort_keys=False), encoding="utf-8")
    load_config(target, graphs)
    return target


def _rules(routing: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
    """The global rules, then each mailbox's."""
    yield from (rule for rule in routing.get("rules") or [] if isinstance(rule, dict))
    for mailbox in (routing.get("mailboxes") or {}).values():
        rules = mailbox.get("rules") if isinstance(mailbox, dict) else None
        yield from (rule for rule in rules or [] if isinstance(rule, dict))
