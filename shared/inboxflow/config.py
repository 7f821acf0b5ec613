"""``inboxflow.yaml``: routing rules, agent profiles and reviewer channels, validated at start-up.

The file is found at ``INBOXFLOW_CONFIG`` if set, else ``inboxflow.yaml`` at
the project root: next to the ``inboxflow`` package in the deployed source
archive, or at the root of a source checkout. No file means no rules: every
email goes to the ``pipeline`` graph.

A bad file is refused as a whole with :class:`ConfigError`, one line naming
the rule (``inboxflow.yaml: rule 'vip' (routing.rules[2]): unknown graph
'nope'; graphs: pipeline``): a deployed function refuses to start rather than
mis-route.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, model_validator

from .field_defaults import empty_dict, empty_list
from .header_patterns import HeaderPattern, UnsupportedPattern, compile_header_pattern
from .mail.addresses import address_key_or_none, ascii_lower, same_address

CONFIG_VARIABLE = "INBOXFLOW_CONFIG"
CONFIG_NAME = "inboxflow.yaml"
COMPILED_SUFFIX = ".json"
"""``inboxflow.yaml.json`` beside the file: its parsed form, written into the source archive so a
deployed function reads JSON instead of importing and running a YAML parser (used only while
the YAML's hash matches)."""
MAX_CONFIG_BYTES = 1_000_000
"""The largest ``inboxflow.yaml`` read (a few hundred rules take tens of kilobytes)."""
DEFAULT_GRAPH = "pipeline"
"""Where an email goes when no rule matches."""

_PACKAGE = Path(__file__).resolve().parent


class ToolNames(Protocol):
    """A graph's tool registry, as the config checks it."""

    def names(self) -> list[str]:
        """The tools' names."""
        ...


class GraphDeclaration(Protocol):
    """What the config checks of a graph it names (``graph.Graph`` is one): the caller passes
    the graphs, the config imports none."""

    @property
    def settings_model(self) -> type[BaseModel] | None:
        """The model of ``graphs.NAME`` in the config, if the graph takes settings."""
        ...

    @property
    def takes_profile(self) -> bool:
        """Whether a rule routing to the graph must name an agent profile."""
        ...

    @property
    def tools(self) -> ToolNames:
        """The graph's tools (the tools a profile may name)."""
        ...


class ConfigError(ValueError):
    """``inboxflow.yaml`` is unreadable or invalid; the message is one line naming the rule."""


class _Strict(BaseModel):
    # Built on first use (defer_build): a node validates its InboxflowConfig, with the
    # models it holds, but builds no validator for a part class it never validates alone.
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)


class Match(_Strict):
    """The conditions of a rule; every condition given must hold (AND).

    Attributes:
        all: ``true`` matches every email.
        sender_email: the sender's exact address (case-insensitive).
        sender_domain: the exact domain after the sender's ``@`` (case-insensitive).
        subject_contains: a case-insensitive substring of the subject.
        header_match: ``{header: regex}``; each header (name case-insensitive)
            must be present, at most 2,000 characters long and match its pattern, run
            by RE2 (see :mod:`inboxflow.header_patterns`: no backreferences or look-around).
        forwarded_from: mail forwarded from this address: a signal names it (Gmail's
            ``X-Forwarded-For``/``X-Forwarded-To``, ``X-Forwarded-From``, ``Resent-From``,
            a manual forward's block, ``Reply-To``, the sender: see
            :func:`inboxflow.routing.forwarded_signal`). It routes and trusts nothing.
    """

    all: bool | None = None
    sender_email: str | None = Field(default=None, min_length=3)
    sender_domain: str | None = Field(default=None, min_length=1)
    subject_contains: str | None = Field(default=None, min_length=1)
    header_match: dict[str, str] | None = None
    forwarded_from: str | None = Field(default=None, min_length=3)

    _patterns: dict[str, HeaderPattern] = PrivateAttr(default_factory=dict)

    @model_validator(mode="after")
    def _check(self) -> Match:
        if not self.model_fields_set:
            raise ValueError("empty match: give at least one condition (or `all: true`)")
        if self.all is False:
            raise ValueError("`all: false` matches nothing: remove the rule or the condition")
        for name in ("sender_email", "forwarded_from"):
            value = getattr(self, name)
            if value is not None and not re.fullmatch(r"[^@\s]+@[^@\s]+", value.strip()):
                raise ValueError(f"{name} {value!r} is not an email address")
        if self.sender_domain is not None and not re.fullmatch(
            r"[^@\s]+\.[^@\s]+|[^@\s.]+", self.sender_domain.strip()
        ):
            raise ValueError(f"sender_domain {self.sender_domain!r} is not a domain (no '@')")
        if self.header_match is not None:
            if not self.header_match:
                raise ValueError("header_match is empty: give {header: regex}")
            for header, pattern in self.header_match.items():
                try:
                    self._patterns[header.strip().lower()] = compile_header_pattern(pattern)
                except UnsupportedPattern as exc:
                    raise ValueError(f"header_match {header}: pattern {pattern!r}: {exc}") from None
        return self

    @property
    def patterns(self) -> dict[str, HeaderPattern]:
        """``header_match`` compiled once (by RE2), by lowercased header name."""
        return self._patterns


