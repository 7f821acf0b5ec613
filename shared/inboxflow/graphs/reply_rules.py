"""The offline model's rules for ``update_response_preferences`` (:mod:`.reply_learning`),
imported on the first offline call only.

- the first paragraph edited (60 characters or fewer, with more paragraphs after it): the
  greeting, the recipient's first name kept as ``{first_name}`` and the rest of their name
  left out; a greeting that names them otherwise (``Dear Ms Keller,``) is not learnt: one
  customer's name never reaches another's draft;
- the last paragraph edited (80 characters or fewer): the sign-off;
- the decision's comment: a note ``never: <comment>`` (the recipient's name in a note is
  written ``[name]``);
- a sentence between them replaced by another (a fact corrected): a note
  ``fact: <new> (not: <old>)``, at most ``FACTS_PER_EDIT`` per edit.

Notes are kept once each, the last ``NOTES_KEEP``.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Mapping
from typing import Any

from .reply_learning import ResponseProfile, ResponseUpdate, name_words, unnamed, without_name

NOTES_KEEP = 20
FACTS_PER_EDIT = 3
NOTE_CHARS = 300
SENTENCE = re.compile(r"(?<=[.!?])\s+")


def _paragraphs(text: str) -> list[str]:
    return [block.strip() for block in text.replace("\r\n", "\n").split("\n\n") if block.strip()]


def _sentences(paragraphs: list[str]) -> list[str]:
    return [s.strip() for p in paragraphs for s in SENTENCE.split(p) if s.strip()]


def _corrected(before: list[str], after: list[str]) -> list[str]:
    """``fact:`` notes for the sentences of the body (between greeting and sign-off) that the
    edit replaced."""
    old, new = _sentences(before[1:-1]), _sentences(after[1:-1])
    notes = []
    matcher = difflib.SequenceMatcher(a=old, b=new, autojunk=False)
    for op, a1, a2, b1, b2 in matcher.get_opcodes():
        if op == "replace":
            wrong, right = " ".join(old[a1:a2]), " ".join(new[b1:b2])
            notes.append(f"fact: {right} (not: {wrong})"[:NOTE_CHARS])
    return notes[:FACTS_PER_EDIT]


def response_rules(inputs: Mapping[str, Any]) -> ResponseUpdate:
    """The edited greeting and sign-off; the comment and the corrected facts as notes."""
    profile = ResponseProfile.model_validate(json.loads(inputs["profile"]))
    details = json.loads(inputs["details"])
    before = _paragraphs(str((details.get("before") or {}).get("content", "")))
    after = _paragraphs(str((details.get("after") or {}).get("content", "")))
    p, changes = profile.model_copy(deep=True), []
    if before and after and before[-1] != after[-1] and len(after[-1]) <= 80:
        p.sign_off = after[-1]
        changes.append(f"sign-off is now {after[-1]!r}")
    names = name_words(details)
    if len(after) > 1 and before and before[0] != after[0] and len(after[0]) <= 60:
        greeting = without_name(after[0], str(details.get("first_name") or ""), names)
        if greeting is None:
            changes.append("the greeting names the recipient: not learnt")
        else:
            p.greeting = greeting
            changes.append(f"greeting is now {greeting!r}")
    notes = []
    comment = " ".join(str(details.get("comment") or "").split())
    if comment:
        notes.append(f"never: {comment}"[:NOTE_CHARS])
    if len(before) > 2 and len(after) > 2:
        notes += _corrected(before, after)
    notes = [unnamed(note, names) for note in notes]
    fresh = [note for note in dict.fromkeys(notes) if note not in p.notes]
    if fresh:
        p.notes = [*p.notes, *fresh][-NOTES_KEEP:]
        changes += [f"noted {note!r}" for note in fresh]
    why = "; ".join(changes) or "the edit shows no greeting or sign-off preference"
    return ResponseUpdate(profile=p, changed=p != profile, why=why)


__all__ = ["response_rules"]
