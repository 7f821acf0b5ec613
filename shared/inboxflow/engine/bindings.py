"""Effect bindings: whom a tool that writes outside the trace may act on, whatever the model says.

Every action tool (send, draft, reservation, ticket, quote, calendar) declares a
:class:`Binding` in its :class:`~inboxflow.engine.tools.Tool` declaration: the subject it
is bound to (``requester``, ``customer``, ``quote``...) and the argument that
names it, if any. The node that runs the tools says who that subject is for
this run (``NodeContext.bound``, from the email and the state, never from the
model). One check, :func:`refusal`, run by ``NodeContext.call_tool`` before the
handler (and by ``NodeContext.check_binding`` for nodes that perform a declared
tool's effect themselves), compares the two:

- ``address``: the argument is exactly one well-formed address, one of the bound ones;
- ``addresses``: a list, each item as ``address``;
- ``id``: the argument is one of the bound ids (a Message-ID with or without ``<>``);
- no argument: the subject must be bound; the handler takes it from the binding
  (:meth:`~inboxflow.engine.context.NodeContext.bound_subject`), not from the arguments.

A refused call raises :class:`BindingRefused` (a ``NodeFailed``): nothing is
written, the call is recorded on the step, and the run goes to a person
(``needs_review``, or the graph's own escalation).

**No relay.** A binding says whom a tool may write to; :func:`relay_refusal` says
whom mail may go to *without a person reviewing it* (pipeline auto-send, support's
auto_respond, the planner's customer mail, an agent profile's ``send_reply``): only
the authenticated sender (:func:`~inboxflow.mail.authentication.check_sender`, the
configured authserv-id) or an address the mailbox has already written to (a message
in its sent mail is addressed to it: ``Workspace.has_written_to``). A ``Reply-To``, a
forwarded mail's original writer or a From no receiving server vouched for is any
other address: the send waits for a person, with the reason.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from email.utils import getaddresses
from typing import TYPE_CHECKING, Any, Literal, Protocol

from ..errors import NodeFailed
from ..mail.addresses import address_key_or_none, same_address

if TYPE_CHECKING:
    from ..mail.model import Email

BindingKind = Literal["address", "addresses", "id"]
Bound = Mapping[str, tuple[str, ...]]
"""Bound subjects of a run: subject name -> the values a tool may name (addresses lower-case)."""

_ADDRESS = re.compile(r"^[^@\s,;:<>()\[\]\"\\]+@[^@\s,;:<>()\[\]\"\\]+\.[^@\s,;:<>()\[\]\"\\]+$")
_CONTROL = re.compile(r"[\x00-\x1f\x7f\u0085\u2028\u2029]")


class BindingRefused(NodeFailed):
    """A tool call named a recipient or subject it is not bound to: nothing was written."""


@dataclass(frozen=True)
class Binding:
    """What a writing tool is bound to (part of its declaration).

    Attributes:
        subject: the bound party, resolved per run by the node running the tool.
        argument: the parameter naming it; None when the tool never takes it from
            its arguments (the handler reads ``ctx.bound_subject(subject)``).
        kind: how the argument is compared: ``address``, ``addresses`` or ``id``.
        description: who the subject is, in words (docs, refusals).
    """

    subject: str
    argument: str | None = None
    kind: BindingKind = "address"
    description: str = ""

    def describe(self) -> str:
        """``to -> requester (the person who asked)``."""
        what = f"{self.argument} -> {self.subject}" if self.argument else self.subject
        return f"{what} ({self.description})" if self.description else what


def address_of(value: str) -> str | None:
    """The one address in ``value`` (``Name <a@b.c>`` or ``a@b.c``) as its ``address_key``
    (:mod:`inboxflow.mail.addresses`); None otherwise."""
    if not isinstance(value, str) or _CONTROL.search(value) or value.count("@") != 1:
        return None
    found = [address for _, address in getaddresses([value]) if address]
    if len(found) != 1 or not _ADDRESS.match(found[0]):
        return None
    return address_key_or_none(found[0])


def bound_addresses(*values: str | None) -> tuple[str, ...]:
    """The well-formed addresses among ``values`` (each ``Name <a@b.c>`` or a bare address),
    as their ``address_key``s."""
    found: list[str] = []
    for value in values:
        for _, address in getaddresses([value or ""]):
            key = address_key_or_none(address) if address and _ADDRESS.match(address) else None
            if key is not None and key not in found:
                found.append(key)
    return tuple(found)


def refusal(tool: str, binding: Binding, arguments: Any, bound: Bound) -> str | None:
    """Why the call breaks ``binding`` (one line), or None when it keeps to it.

    Args:
        tool: the tool's name (for the message).
        binding: the tool's declared binding.
        arguments: the validated parameters (a pydantic model) or a mapping.
        bound: the run's bound subjects.
    """
    allowed = tuple(bound.get(binding.subject, ()))
    who = binding.description or binding.subject
    if not allowed:
        named = (
            f" {binding.argument}={_argument(arguments, binding.argument)!r}"
            if binding.argument
            else ""
        )
        return f"{tool}{named}: it is bound to {who}, and no {binding.subject} is bound in this run"
    if binding.argument is None:
        return None
    value = _argument(arguments, binding.argument)
    shown = ", ".join(allowed)
    if binding.kind == "id":
        if isinstance(value, str) and _id(value) in {_id(v) for v in allowed}:
            return None
        return f"{tool} {binding.argument}={value!r} is not {who} ({shown})"
    items: list[Any]
    if binding.kind == "addresses":
        if not isinstance(value, list):
            return f"{tool} {binding.argument} must list addresses of {who} ({shown})"
        items = value
    else:
        items = [value]
    for item in items:
        address = address_of(item) if isinstance(item, str) else None
        if address is None:
            return (
                f"{tool} {binding.argument}={item!r} is not exactly one address; "
                f"it is bound to {who} ({shown})"
            )
        if address not in allowed:
            return f"{tool} {binding.argument}={address!r} is not {who} ({shown})"
    return None


def with_approved(bindings: Iterable[Binding], bound: Bound, arguments: Mapping[str, Any]) -> Bound:
    """``bound`` plus what a person put in the bound arguments when editing a paused call.

    A reviewer's edit is a person's decision, not the model's: the values they
    typed (and approved) are bound for that call.
    """
    merged = dict(bound)
    for binding in bindings:
        if binding.argument is None or binding.argument not in arguments:
            continue
        value = arguments[binding.argument]
        values: Iterable[Any] = value if isinstance(value, list) else str(value).split(",")
        if binding.kind == "id":
            extra = tuple(str(v).strip() for v in values if str(v).strip())
        else:
            extra = bound_addresses(*(str(v) for v in values))
        merged[binding.subject] = tuple(dict.fromkeys([*merged.get(binding.subject, ()), *extra]))
    return merged


class SenderVerdict(Protocol):
    """What authentication said of an email's sender (``mail.authentication.SenderCheck``)."""

    @property
    def address(self) -> str | None:
        """The authenticated sender, or None."""

    @property
    def reason(self) -> str:
        """How it was authenticated, or why not."""