class Rule(_Strict):
    """One routing rule: the first whose match holds decides the graph.

    Attributes:
        name: unique in the file; recorded on the trace.
        match: the conditions.
        route: the graph's name.
        profile: the agent profile, required by (and only allowed for) a
            graph that takes one.
    """

    name: str = Field(min_length=1)
    match: Match
    route: str = Field(min_length=1)
    profile: str | None = None


class MailboxRouting(_Strict):
    """A mailbox's own rules, evaluated before the global ones."""

    rules: list[Rule] = Field(default_factory=empty_list)


class RoutingConfig(_Strict):
    """``routing:``: global rules and per-mailbox rules (keys: mailbox addresses)."""

    rules: list[Rule] = Field(default_factory=empty_list)
    mailboxes: dict[str, MailboxRouting] = Field(default_factory=empty_dict)


class ProfileConfig(_Strict):
    """An agent profile (``profiles:``): the model, its budget, its prompt and its tools.

    Attributes:
        name: the profile's name, named by routing rules.
        model: the model asked each turn (None: the ``agent`` role's, see ``gemini:``).
        max_tokens: the answer budget of one turn, thinking included (None: the role's).
        temperature: sampling temperature.
        max_iterations: turns at most; then the run stops as ``max_iterations``.
        system_prompt_file: the system prompt, a path relative to the config
            (else a prompt shipped in ``inboxflow/graphs/agent/profiles/``).
        tools: the tools offered, names from the agent graph's tool registry.
        preprocessor: how the email becomes the agent's first message
            (``default`` or ``crisp``).
        reviewers: who is notified when the agent escalates (default: the mailbox).
        helpdesk: the addresses the ``crisp`` preprocessor trusts: only mail whose
            authenticated sender (``mail/authentication.py``) is one of them is read
            as a Crisp notification (the patient named in its body); other mail is
            read as it is (``default``). Required with ``preprocessor: crisp``.
        escalate_on: what always goes to a person, whatever the model answers:
            ``medical_advice`` (dosage, children, pregnancy and breastfeeding,
            interactions, side effects, overdose) and ``complaint``; the agent graph's
            ``escalation_cues`` guard keeps it (issue 30).
    """

    name: str = Field(min_length=1)
    model: str | None = Field(default=None, min_length=1)
    max_tokens: int | None = Field(default=None, ge=1, le=65536)
    temperature: float = Field(default=0.3, ge=0.0, le=2.0)
    max_iterations: int = Field(default=10, ge=1, le=100)
    system_prompt_file: str = Field(min_length=1)
    tools: list[str] = Field(min_length=1)
    preprocessor: Literal["default", "crisp"] = "default"
    reviewers: list[str] = Field(default_factory=empty_list)
    helpdesk: list[str] = Field(default_factory=empty_list)
    escalate_on: list[Literal["medical_advice", "complaint"]] = Field(default_factory=empty_list)

    @model_validator(mode="after")
    def _check_helpdesk(self) -> ProfileConfig:
        for address in self.helpdesk:
            if not _ADDRESS.fullmatch(address.strip()):
                raise ValueError(f"helpdesk {address!r} is not an email address")
        if self.preprocessor == "crisp" and not self.helpdesk:
            raise ValueError(
                "preprocessor crisp needs helpdesk: [the address that forwards Crisp's "
                "notifications]; only its authenticated mail is read as Crisp's"
            )
        return self

    _prompt: str = PrivateAttr(default="")

    @property
    def system_prompt(self) -> str:
        """The system prompt's text (read when the config was validated)."""
        return self._prompt


CHANNELS = ("gmail", "ses", "webhook")
"""How a reviewer can be notified; ``gmail`` (today's) unless ``reviewers:`` says otherwise."""
DEFAULT_CHANNEL = "gmail"
_AWS_REGION = re.compile(r"[a-z]{2}(-[a-z]+)+-\d")
_ADDRESS = re.compile(r"[^@\s]+@[^@\s]+\.[^@\s]+")
_ENV_NAME = re.compile(r"[A-Z_][A-Z0-9_]*")
LOOPBACK_HOSTS = frozenset({"localhost", "127.0.0.1", "::1"})
"""Hosts a webhook may be reached on over plain http (local receivers, the dev cloud)."""


class SesChannel(_Strict):
    """Amazon SES settings (``channels.ses`` and per reviewer): where and as whom to send.

    Attributes:
        region: the SES region, e.g. ``eu-west-1``.
        sender: the verified identity reviewer emails come from.
    """

    region: str | None = None
    sender: str | None = None


class Channels(_Strict):
    """``channels:``: settings shared by every reviewer of a channel."""

    ses: SesChannel = Field(default_factory=SesChannel)


NOTIFY_MODES = ("each", "digest", "both")
"""What a reviewer is sent: an email per pause (``each``, the default), a digest, or both."""
_DAILY_AT = re.compile(r"([01]\d|2[0-3]):[0-5]\d")


