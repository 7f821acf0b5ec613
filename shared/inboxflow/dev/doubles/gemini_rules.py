"""What the strict Gemini double refuses, as the real API does (the checks of ``GeminiDouble``).

Each rule comes from a primary source:

- the models served and shut down: Google's "Gemini deprecations" page
  (ai.google.dev/gemini-api/docs/deprecations, as stored 2026-11); a shut-down or
  unknown ID answers 404 ``NOT_FOUND`` ("... is not found for API version ...");
  Vertex serves embedding models in regions, not at ``global``;
- the fields of each API version: the published protos
  (``google/ai/generativelanguage/{v1,v1beta}/generative_service.proto``,
  ``google/cloud/aiplatform/v1/content.proto``); an unknown field answers 400
  (``Invalid JSON payload received. Unknown name ...``). ``thinkingLevel`` is in
  Google's Gemini 3 thinking guide, newer than the stored v1beta proto;
- an empty text part answers 400 ("empty text parameter");
- Gemini 3 models answer 400 when a function call of the current turn comes back
  without the ``thoughtSignature`` they gave it (ai.google.dev/gemini-api/docs/
  thought-signatures: the current turn is everything after the last user text);
- ``thinkingLevel`` with ``thinkingBudget`` answers 400.

Nothing here is the production code's own list: the double keeps its own, so a
model added to ``gemini_roles`` is not served until the double says so too.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

SERVED_MODELS: frozenset[str] = frozenset(
    {
        "gemini-3.8-flash",
        "gemini-3.6-flash",
        "gemini-3.5-flash",
        "gemini-3.5-flash-lite",
        "gemini-3.1-flash-lite",
        "gemini-3.1-pro-preview",
        "gemini-2.5-flash-lite",
        "gemini-flash-latest",
        "gemini-flash-lite-latest",
    }
)
EMBEDDING_MODELS: frozenset[str] = frozenset({"gemini-embedding-001", "gemini-embedding-2"})
SHUT_DOWN: frozenset[str] = frozenset(
    {
        "gemini-2.5-flash",
        "gemini-2.5-pro",
        "gemini-2.0-flash",
        "gemini-2.0-flash-lite",
        "gemini-3-pro-preview",
        "gemini-3.7-flash",
        "text-embedding-004",
    }
)

_DEVELOPER_V1_REQUEST = {"model", "contents", "safetySettings", "generationConfig"}
_DEVELOPER_V1_CONFIG = {
    "candidateCount",
    "stopSequences",
    "maxOutputTokens",
    "temperature",
    "topP",
    "topK",
    "seed",
    "responseJsonSchema",
    "presencePenalty",
    "frequencyPenalty",
    "responseLogprobs",
    "logprobs",
    "enableEnhancedCivicAnswers",
}
_DEVELOPER_V1_PART = {"text", "inlineData", "fileData", "videoMetadata"}
_BETA_REQUEST = _DEVELOPER_V1_REQUEST | {
    "systemInstruction",
    "tools",
    "toolConfig",
    "cachedContent",
}
_BETA_CONFIG = _DEVELOPER_V1_CONFIG | {
    "responseMimeType",
    "responseSchema",
    "responseModalities",
    "speechConfig",
    "thinkingConfig",
    "imageConfig",
    "mediaResolution",
}
_BETA_PART = _DEVELOPER_V1_PART | {
    "functionCall",
    "functionResponse",
    "executableCode",
    "codeExecutionResult",
    "thought",
    "thoughtSignature",
    "partMetadata",
}
_VERTEX_REQUEST = _BETA_REQUEST | {"labels", "modelArmorConfig"}
_VERTEX_CONFIG = (_BETA_CONFIG - {"enableEnhancedCivicAnswers"}) | {
    "routingConfig",
    "audioTimestamp",
    "enableAffectiveDialog",
}
_THINKING = {"includeThoughts", "thinkingBudget", "thinkingLevel"}

FIELDS: dict[tuple[str, bool], tuple[set[str], set[str], set[str]]] = {
    # (version, vertex): request fields, generationConfig fields, Part fields
    ("v1", False): (_DEVELOPER_V1_REQUEST, _DEVELOPER_V1_CONFIG, _DEVELOPER_V1_PART),
    ("v1beta", False): (_BETA_REQUEST, _BETA_CONFIG, _BETA_PART),
    ("v1alpha", False): (_BETA_REQUEST, _BETA_CONFIG, _BETA_PART),
    ("v1", True): (_VERTEX_REQUEST, _VERTEX_CONFIG, _BETA_PART),
    ("v1beta1", True): (_VERTEX_REQUEST, _VERTEX_CONFIG, _BETA_PART),
}


@dataclass(frozen=True)
class Refusal:
    """What the real API would answer instead: status and message."""

    status: int
    message: str


def model_refusal(
    model: str,
    action: str,
    version: str,
    location: str | None,
    served: Iterable[str] = SERVED_MODELS,
    embedding: Iterable[str] = EMBEDDING_MODELS,
) -> Refusal | None:
    """404 for a model that is unknown, shut down, or not served for ``action`` there."""
    is_embed = action in ("batchEmbedContents", "embedContent", "predict")
    known = set(embedding) if is_embed else set(served)
    if model in known and not (is_embed and location == "global"):
        return None
    if location is not None:
        return Refusal(
            404,
            f"Publisher Model `projects/*/locations/{location}/publishers/google/models/{model}` "
            "was not found or your project does not have access to it.",
        )
    return Refusal(
        404,
        f"models/{model} is not found for API version {version}, or is not supported for "
        f"{action}. Call ListModels to see the list of available models and their supported "
        "methods.",
    )


def field_refusal(version: str, vertex: bool, body: Mapping[str, Any]) -> Refusal | None:
    """400 for a field the API version does not have, or for both thinking settings."""
    allowed = FIELDS.get((version, vertex))
    if allowed is None:
        return Refusal(404, f"API version {version} is not served here.")
    request_fields, config_fields, part_fields = allowed
    for name in body:
        if _camel(name) not in request_fields:
            return _unknown(name, "")
    config = body.get("generationConfig") or {}
    for name in config:
        if _camel(name) not in config_fields:
            return _unknown(name, "generation_config")
    thinking = config.get("thinkingConfig") or {}
    for name in thinking:
        if _camel(name) not in _THINKING:
            return _unknown(name, "generation_config.thinking_config")
    if "thinkingLevel" in thinking and "thinkingBudget" in thinking:
        return Refusal(400, "thinking_budget and thinking_level are not supported together.")
    contents = list(body.get("contents") or [])
    system = body.get("systemInstruction")
    for where, content in [
        ("system_instruction", system),
        *((f"contents[{i}]", c) for i, c in enumerate(contents)),
    ]:
        for j, part in enumerate((content or {}).get("parts") or []):
            for name in part:
                if _camel(name) not in part_fields:
                    return _unknown(name, f"{where}.parts[{j}]")
            if "text" in part and not str(part["text"]) and not _has_data(part):
                return Refusal(
                    400,
                    "Unable to submit request because it has an empty text parameter. Add a "
                    "value to the parameter and try again.",
                )
    return None


def _camel(name: str) -> str:
    """Google's JSON parser takes a proto field's own name as well as its JSON name."""
    head, *rest = name.split("_")
    return head + "".join(word[:1].upper() + word[1:] for word in rest)


def _has_data(part: Mapping[str, Any]) -> bool:
    return any(
        key in part for key in ("inlineData", "fileData", "functionCall", "functionResponse")
    )


def _unknown(name: str, where: str) -> Refusal:
    at = f" at '{where}'" if where else ""
    return Refusal(
        400, f'Invalid JSON payload received. Unknown name "{name}"{at}: Cannot find field.'
    )


def _bytes(signature: str) -> bytes | None:
    """Proto JSON takes bytes in standard or URL-safe base64, padded or not."""
    text = str(signature).replace("-", "+").replace("_", "/")
    try:
        return base64.b64decode(text + "=" * (-len(text) % 4), validate=True)
    except (binascii.Error, ValueError):
        return None


def needs_signatures(model: str) -> bool:
    """Gemini 3 models validate thought signatures on function calls."""
    return model.startswith("gemini-3")


def signature_refusal(body: Mapping[str, Any], issued: set[str]) -> Refusal | None:
    """400 when a model turn of the current turn lacks the signature its first call was given.

    The current turn starts after the last ``user`` content with text; within it,
    the first ``functionCall`` part of each ``model`` content must carry a
    ``thoughtSignature`` the double issued.
    """
    contents = list(body.get("contents") or [])
    start = 0
    for index, content in enumerate(contents):
        parts = content.get("parts") or []
        if content.get("role", "user") == "user" and any("text" in p for p in parts):
            start = index + 1
    for index in range(start, len(contents)):
        content = contents[index]
        if content.get("role") != "model":
            continue
        calls = [p for p in content.get("parts") or [] if "functionCall" in p]
        if not calls:
            continue
        first = calls[0]
        signature = first.get("thoughtSignature")
        name = first["functionCall"].get("name", "")
        if not signature:
            return Refusal(
                400,
                f"Function call `{name}` in the `{index}.` content block is missing a "
                "`thought_signature`. See https://ai.google.dev/gemini-api/docs/thought-signatures",
            )
        if _bytes(signature) not in {_bytes(given) for given in issued}:
            return Refusal(400, f"Corrupted thought signature on function call `{name}`.")
    return None


__all__ = [
    "EMBEDDING_MODELS",
    "FIELDS",
    "SERVED_MODELS",
    "SHUT_DOWN",
    "Refusal",
    "field_refusal",
    "model_refusal",
    "needs_signatures",
    "signature_refusal",
]
