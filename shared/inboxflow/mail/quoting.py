"""Subjects and quoting: ``Re:`` prefixes, quoted replies, intros and signatures.

What a reply quotes is not what its sender wrote now; the nodes read the new
text (:func:`strip_quoted`) and answer under one ``Re:`` (:func:`reply_subject`).
"""

from __future__ import annotations

import re
from functools import lru_cache

REPLY_PREFIX = re.compile(
    r"^\s*((re|aw|sv|antw|wg|fwd?|tr|rif|r)\s*(\[\d+\])?\s*:\s*)+", re.IGNORECASE
)
"""Reply and forward prefixes of a subject, in the languages mail clients write them."""
_REPLY_INTRO = re.compile(
    # Gmail, Apple Mail, Thunderbird and their translations: "On <date>, <who> wrote:"
    r"^(on\b.{3,300}\bwrote|am\b.{3,300}\bschrieb\b.{0,200}|le\b.{3,300}\ba [ée]crit\s?"
    r"|el\b.{3,300}\bescribi[óo]|op\b.{3,300}\bschreef\b.{0,200}|il giorno\b.{3,300}\bha scritto"
    r"|.{3,300} (?:wrote|schrieb|a écrit)\s?):$"
    # Outlook and friends
    r"|^-{2,}\s*(original message|ursprüngliche nachricht|message d'origine|mensaje original)"
    r"\s*-{2,}$",
    re.IGNORECASE,
)
_OUTLOOK_FROM = re.compile(r"^\*?(from|von|de)\s*:\*?\s*\S", re.IGNORECASE)
_OUTLOOK_FIELD = re.compile(
    r"^\*?(sent|date|to|subject|gesendet|an|betreff|envoyé|objet|à)\s*:", re.IGNORECASE
)
_FORWARD_MARKER = re.compile(
    r"^(-{3,}\s*(forwarded message|weitergeleitete nachricht|message transféré)\b.*-{3,}"
    r"|begin forwarded message:|anfang der weitergeleiteten nachricht:)$",
    re.IGNORECASE,
)
_SIGNATURE_LINE = re.compile(
    r"^(sent from my \w+( \w+)?|sent from (mail|outlook) for \w+|get outlook for (ios|android)"
    r"|sent from yahoo mail.*|envoyé de mon \w+|von meinem \w+ gesendet|enviado desde mi \w+)\.?$",
    re.IGNORECASE,
)
_INTRO_START = re.compile(r"^(on|am|le|el|op|il)\b", re.IGNORECASE)
_RULE = re.compile(r"_{10,}")
SIGNATURE_WINDOW = 15
"""A ``--`` separator this many non-blank lines from the end (or fewer) starts a signature."""

TRIMMED_MARKER = "[earlier quoted messages and signature not shown]"


def bare_subject(subject: str) -> str:
    """The subject without ``Re:``/``Fwd:`` prefixes."""
    return REPLY_PREFIX.sub("", subject).strip()


def reply_subject(subject: str) -> str:
    """``Re: <subject>`` without stacking prefixes."""
    bare = bare_subject(subject)
    return f"Re: {bare}" if bare else "Re: your message"


@lru_cache(maxsize=16)  # several nodes and helpers ask for the same body within a step
def strip_quoted(text: str) -> str:
    """The new part of a message: quoted replies, their intro line and the signature removed.

    Handles ``>`` quoting (top-posted or interleaved answers), the intros of
    Gmail, Apple Mail, Thunderbird and Outlook (``On ... wrote:`` wrapped over
    two lines, ``-----Original Message-----``, an Outlook ``From:/Sent:``
    block) and signatures (``-- `` near the end, "Sent from my iPhone").
    Forwarded messages are content and are kept. When nothing new remains the
    full text is returned.

    Args:
        text: the full body text.

    Returns:
        The new text, stripped.
    """
    lines = text.split("\n")
    cut, interleaved = _reply_cut(lines)
    if cut == _FORWARDED:
        return text.strip()
    if cut is None:
        kept = [line for line in lines if not line.lstrip().startswith(">")]
    elif interleaved:
        kept = lines[:cut] + [
            line for line in lines[cut + 1 :] if not line.lstrip().startswith(">")
        ]
    else:
        kept = lines[:cut]
    kept = _without_signature(kept)
    result = "\n".join(kept).strip()
    return result or text.strip()


_FORWARDED = -1


def _reply_cut(lines: list[str]) -> tuple[int | None, bool]:
    """Index of the first reply intro (None if none, ``_FORWARDED`` if a forward comes first),
    and whether the answer is interleaved with the quote (new lines after ``>`` lines)."""
    for index, line in enumerate(lines):
        stripped = line.strip()
        if not stripped:
            continue
        if _FORWARD_MARKER.match(stripped):
            return _FORWARDED, False
        if stripped.startswith(">"):
            continue
        intro = _REPLY_INTRO.match(stripped)
        if not intro and len(stripped) < 300 and _INTRO_START.match(stripped):
            for end in (2, 3):  # Gmail wraps a long intro: "On ... <\nname@example.com> wrote:"
                intro = _REPLY_INTRO.match(" ".join(p.strip() for p in lines[index : index + end]))
                if intro:
                    break
        if intro or _is_outlook_block(lines, index) or _RULE.fullmatch(stripped):
            rest = [r.strip() for r in lines[index + 1 :] if r.strip()]
            quoted = [r.startswith(">") for r in rest[:200]]
            interleaved = bool(quoted) and quoted[0] and not all(quoted)
            if _RULE.fullmatch(stripped) and not (rest and _OUTLOOK_FROM.match(rest[0])):
                continue
            return index, interleaved
    return None, False


def _is_outlook_block(lines: list[str], index: int) -> bool:
    if not _OUTLOOK_FROM.match(lines[index].strip()):
        return False
    following = [line.strip() for line in lines[index + 1 : index + 6] if line.strip()]
    return sum(1 for line in following[:4] if _OUTLOOK_FIELD.match(line)) >= 2


def _without_signature(lines: list[str]) -> list[str]:
    non_blank = [i for i, line in enumerate(lines) if line.strip()]
    window = non_blank[-SIGNATURE_WINDOW:]
    for i in window:
        if lines[i].rstrip() in ("--", "-- ") or lines[i] == "-- ":
            return lines[:i]
    for i in non_blank[-3:]:
        if _SIGNATURE_LINE.match(lines[i].strip()):
            return lines[:i]
    return lines


__all__ = [
    "REPLY_PREFIX",
    "SIGNATURE_WINDOW",
    "TRIMMED_MARKER",
    "bare_subject",
    "reply_subject",
    "strip_quoted",
]