class DigestSchedule(_Strict):
    """When a reviewer's digest goes out (``digest:``; a reviewer's own ``digest:`` overrides).

    Attributes:
        interval_minutes: at most one digest per this many minutes: when a new
            approval waits and none was sent within it, the next one goes out.
        daily_at: the daily summary's time, ``HH:MM`` (None: no daily summary).
        timezone: the IANA zone ``daily_at`` is in.
    """

    interval_minutes: int = Field(default=60, ge=1, le=7 * 24 * 60)
    daily_at: str | None = "08:00"
    timezone: str = "UTC"

    @model_validator(mode="after")
    def _check(self) -> DigestSchedule:
        if self.daily_at is not None and not _DAILY_AT.fullmatch(self.daily_at):
            raise ValueError(f"daily_at {self.daily_at!r} is not a time HH:MM (00:00 to 23:59)")
        from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

        try:
            ZoneInfo(self.timezone)
        except (ZoneInfoNotFoundError, ValueError):
            raise ValueError(f"timezone {self.timezone!r} is not an IANA time zone") from None
        return self


class ReviewerConfig(_Strict):
    """How one reviewer (``reviewers.<address or name>``) is notified.

    Attributes:
        channel: ``gmail`` (default), ``ses`` or ``webhook``.
        notify: ``each`` (an email per pause, default), ``digest`` or ``both``.
        digest: this reviewer's digest schedule (default: the top-level ``digest:``).
        address: where email goes (default: the key, which must then be an address).
        region: SES region (default ``channels.ses.region``).
        sender: SES sender identity (default ``channels.ses.sender``).
        url: a webhook's URL: https, or http on a loopback host.
        url_env: the environment variable holding the webhook's URL instead (a
            Secret Manager secret mounted as env: the URL is a credential).
        format: the webhook's JSON: ``chat`` (Google Chat card) or ``slack``; default
            ``slack`` for a ``*.slack.com`` URL, else ``chat``.
    """

    channel: str = DEFAULT_CHANNEL
    notify: Literal["each", "digest", "both"] = "each"
    digest: DigestSchedule | None = None
    address: str | None = None
    region: str | None = None
    sender: str | None = None
    url: str | None = None
    url_env: str | None = None
    format: Literal["chat", "slack"] | None = None


class Delivery(BaseModel):
    """Where a reviewer's notification goes, settled from ``reviewers:`` and ``channels:``.

    Attributes:
        channel: ``gmail``, ``ses`` or ``webhook``.
        address: the mailbox (gmail, ses) or, for a webhook, the reviewer's key.
        region: SES region.
        sender: SES sender.
        url: webhook URL (None when read from ``url_env`` at send time).
        url_env: the variable holding the webhook URL.
        format: webhook JSON flavour (None: inferred from the URL, see ``webhook_format``).
    """

    model_config = ConfigDict(frozen=True, defer_build=True)

    channel: str = DEFAULT_CHANNEL
    address: str
    region: str | None = None
    sender: str | None = None
    url: str | None = None
    url_env: str | None = None
    format: Literal["chat", "slack"] | None = None


def webhook_format(url: str, given: str | None = None) -> Literal["chat", "slack"]:
    """The JSON a webhook takes: ``given``, else ``slack`` for a ``*.slack.com`` host, else ``chat``."""
    from urllib.parse import urlsplit

    if given in ("chat", "slack"):
        return given  # type: ignore[return-value]
    host = (urlsplit(url.strip()).hostname or "").lower()
    return "slack" if host == "slack.com" or host.endswith(".slack.com") else "chat"


def check_webhook_url(url: str) -> str | None:
    """Why ``url`` cannot be a webhook (https, or http on a loopback host), or None."""
    from urllib.parse import urlsplit

    parts = urlsplit(url.strip())
    if parts.scheme == "https" and parts.hostname:
        return None
    if parts.scheme == "http" and parts.hostname in LOOPBACK_HOSTS:
        return None
    return f"webhook URL must be https (plain http only on {', '.join(sorted(LOOPBACK_HOSTS))})"


SHIPPED_PROMPTS = _PACKAGE / "graphs" / "agent" / "profiles"
"""Where prompts shipped with inboxflow live (found when not beside the config)."""


class GeminiRoleConfig(_Strict):
    """One Gemini role's settings (``gemini.<role>``); unset fields keep the defaults
    of ``inboxflow.adapters.gemini_roles``, and ``INBOXFLOW_GEMINI_<ROLE>_<FIELD>`` wins.

    Attributes:
        model: the model ID.
        location: the Vertex location (embedding models are not served at ``global``).
        timeout_s: one request's timeout.
        deadline_s: every attempt and wait of one call; within the node's lease.
        max_output_tokens: answer budget, thinking included.
        thinking_level: ``minimal``, ``low``, ``medium`` or ``high`` (Gemini 3).
        thinking_budget: thinking tokens (not with ``thinking_level``).
    """

    model: str | None = Field(default=None, min_length=1)
    location: str | None = Field(default=None, min_length=1)
    timeout_s: float | None = Field(default=None, gt=0)
    deadline_s: float | None = Field(default=None, gt=0)
    max_output_tokens: int | None = Field(default=None, ge=1, le=65536)
    thinking_level: Literal["minimal", "low", "medium", "high"] | None = None
    thinking_budget: int | None = Field(default=None, ge=0)

    @model_validator(mode="after")
    def _one_thinking_setting(self) -> GeminiRoleConfig:
        if self.thinking_level is not None and self.thinking_budget is not None:
            raise ValueError("set thinking_level or thinking_budget, not both")
        return self


