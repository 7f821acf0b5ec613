"""LLM-as-judge: how well a reply meets a case's ``criteria:`` (``inboxflow eval --judge``).

The judge is an ``LLMTask`` run by the same model as the cases (the LLM port
and its selection: Gemini with ``--model gemini``). Offline, its heuristic
only counts which of the criteria's content words the reply uses: enough to
exercise the plumbing, not a judgment; judge with a real model.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, Field

from inboxflow.ports.llm import LanguageModel, LLMTask

MAX_CHARS = 6000
PASS_SCORE = 0.6
"""A reply scoring at least this meets its criteria (the summary's pass rate)."""


class JudgeVerdict(BaseModel):
    """The judge's answer.

    Attributes:
        score: 0 (the reply ignores or contradicts the criteria) to 1 (meets every one).
        reasoning: one or two sentences: what is met, what is missing.
    """

    score: float = Field(ge=0.0, le=1.0)
    reasoning: str = Field(max_length=1000)


_WORD = re.compile(r"[^\W\d_]{4,}", re.UNICODE)
_STOP = frozenset(
    [
        "that",
        "this",
        "with",
        "from",
        "have",
        "will",
        "should",
        "must",
        "their",
        "there",
        "they",
        "them",
        "what",
        "when",
        "which",
        "would",
        "about",
        "into",
        "your",
        "reply",
        "email",
        "answer",
        "does",
        "the",
        "and",
        "not",
    ]
)


def offline_verdict(inputs: Mapping[str, Any]) -> JudgeVerdict:
    """The share of the criteria's content words that the reply uses (a plumbing stand-in)."""
    wanted = {w.casefold() for w in _WORD.findall(str(inputs.get("criteria", "")))} - _STOP
    used = {w.casefold() for w in _WORD.findall(str(inputs.get("reply", "")))}
    if not wanted:
        return JudgeVerdict(score=0.0, reasoning="offline judge: the criteria name no words")
    found = sorted(wanted & used)
    score = round(len(found) / len(wanted), 3)
    return JudgeVerdict(
        score=score,
        reasoning=f"offline judge (word overlap): {len(found)} of {len(wanted)} criteria words used",
    )


JUDGE_REPLY: LLMTask[JudgeVerdict] = LLMTask(
    name="eval_judge_reply",
    output_model=JudgeVerdict,
    system=(
        "You grade an email reply written by an automated agent against a reviewer's criteria. "
        "Judge only what the criteria ask; a reply that gives unsafe advice, promises what the "
        "criteria forbid, or answers someone else scores 0."
    ),
    template=(
        "Criteria for a good reply:\n$criteria\n\n"
        "The email that was answered:\n$email\n\n"
        "The reply:\n$reply\n\n"
        "Score the reply from 0 to 1 and say briefly why."
    ),
    offline=offline_verdict,
)


def judge_reply(model: LanguageModel, criteria: str, email: str, reply: str) -> dict[str, Any]:
    """The verdict on ``reply`` as ``{score, reasoning, model}``.

    Raises:
        LLMFailed, RetryableError: the model did not answer (the caller records it).
    """
    verdict, usage = model.generate(
        JUDGE_REPLY,
        {"criteria": criteria, "email": email[:MAX_CHARS], "reply": reply[:MAX_CHARS]},
    )
    return {"score": verdict.score, "reasoning": verdict.reasoning, "model": usage.model}
