"""Tool registry: name, description, JSON-Schema parameters from a pydantic model, handler."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ValidationError

from .bindings import Binding

ToolHandler = Callable[[Any, Any], dict[str, Any]]
"""``(params, ctx) -> result``: ``ctx`` is the calling node's ``NodeContext`` (not named here:
``context`` imports this module)."""


@dataclass(frozen=True)
class Tool:
    """A callable capability offered to agents.

    Attributes:
        name: tool name used in tool calls.
        description: what it does, for the model.
        params: pydantic model of the arguments (its JSON Schema is the spec).
        handler: ``(params, ctx) -> result``.
        action: True if it changes the world (send, draft, insert): such tools
            run at dispatch through the effect journal, not while gathering context.
        binds: for an action tool (required), the recipient or subject it is bound
            to (one ``Binding``, or a tuple when it is bound to several); the runtime
            refuses any call outside them (``inboxflow.engine.bindings``).
        uses_calendar: it reads or writes the mailbox owner's Google Calendar: a
            mailbox whose graph offers it is asked to consent to ``calendar.events``
            (``inboxflow.mailbox_scopes``); others are asked for Gmail alone.
    """

    name: str
    description: str
    params: type[BaseModel]
    handler: ToolHandler
    action: bool = False
    binds: Binding | tuple[Binding, ...] | None = None
    uses_calendar: bool = False

    def __post_init__(self) -> None:
        if self.action and not self.bindings:
            raise ValueError(
                f"tool {self.name!r} writes outside the trace: declare what it is bound to (binds=)"
            )
        for binding in self.bindings:
            if binding.argument is not None and binding.argument not in self.params.model_fields:
                raise ValueError(
                    f"tool {self.name!r} binds {binding.argument!r}, which it does not take"
                )

    @property
    def bindings(self) -> tuple[Binding, ...]:
        """What the tool is bound to (empty for a tool that writes nothing outside the trace)."""
        if self.binds is None:
            return ()
        return self.binds if isinstance(self.binds, tuple) else (self.binds,)

    def spec(self) -> dict[str, Any]:
        """The function-calling declaration of this tool."""
        return {
            "name": self.name,
            "description": self.description,
            "parameters": self.params.model_json_schema(),
        }


class ToolRegistry:
    """Tools by name: one registry per graph (or agent profile); names are unique within it."""

    def __init__(self, tools: Iterable[Tool] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        for tool in tools:
            self.register(tool)

    def register(self, tool: Tool) -> None:
        """Add a tool; names are unique."""
        if tool.name in self._tools:
            raise ValueError(f"tool {tool.name!r} is already registered")
        self._tools[tool.name] = tool

    def only(self, names: Iterable[str]) -> ToolRegistry:
        """A registry with just ``names`` (a node's declared tools); unknown names are an error."""
        wanted = list(names)
        missing = [name for name in wanted if name not in self._tools]
        if missing:
            raise KeyError(f"no tools {missing} in this registry")
        return ToolRegistry(self._tools[name] for name in wanted)

    def get(self, name: str) -> Tool:
        """The tool called ``name``; KeyError if there is none."""
        return self._tools[name]

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def names(self) -> list[str]:
        """Registered tool names."""
        return sorted(self._tools)

    def specs(self) -> list[dict[str, Any]]:
        """Every tool's function-calling declaration."""
        return [self._tools[name].spec() for name in self.names()]

    def openai_specs(self) -> list[dict[str, Any]]:
        """Every tool in the OpenAI function-calling format (``{"type": "function", "function": ...}``)."""
        return [{"type": "function", "function": spec} for spec in self.specs()]

    def parse(self, name: str, arguments: dict[str, Any]) -> BaseModel:
        """Validate arguments for a tool.

        Raises:
            KeyError: unknown tool.
            ValidationError: bad arguments.
        """
        return self.get(name).params.model_validate(arguments)


__all__ = ["Binding", "Tool", "ToolHandler", "ToolRegistry", "ValidationError"]