class GeminiConfig(_Strict):
    """``gemini:``: each role's model, location, time limits, budget and thinking.

    Attributes:
        task: the structured-output tasks of every graph.
        assistant: the personal assistant's turns (``graphs.assistant.model`` also names it).
        agent: every agent profile's turns (a profile's ``model:`` wins).
        embedding: the embedder.
    """

    task: GeminiRoleConfig = Field(default_factory=GeminiRoleConfig)
    assistant: GeminiRoleConfig = Field(default_factory=GeminiRoleConfig)
    agent: GeminiRoleConfig = Field(default_factory=GeminiRoleConfig)
    embedding: GeminiRoleConfig = Field(default_factory=GeminiRoleConfig)

    def by_role(self) -> dict[str, dict[str, Any]]:
        """The values set, by role (what ``gemini_roles.resolve_roles`` takes)."""
        return {
            role: getattr(self, role).model_dump(exclude_none=True)
            for role in ("task", "assistant", "agent", "embedding")
        }


SHADOW_MODELS = ("offline", "gemini")
"""What ``shadow.model`` may name: the offline model, or Gemini (per role: ``shadow.gemini``)."""


class ShadowConfig(_Strict):
    """``shadow:``: a model or an agent profile run beside the live graph, every effect held.

    A share of new traces (``share``, chosen from the message's id, so a redelivery
    chooses alike) gets a shadow trace (``engine/shadow.py``): the same graph on the
    same email, with ``model`` (or ``gemini``'s per-role models) and, on a graph that
    takes a profile, ``profile`` in place of the routed one. It writes nothing outside
    its trace; ``inboxflow eval shadow`` compares it with the live trace.

    Attributes:
        share: the share of new traces shadowed, above 0 and at most 1.
        model: ``offline`` or ``gemini`` (None: the live model, or ``gemini`` when
            ``gemini`` is given).
        gemini: each Gemini role's settings for the shadow, as ``gemini:`` (over it).
        profile: the agent profile a shadow of a profile-taking graph runs with.
        graphs: the graphs shadowed (empty: every graph the shadow changes).
    """

    share: float = Field(gt=0.0, le=1.0)
    model: Literal["offline", "gemini"] | None = None
    gemini: GeminiConfig | None = None
    profile: str | None = Field(default=None, min_length=1)
    graphs: list[str] = Field(default_factory=empty_list)

    @model_validator(mode="after")
    def _names_something(self) -> ShadowConfig:
        if self.model is None and self.gemini is None and self.profile is None:
            raise ValueError("name a model (offline, gemini), gemini: roles or a profile")
        if self.model == "offline" and self.gemini is not None:
            raise ValueError("gemini: roles are for model gemini, not offline")
        return self

    @property
    def changes_model(self) -> bool:
        """Whether the shadow asks another model than the live one."""
        return self.model is not None or self.gemini is not None

    def model_choice(self) -> str:
        """``offline`` or ``gemini``: what the shadow's model is (``gemini`` roles imply gemini)."""
        return self.model or "gemini"

    def takes(self, message_key: str) -> bool:
        """Whether the email keyed ``message_key`` (its Message-ID) is in the shadowed share.

        A hash of the key, not a random draw: the same email chooses alike every time.
        """
        digest = hashlib.sha256(f"inboxflow-shadow:{message_key}".encode()).digest()
        return int.from_bytes(digest[:8], "big") < self.share * 2**64

    def covers(self, graph: str, takes_profile: bool) -> bool:
        """Whether a trace of ``graph`` gets a shadow (it is listed, and the shadow changes it)."""
        if self.graphs and graph not in self.graphs:
            return False
        return self.changes_model or (takes_profile and self.profile is not None)