def relay_refusal(
    to: Any,
    email: Email,
    sender: SenderVerdict,
    corresponded: Callable[[str], bool],
) -> str | None:
    """Why mail to ``to`` answering ``email`` may not go out unreviewed (one line), or None.

    The no-relay rule (module docstring): an unreviewed send goes only to the
    authenticated sender of ``email`` or to an address the mailbox has already
    written to. Addresses are compared by :func:`~inboxflow.mail.addresses.same_address`.

    Args:
        to: the recipient the send names (one address, ``Name <a@b.c>`` allowed).
        email: the email answered.
        sender: ``check_sender(email, authserv_id)`` with the configured authserv-id
            (a forwarded mail's original writer is never its address: only From is).
        corresponded: whether the mailbox has already written to an address
            (``Workspace.has_written_to``; asked only when authentication does not decide).
    """
    address = address_of(to) if isinstance(to, str) else None
    if address is None or address_key_or_none(address) is None:
        return f"not sent without review: {to!r} is not exactly one address"
    checked = sender
    if same_address(checked.address, address):
        return None
    if corresponded(address):
        return None
    if checked.address is not None:
        why = f"the authenticated sender is {checked.address}"
    else:
        why = f"the sender is not authenticated: {checked.reason}"
    return (
        f"not sent without review: {address} ({_role(address, email)}) is not the "
        f"authenticated sender ({why}) and the mailbox has never written to it"
    )


def _role(address: str, email: Email) -> str:
    """What ``address`` is on ``email``, in words (for the reason a person reads)."""
    if any(same_address(a, address) for _, a in getaddresses([email.header("reply-to")])):
        return "the Reply-To"
    if same_address(email.sender.address, address):
        return "the From"
    return "not the email's From"


def _id(value: str) -> str:
    """An id as compared: without surrounding blanks and angle brackets (a Message-ID's)."""
    return value.strip().removeprefix("<").removesuffix(">").strip()


def _argument(arguments: Any, name: str) -> Any:
    if isinstance(arguments, Mapping):
        return arguments.get(name)
    return getattr(arguments, name, None)


__all__ = [
    "Binding",
    "BindingKind",
    "BindingRefused",
    "Bound",
    "SenderVerdict",
    "address_of",
    "bound_addresses",
    "refusal",
    "relay_refusal",
    "with_approved",
]