class InboxflowConfig(_Strict):
    """The whole of ``inboxflow.yaml``.

    Attributes:
        routing: the routing rules.
        profiles: agent profiles that rules may name.
        graphs: each graph's settings by graph name, validated by its ``settings_model``.
        reviewers: how each reviewer is notified, by address (or name); unlisted: gmail.
        channels: settings shared by a channel's reviewers (``ses``: region, sender).
        digest: when digests go out, for reviewers with ``notify: digest`` or ``both``.
        gemini: each Gemini role's model, location, limits and thinking.
        shadow: a model or profile run in shadow on a share of live mail (None: none).
        authserv_id: the receiving server whose Authentication-Results verdict
            authenticates a sender (default ``mx.google.com``, Gmail;
            ``INBOXFLOW_AUTHSERV_ID`` overrides it): ``mail/authentication.py``.
    """

    routing: RoutingConfig = Field(default_factory=RoutingConfig)
    profiles: list[ProfileConfig] = Field(default_factory=empty_list)
    graphs: dict[str, dict[str, Any]] = Field(default_factory=empty_dict)
    reviewers: dict[str, ReviewerConfig] = Field(default_factory=empty_dict)
    channels: Channels = Field(default_factory=Channels)
    digest: DigestSchedule = Field(default_factory=DigestSchedule)
    gemini: GeminiConfig = Field(default_factory=GeminiConfig)
    shadow: ShadowConfig | None = None
    authserv_id: str | None = Field(default=None, pattern=r"^[A-Za-z0-9.-]{1,253}$")

    _source: str | None = PrivateAttr(default=None)

    @property
    def source(self) -> str | None:
        """The file it was read from (``None``: built in code, or no file)."""
        return self._source

    def rules_for(self, mailbox: str | None) -> list[tuple[str, Rule]]:
        """``(where, rule)`` in evaluation order: the mailbox's own rules, then the global ones."""
        ordered: list[tuple[str, Rule]] = []
        for address, routing in self.routing.mailboxes.items():
            if same_address(address, mailbox):
                ordered += [
                    (f"routing.mailboxes[{address}].rules[{i}]", rule)
                    for i, rule in enumerate(routing.rules)
                ]
        ordered += [(f"routing.rules[{i}]", rule) for i, rule in enumerate(self.routing.rules)]
        return ordered

    def graph_settings(self, name: str) -> dict[str, Any]:
        """The settings ``inboxflow.yaml`` gives graph ``name`` (empty when it gives none)."""
        return dict(self.graphs.get(name) or {})

    def profile_names(self) -> list[str]:
        """The declared profiles' names."""
        return [profile.name for profile in self.profiles]

    def _reviewer(self, reviewer: str) -> ReviewerConfig | None:
        # an address by its address_key (no Unicode folding), a name in ASCII case
        key = address_key_or_none(reviewer) or ascii_lower(reviewer.strip())
        return next(
            (
                value
                for name, value in self.reviewers.items()
                if (address_key_or_none(name) or ascii_lower(name.strip())) == key
            ),
            None,
        )

    def notify_mode(self, reviewer: str) -> str:
        """What ``reviewer`` is sent: ``each``, ``digest`` or ``both`` (unlisted: ``each``)."""
        entry = self._reviewer(reviewer)
        return "each" if entry is None else entry.notify

    def digest_schedule(self, reviewer: str) -> DigestSchedule:
        """When ``reviewer``'s digests go out: their ``digest:`` over the top-level one."""
        entry = self._reviewer(reviewer)
        if entry is None or entry.digest is None:
            return self.digest
        return self.digest.model_copy(update=entry.digest.model_dump(exclude_unset=True))

    def digest_reviewers(self) -> list[str]:
        """The reviewers (as ``reviewers:`` names them) with ``notify: digest`` or ``both``."""
        return [name for name, entry in self.reviewers.items() if entry.notify != "each"]

    def delivery(self, reviewer: str) -> Delivery:
        """How ``reviewer`` is notified: their ``reviewers:`` entry (key case-insensitive), else gmail."""
        entry = self._reviewer(reviewer)
        if entry is None:
            return Delivery(address=reviewer)
        return Delivery(
            channel=entry.channel,
            address=entry.address or reviewer,
            region=entry.region or self.channels.ses.region,
            sender=entry.sender or self.channels.ses.sender,
            url=entry.url,
            url_env=entry.url_env,
            format=entry.format,
        )

    def channels_in_use(self) -> list[str]:
        """The channels some reviewer uses (gmail always: the default)."""
        return sorted({DEFAULT_CHANNEL, *(entry.channel for entry in self.reviewers.values())})


def config_path(environ: Mapping[str, str]) -> Path | None:
    """The config file to read: ``INBOXFLOW_CONFIG`` of ``environ``, else the project root's, else None."""
    explicit = environ.get(CONFIG_VARIABLE, "").strip()
    if explicit:
        return Path(explicit)
    for root in (_PACKAGE.parent, _PACKAGE.parent.parent):
        candidate = root / CONFIG_NAME
        if candidate.is_file():
            return candidate
    return None


@cache
def _yaml_loader() -> Any:
    """YAML's safe loader (libyaml's when installed), refusing a key given twice in one mapping
    (YAML keeps the last, silently dropping the first: two ``mailboxes:`` blocks would lose
    one's rules). ``yaml`` is imported here: a process reading the compiled form never does."""
    import yaml

    class UniqueKeyLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
        def construct_mapping(self, node: Any, deep: bool = False) -> Any:
            seen: set[Any] = set()
            for key_node, _ in node.value:
                key = self.construct_object(key_node, deep=deep)
                if key in seen:
                    raise yaml.constructor.ConstructorError(
                        None, None, f"duplicate key {key!r}", key_node.start_mark
                    )
                seen.add(key)
            return super().construct_mapping(node, deep=deep)

    return UniqueKeyLoader


def parse_yaml(text: str, source: str | Path) -> Any:
    """The data of a YAML document, refusing duplicate keys.

    Raises:
        ConfigError: not valid YAML (the message names the line).
    """
    import yaml

    try:
        return yaml.load(text, Loader=_yaml_loader())
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1})" if mark is not None else ""
        problem = getattr(exc, "problem", None) or "invalid YAML"
        raise ConfigError(f"{source}: not valid YAML{where}: {problem}") from None


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def compile_config(text: str, source: str | Path = CONFIG_NAME) -> str | None:
    """The compiled form of a config file's text (``inboxflow.yaml.json``), or None when JSON
    cannot carry its data unchanged (a date, a non-string key): the YAML is then read as is.

    Raises:
        ConfigError: the text is not valid YAML.
    """
    data = parse_yaml(text, source)
    try:
        encoded = json.dumps(data, sort_keys=True)
    except (TypeError, ValueError):
        return None
    if json.loads(encoded) != data:
        return None
    return json.dumps({"sha256": _digest(text), "config": data}, sort_keys=True, indent=1) + "\n"


def _compiled_data(target: Path, text: str) -> tuple[bool, Any]:
    """``(True, data)`` from the compiled form beside ``target`` when it was made from ``text``."""
    try:
        compiled = json.loads(target.with_name(target.name + COMPILED_SUFFIX).read_text("utf-8"))
    except (OSError, ValueError):
        return False, None
    if not isinstance(compiled, dict) or compiled.get("sha256") != _digest(text):
        return False, None
    return True, compiled.get("config")


def read_config_text(target: Path) -> str:
    """The config file's text: UTF-8, at most :data:`MAX_CONFIG_BYTES`.

    Raises:
        ConfigError: unreadable, too large or not UTF-8 (one line, with the byte offset).
    """
    try:
        with target.open("rb") as file:
            data = file.read(MAX_CONFIG_BYTES + 1)
    except OSError as exc:
        raise ConfigError(f"{target}: cannot read the config: {exc.strerror or exc}") from None
    if len(data) > MAX_CONFIG_BYTES:
        raise ConfigError(
            f"{target}: the config is larger than {MAX_CONFIG_BYTES:,} bytes, the most accepted"
        )
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"{target}: the config is not UTF-8 text (byte 0x{data[exc.start]:02x} at offset "
            f"{exc.start}): save it as UTF-8"
        ) from None


def load_config(
    path: str | Path | None,
    graphs: Mapping[str, GraphDeclaration],
    environ: Mapping[str, str] | None = None,
    *,
    partial: bool = False,
) -> InboxflowConfig:
    """Read and validate the config (see :func:`config_path` for which file).

    Args:
        path: the file; default :func:`config_path`. An explicit path must exist.
        graphs: the graphs rules may name (the caller's: the composition root passes the
            graph registry, a node function its own graph).
        environ: the environment the entry point read (``INBOXFLOW_CONFIG``); None: none,
            the project root's file.
        partial: ``graphs`` is part of the deployment's (a node function's own
            graph): what names other graphs, and profile tools, are not checked
            (the CLI, ingest and the approval function check everything).

    Raises:
        ConfigError: the file is missing (when named), not YAML, or invalid.
    """
    target = Path(path) if path is not None else config_path(environ or {})
    if target is None:
        return InboxflowConfig()
    text = read_config_text(target)
    found, data = _compiled_data(target, text)
    if not found:
        data = parse_yaml(text, target)
    return parse_config(data, graphs, source=str(target), partial=partial)


def parse_config(
    data: Any,
    graphs: Mapping[str, GraphDeclaration],
    source: str = CONFIG_NAME,
    *,
    partial: bool = False,
) -> InboxflowConfig:
    """Validate already-parsed YAML (``None``: an empty file); ``partial`` as in :func:`load_config`.

    Raises:
        ConfigError: one line naming the rule (or the key) at fault.
    """
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: expected a mapping at the top, got {type(data).__name__}")
    try:
        config = InboxflowConfig.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(_describe(exc, data, source)) from None
    config._source = source
    _check_references(config, graphs, source, partial)
    return config


def _check_references(
    config: InboxflowConfig,
    graphs: Mapping[str, GraphDeclaration],
    source: str,
    partial: bool = False,
) -> None:
    for name, values in config.graphs.items():
        graph = graphs.get(name)
        if graph is None:
            if partial:
                continue
            raise ConfigError(
                f"{source}: graphs.{name}: unknown graph; graphs: {', '.join(sorted(graphs))}"
            )
        if graph.settings_model is None:
            if values:
                raise ConfigError(f"{source}: graphs.{name}: this graph takes no settings")
            continue
        try:
            graph.settings_model.model_validate(values or {})
        except ValidationError as exc:
            err = exc.errors()[0]
            field = ".".join(str(part) for part in err["loc"]) or "(settings)"
            more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
            raise ConfigError(f"{source}: graphs.{name}.{field}: {err['msg']}{more}") from None
    profiles = config.profile_names()
    seen_profiles: set[str] = set()
    for index, name in enumerate(profiles):
        if name in seen_profiles:
            raise ConfigError(f"{source}: profiles[{index}]: duplicate profile name {name!r}")
        seen_profiles.add(name)
    _check_profiles(config, graphs, source, partial=partial)
    _check_reviewers(config, source)
    _check_shadow(config, graphs, source, partial)
    seen_mailboxes: dict[str, str] = {}
    for address in config.routing.mailboxes:
        key = address.strip().lower()
        if "@" not in key:
            raise ConfigError(f"{source}: routing.mailboxes: {address!r} is not a mailbox address")
        if key in seen_mailboxes:
            raise ConfigError(
                f"{source}: routing.mailboxes: {address!r} repeats {seen_mailboxes[key]!r}"
            )
        seen_mailboxes[key] = address
    every = [
        (f"routing.mailboxes[{address}].rules[{i}]", rule)
        for address, routing in config.routing.mailboxes.items()
        for i, rule in enumerate(routing.rules)
    ] + [(f"routing.rules[{i}]", rule) for i, rule in enumerate(config.routing.rules)]
    names: dict[str, str] = {}
    for where, rule in every:
        prefix = f"{source}: rule {rule.name!r} ({where})"
        if rule.name in names:
            raise ConfigError(f"{prefix}: duplicate rule name (also {names[rule.name]})")
        names[rule.name] = where
        graph = graphs.get(rule.route)
        if graph is None and partial:
            continue
        if graph is None:
            raise ConfigError(
                f"{prefix}: unknown graph {rule.route!r}; graphs: {', '.join(sorted(graphs))}"
            )
        if graph.takes_profile and rule.profile is None:
            raise ConfigError(
                f"{prefix}: graph {rule.route!r} needs a profile; profiles: "
                f"{', '.join(profiles) or '(none declared)'}"
            )
        if not graph.takes_profile and rule.profile is not None:
            raise ConfigError(
                f"{prefix}: graph {rule.route!r} takes no profile (got {rule.profile!r})"
            )
        if rule.profile is not None and rule.profile not in seen_profiles:
            raise ConfigError(
                f"{prefix}: unknown profile {rule.profile!r}; profiles: "
                f"{', '.join(profiles) or '(none declared)'}"
            )


def _check_shadow(
    config: InboxflowConfig, graphs: Mapping[str, GraphDeclaration], source: str, partial: bool
) -> None:
    shadow = config.shadow
    if shadow is None:
        return
    for index, name in enumerate(shadow.graphs):
        if name not in graphs and not partial:
            raise ConfigError(
                f"{source}: shadow.graphs[{index}]: unknown graph {name!r}; "
                f"graphs: {', '.join(sorted(graphs))}"
            )
    if shadow.profile is not None and shadow.profile not in config.profile_names():
        raise ConfigError(
            f"{source}: shadow.profile: unknown profile {shadow.profile!r}; profiles: "
            f"{', '.join(config.profile_names()) or '(none declared)'}"
        )


_EVERY_CHANNEL_KEYS = {"channel", "notify", "digest"}
_CHANNEL_KEYS = {
    "gmail": _EVERY_CHANNEL_KEYS | {"address"},
    "ses": _EVERY_CHANNEL_KEYS | {"address", "region", "sender"},
    "webhook": _EVERY_CHANNEL_KEYS | {"url", "url_env", "format"},
}


def _check_reviewers(config: InboxflowConfig, source: str) -> None:
    """Each reviewer's channel is known and has what it needs (SES region and sender, a URL)."""
    ses = config.channels.ses
    if ses.region is not None and not _AWS_REGION.fullmatch(ses.region):
        raise ConfigError(f"{source}: channels.ses.region: {ses.region!r} is not an AWS region")
    if ses.sender is not None and not _ADDRESS.fullmatch(ses.sender):
        raise ConfigError(f"{source}: channels.ses.sender: {ses.sender!r} is not an email address")
    seen: dict[str, str] = {}
    for name, entry in config.reviewers.items():
        prefix = f"{source}: reviewers[{name}]"
        key = name.strip().lower()
        if not key or any(c.isspace() for c in key):
            raise ConfigError(f"{prefix}: a reviewer is an address or a name without spaces")
        if key in seen:
            raise ConfigError(f"{prefix}: repeats {seen[key]!r}")
        seen[key] = name
        if entry.channel not in CHANNELS:
            raise ConfigError(
                f"{prefix}: unknown channel {entry.channel!r}; channels: {', '.join(CHANNELS)}"
            )
        given = set(entry.model_fields_set)
        foreign = sorted(given - _CHANNEL_KEYS[entry.channel])
        if foreign:
            raise ConfigError(f"{prefix}: {foreign[0]!r} does not apply to channel {entry.channel}")
        delivery = config.delivery(name)
        if entry.channel in ("gmail", "ses") and not _ADDRESS.fullmatch(delivery.address):
            raise ConfigError(
                f"{prefix}: {delivery.address!r} is not an email address (give `address:`)"
            )
        if entry.channel == "ses":
            if not delivery.region:
                raise ConfigError(
                    f"{prefix}: channel ses needs a region (reviewers[{name}].region or channels.ses.region)"
                )
            if not _AWS_REGION.fullmatch(delivery.region):
                raise ConfigError(f"{prefix}: {delivery.region!r} is not an AWS region")
            if not delivery.sender:
                raise ConfigError(
                    f"{prefix}: channel ses needs a sender (reviewers[{name}].sender or channels.ses.sender)"
                )
            if not _ADDRESS.fullmatch(delivery.sender):
                raise ConfigError(f"{prefix}: sender {delivery.sender!r} is not an email address")
        if entry.channel == "webhook":
            if (entry.url is None) == (entry.url_env is None):
                raise ConfigError(f"{prefix}: channel webhook needs one of url or url_env")
            if entry.url is not None and (problem := check_webhook_url(entry.url)):
                raise ConfigError(f"{prefix}: {problem}")
            if entry.url_env is not None and not _ENV_NAME.fullmatch(entry.url_env):
                raise ConfigError(f"{prefix}: url_env {entry.url_env!r} is not a variable name")


def _check_profiles(
    config: InboxflowConfig,
    graphs: Mapping[str, GraphDeclaration],
    source: str,
    *,
    partial: bool,
) -> None:
    """Each profile's tools exist in a profile-taking graph (unless ``partial``); its prompt
    file is there (and read)."""
    known: set[str] = set()
    for graph in graphs.values():
        if graph.takes_profile and not partial:  # a node function does not import the tools
            known.update(graph.tools.names())
    folder = Path(source).parent if config.source else Path.cwd()
    for index, profile in enumerate(config.profiles):
        prefix = f"{source}: profile {profile.name!r} (profiles[{index}])"
        unknown = [tool for tool in profile.tools if tool not in known]
        if unknown and not partial:
            raise ConfigError(
                f"{prefix}: unknown tool {unknown[0]!r}; tools: {', '.join(sorted(known)) or '(none)'}"
            )
        relative = Path(profile.system_prompt_file)
        candidates = [folder / relative, SHIPPED_PROMPTS / relative]
        found = next((path for path in candidates if path.is_file()), None)
        if found is None:
            raise ConfigError(
                f"{prefix}: system_prompt_file {profile.system_prompt_file!r} not found "
                f"(looked in {folder} and {SHIPPED_PROMPTS})"
            )
        try:
            profile._prompt = found.read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"{prefix}: cannot read {found}: {exc}") from None
        if not profile._prompt:
            raise ConfigError(f"{prefix}: system_prompt_file {found} is empty")


def _describe(exc: ValidationError, data: Mapping[str, Any], source: str) -> str:
    """The first pydantic error as one line, naming the rule when it is inside one."""
    error = exc.errors()[0]
    loc = [part for part in error["loc"] if part != "function-after"]
    rule_at = _rule_location(loc)
    message = str(error["msg"]).removeprefix("Value error, ")
    if error["type"] == "extra_forbidden":
        message = f"unknown key {loc[-1]!r}"
        loc = loc[:-1]
    elif error["type"] == "missing":
        message = f"missing key {loc[-1]!r}"
        loc = loc[:-1]
    extra = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
    found = _lookup(data, loc[:2]) if len(loc) >= 2 and loc[0] == "profiles" else None
    if isinstance(found, Mapping) and isinstance(found.get("name"), str):
        label = f"profile {found['name']!r}"
        inside = ".".join(str(p) for p in loc[2:])
        return (
            f"{source}: {label} (profiles[{loc[1]}]): "
            f"{inside + ': ' if inside else ''}{message}{extra}"
        )
    if rule_at is not None:
        rule_loc, rest = loc[:rule_at], loc[rule_at:]
        name = _lookup(data, rule_loc)
        label = (
            f"rule {name['name']!r}"
            if isinstance(name, Mapping) and isinstance(name.get("name"), str)
            else "rule"
        )
        inside = ".".join(str(p) for p in rest)
        return (
            f"{source}: {label} ({_dotted(rule_loc)}): "
            f"{inside + ': ' if inside else ''}{message}{extra}"
        )
    return f"{source}: {_dotted(loc) or '(top)'}: {message}{extra}"


def _rule_location(loc: list[Any]) -> int | None:
    """How many parts of ``loc`` lead to a rule (``routing.rules[i]`` or a mailbox's)."""
    for end in range(2, len(loc) + 1):
        if loc[end - 2] == "rules" and isinstance(loc[end - 1], int) and loc[0] == "routing":
            return end
    return None


def _dotted(loc: list[Any]) -> str:
    text = ""
    for index, part in enumerate(loc):
        if isinstance(part, int) or (index and loc[index - 1] in ("mailboxes", "reviewers")):
            text += f"[{part}]"
        else:
            text += f".{part}" if text else str(part)
    return text


def _lookup(data: Any, loc: list[Any]) -> Any:
    for part in loc:
        try:
            data = data[part]
        except (KeyError, IndexError, TypeError):
            return None
    return data
