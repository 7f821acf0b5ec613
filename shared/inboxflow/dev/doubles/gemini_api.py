"""A local HTTP double of the Gemini REST API, for ``google-genai`` pointed at it.

Serves, on loopback in a thread, the calls our adapters make:

- ``POST /v1beta/models/{model}:generateContent`` (Gemini API) and
  ``/v1beta1/projects/{p}/locations/{l}/publishers/google/models/{model}:generateContent`` (Vertex);
- ``:batchEmbedContents`` and ``:embedContent`` on the same two prefixes.

- ``GET /{version}/models`` and ``/{version}/publishers/google/models``: the models served.

Bodies are shaped like Google's (``candidates``, ``usageMetadata`` with
``thoughtsTokenCount``, ``modelVersion``; errors as ``{"error": {code, message,
status, details}}``, a 429 with ``google.rpc.RetryInfo`` when scripted so). Every
request is recorded. ``script()`` queues what the next calls get (errors,
slow answers, invalid JSON, answers that violate the schema, ``MAX_TOKENS``,
``SAFETY``, blocked prompts); unscripted calls are answered by the responder.

**Strict** (the default) it refuses what the real API refuses (``gemini_rules``):
unknown or shut-down model IDs (404), fields the API version lacks (400), empty
text parts (400), and, for Gemini 3 models, a function call of the current turn
sent back without the ``thoughtSignature`` the double gave it (400).

The default responder, ``TaskOracle``, recognises the pipeline's LLM tasks by
their system instruction and prompt template, reads the inputs back out of the
rendered prompt, and answers with the task's offline heuristic: a demo through
the double reads like the offline demo, but every call went through google-genai.
``TaskOracle(mark=...)`` adds a marker to every free-text field of its answers, so
a test can tell an answer that came through the double from the offline model's.
Embeddings are deterministic hashed bag-of-words vectors of the requested size,
so texts that share words are close.
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
import os
import re
import secrets
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from email.utils import parseaddr
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler
from string import Template
from typing import Any, Literal

from pydantic import BaseModel

from inboxflow.dev.doubles import gemini_rules
from inboxflow.dev.doubles.serving import ThreadingServing, serve_until_interrupted
from inboxflow.ports.llm import LLMTask

DOUBLE_API_KEY = "double-key"

_ROUTE = re.compile(
    r"^/(?P<version>v1(?:alpha|beta1?)?)/"
    r"(?:projects/(?P<project>[^/]+)/locations/(?P<location>[^/]+)/publishers/google/)?"
    r"models/(?P<model>[^/:]+):(?P<action>generateContent|batchEmbedContents|embedContent|predict)$"
)
_LIST_ROUTE = re.compile(
    r"^/(?P<version>v1(?:alpha|beta1?)?)/(?P<publishers>publishers/google/)?models$"
)

_STATUS_NAMES = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    408: "DEADLINE_EXCEEDED",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    502: "UNAVAILABLE",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}
_STATUS_MESSAGES = {
    429: "Resource has been exhausted (e.g. check quota).",
    500: "An internal error has occurred. Please retry or report in "
    "https://developers.generativeai.google/guide/troubleshooting",
    503: "The model is overloaded. Please try again later.",
}

Action = Literal["generate", "embed"]


# --- what the double is told to do ---------------------------------------------------------------


@dataclass(frozen=True)
class Reply:
    """One scripted answer.

    Attributes:
        status: HTTP status; anything but 200 is sent as a Google error body.
        answer: a JSON-able answer, sent as the candidate's text (generate only).
        text: raw candidate text, sent as is (e.g. invalid JSON).
        message: error message (default: Google's usual one for the status).
        delay_s: wait this long before answering (to trip client timeouts).
        retry_after_s: a 429's ``google.rpc.RetryInfo.retryDelay``.
        finish_reason: the candidate's finish reason.
        no_content: send the candidate without content (``MAX_TOKENS``, ``SAFETY``).
        block_reason: send no candidate, only ``promptFeedback.blockReason``.
        thoughts_tokens: ``usageMetadata.thoughtsTokenCount`` (default: the model thinks
            twice as many tokens as it answers, Gemini 3 models only).
    """

    status: int = 200
    answer: Any = None
    text: str | None = None
    message: str | None = None
    delay_s: float = 0.0
    retry_after_s: float | None = None
    finish_reason: str = "STOP"
    no_content: bool = False
    block_reason: str | None = None
    thoughts_tokens: int | None = None

    @classmethod
    def error(cls, status: int, message: str | None = None) -> Reply:
        """An error response in Google's format (429, 500, 503, 400...)."""
        return cls(status=status, message=message)

    @classmethod
    def json(cls, answer: Any) -> Reply:
        """A 200 whose candidate text is ``answer`` as JSON (valid for the schema or not)."""
        return cls(answer=answer)

    @classmethod
    def raw(cls, text: str) -> Reply:
        """A 200 whose candidate text is ``text`` verbatim (e.g. ``'{"category": '``)."""
        return cls(text=text)

    @classmethod
    def slow(cls, seconds: float) -> Reply:
        """Answer normally, but only after ``seconds``."""
        return cls(delay_s=seconds)

    @classmethod
    def quota(cls, retry_after_s: float) -> Reply:
        """429 RESOURCE_EXHAUSTED carrying ``RetryInfo.retryDelay`` (as Gemini's quota errors do)."""
        return cls(status=429, retry_after_s=retry_after_s)

    @classmethod
    def max_tokens(cls, thoughts_tokens: int = 4000) -> Reply:
        """``MAX_TOKENS`` with no content: the budget went on thinking."""
        return cls(finish_reason="MAX_TOKENS", no_content=True, thoughts_tokens=thoughts_tokens)

    @classmethod
    def safety(cls) -> Reply:
        """``SAFETY`` with no content (the answer was withheld)."""
        return cls(finish_reason="SAFETY", no_content=True)

    @classmethod
    def blocked(cls, reason: str = "SAFETY") -> Reply:
        """No candidates: ``promptFeedback.blockReason`` says why the prompt was blocked."""
        return cls(block_reason=reason)


@dataclass(frozen=True)
class GenerateCall:
    """A ``generateContent`` request as a responder sees it.

    Attributes:
        model: model id from the URL.
        system: the system instruction's text.
        prompt: the first user turn's text (the rendered task prompt).
        turns: every turn as ``(role, text)``, in order (a schema retry adds two).
        schema: ``generationConfig.responseSchema`` or ``responseJsonSchema``.
        body: the whole request body.
    """

    model: str
    system: str
    prompt: str
    turns: list[tuple[str, str]]
    schema: dict[str, Any] | None
    body: dict[str, Any]


Responder = Callable[[GenerateCall], "Reply | Mapping[str, Any] | BaseModel"]


@dataclass(frozen=True)
class RecordedRequest:
    """One request the double received.

    Attributes:
        path: URL path (query string removed).
        action: ``generateContent``, ``batchEmbedContents`` or ``embedContent`` (or "" if unrouted).
        model: model id from the URL.
        vertex: True for the Vertex URL shape (``projects/.../publishers/google/models``).
        headers: request headers, names lowercased.
        body: parsed JSON body.
        status: HTTP status answered.
    """

    path: str
    action: str
    model: str
    vertex: bool
    headers: dict[str, str]
    body: dict[str, Any]
    status: int


# --- the default responder ------------------------------------------------------------------------


def known_tasks() -> list[LLMTask[Any]]:
    """Every ``LLMTask`` the deployed graphs define (found in their loaded modules)."""
    from inboxflow.graphs import graph_registry

    for graph in graph_registry(os.environ).values():
        graph.import_code()  # node modules load on first call; their tasks are needed now
    found: dict[str, LLMTask[Any]] = {}
    for name, module in list(sys.modules.items()):
        if not name.startswith("inboxflow.") or module is None:
            continue
        for value in vars(module).values():
            if isinstance(value, LLMTask):
                found.setdefault(value.name, value)
    return list(found.values())


def template_pattern(template: str) -> re.Pattern[str]:
    """A regex that matches ``template`` rendered, capturing each ``$field``."""
    parts: list[str] = []
    seen: set[str] = set()
    position = 0
    for match in Template.pattern.finditer(template):
        parts.append(re.escape(template[position : match.start()]))
        position = match.end()
        name = match.group("named") or match.group("braced")
        if match.group("escaped") is not None:
            parts.append(re.escape("$"))
        elif name is None:
            parts.append(re.escape(match.group(0)))
        elif name in seen:
            parts.append(f"(?P={name})")
        else:
            seen.add(name)
            parts.append(f"(?P<{name}>.*?)")
    parts.append(re.escape(template[position:]))
    return re.compile("".join(parts), re.DOTALL)


def _derived_inputs(fields: Mapping[str, str]) -> dict[str, str]:
    """Inputs the heuristics read that prompts show only in another form."""
    from inboxflow.mail import bare_subject

    derived: dict[str, str] = {}
    if "sender" in fields:
        derived["sender_address"] = parseaddr(fields["sender"])[1]
        derived["sender_name"] = parseaddr(fields["sender"])[0]
    if "subject" in fields:
        derived["topic"] = bare_subject(fields["subject"]) or "your message"
    return derived


class TaskOracle:
    """Answers a task's prompt with that task's offline heuristic.

    The task is the one whose system instruction and template match the
    request; the template's fields are read back out of the prompt. A prompt
    no task matches gets the smallest answer its response schema allows.
    """

    def __init__(
        self, tasks: Iterable[LLMTask[Any]] | None = None, mark: str | None = None
    ) -> None:
        """Args:
        tasks: the tasks to recognise (default: every task of the deployed graphs).
        mark: when set, appended to every free-text field of each answer (see
            ``mark_answer``), so answers from the double differ from the offline model's.
        """
        chosen = list(tasks) if tasks is not None else known_tasks()
        self.tasks = [(task, template_pattern(task.template)) for task in chosen]
        self.mark = mark

    def __call__(self, call: GenerateCall) -> Mapping[str, Any] | BaseModel:
        """The task's offline answer (marked when ``mark`` is set), or a minimal answer."""
        for task, pattern in self.tasks:
            if task.system and call.system.strip() != task.system.strip():
                continue
            match = pattern.fullmatch(call.prompt)
            if match is None:
                continue
            fields = match.groupdict()
            answer = task.offline({**_derived_inputs(fields), **fields})
            if self.mark is None:
                return answer
            return mark_answer(answer.model_dump(mode="json"), call.schema or {}, self.mark)
        return minimal_answer(call.schema or {})


def _is_free_text(schema: Mapping[str, Any]) -> bool:
    return str(schema.get("type", "")).lower() == "string" and not schema.get("enum")


def mark_answer(answer: dict[str, Any], schema: Mapping[str, Any], mark: str) -> dict[str, Any]:
    """``answer`` with ``mark`` appended to each top-level free-text field.

    A string property without an ``enum`` gets ``" " + mark``; a non-empty list
    of such strings gets ``mark`` as one more item (in place of the last one when
    the list is at its ``max_items``). Empty lists (e.g. flags), enums, numbers
    and nested objects are left alone, so the answer still matches ``schema``
    and takes the same route.
    """
    properties = schema.get("properties") or {}
    marked = dict(answer)
    for name, value in answer.items():
        spec = properties.get(name) or {}
        if isinstance(value, str) and _is_free_text(spec):
            marked[name] = f"{value} {mark}"
        elif isinstance(value, list) and value and _is_free_text(spec.get("items") or {}):
            limit = spec.get("max_items") or spec.get("maxItems")
            kept = value[: int(limit) - 1] if limit and len(value) >= int(limit) else value
            marked[name] = [*kept, mark]
    return marked


def minimal_answer(schema: Mapping[str, Any]) -> Any:
    """The smallest value ``schema`` (OpenAPI or JSON Schema, as Gemini takes it) allows."""
    choices = schema.get("anyOf") or schema.get("any_of")
    if choices:
        return minimal_answer(choices[0])
    if schema.get("enum"):
        return schema["enum"][0]
    kind = str(schema.get("type", "object")).lower()
    if kind == "object":
        props = schema.get("properties", {})
        return {name: minimal_answer(props[name]) for name in schema.get("required", [])}
    if kind == "array":
        return []
    if kind in ("number", "integer"):
        value = schema.get("minimum", 0)
        return int(value) if kind == "integer" else float(value)
    if kind == "boolean":
        return False
    return ""


def hashed_embedding(text: str, dimensions: int) -> list[float]:
    """A deterministic unit vector: signed feature hashing of the text's lowercased words."""
    vector = [0.0] * dimensions
    words = re.findall(r"\w+", text.lower()) or [text]
    for word in words:
        digest = hashlib.sha256(word.encode()).digest()
        index = int.from_bytes(digest[:4], "big") % dimensions
        vector[index] += 1.0 if digest[4] & 1 else -1.0
    norm = math.sqrt(sum(v * v for v in vector)) or 1.0
    return [round(v / norm, 6) for v in vector]


# --- the server -----------------------------------------------------------------------------------


def _estimate_tokens(text: str) -> int:
    return max(1, math.ceil(len(text) / 4)) if text else 0


def _text_of(content: Mapping[str, Any] | None) -> str:
    parts = (content or {}).get("parts") or []
    return "".join(str(p.get("text", "")) for p in parts if isinstance(p, Mapping))


def error_body(
    status: int, message: str | None = None, retry_after_s: float | None = None
) -> dict[str, Any]:
    """Google's JSON error body for ``status`` (with ``RetryInfo`` when ``retry_after_s``)."""
    error: dict[str, Any] = {
        "code": status,
        "message": message or _STATUS_MESSAGES.get(status) or HTTPStatus(status).phrase or "error",
        "status": _STATUS_NAMES.get(status, "UNKNOWN"),
    }
    if retry_after_s is not None:
        error["details"] = [
            {
                "@type": "type.googleapis.com/google.rpc.QuotaFailure",
                "violations": [
                    {
                        "quotaMetric": "generativelanguage.googleapis.com/generate_content_requests",
                        "quotaId": "GenerateRequestsPerMinutePerProjectPerModel",
                    }
                ],
            },
            {
                "@type": "type.googleapis.com/google.rpc.RetryInfo",
                "retryDelay": f"{retry_after_s:g}s",
            },
        ]
    return {"error": error}


def usage_metadata(
    model: str, prompt_tokens: int, answer_tokens: int, reply: Reply
) -> dict[str, Any]:
    """``usageMetadata``: Gemini 3 models think (``thoughtsTokenCount``) unless scripted otherwise."""
    thoughts = reply.thoughts_tokens
    if thoughts is None:
        thoughts = 2 * answer_tokens if gemini_rules.needs_signatures(model) else 0
    metadata: dict[str, Any] = {
        "promptTokenCount": prompt_tokens,
        "totalTokenCount": prompt_tokens + answer_tokens + thoughts,
        "promptTokensDetails": [{"modality": "TEXT", "tokenCount": prompt_tokens}],
    }
    if answer_tokens:
        metadata["candidatesTokenCount"] = answer_tokens
    if thoughts:
        metadata["thoughtsTokenCount"] = thoughts
    return metadata


def stopped_response(
    model: str, body: Mapping[str, Any], reply: Reply
) -> tuple[int, dict[str, Any]]:
    """A 200 without an answer: a blocked prompt (no candidates) or a stop with no content."""
    prompt_tokens = sum(_estimate_tokens(_text_of(c)) for c in body.get("contents") or [])
    usage = usage_metadata(model, prompt_tokens, 0, reply)
    if reply.block_reason is not None:
        return 200, {
            "promptFeedback": {"blockReason": reply.block_reason},
            "usageMetadata": usage,
            "modelVersion": model,
            "responseId": secrets.token_urlsafe(12),
        }
    candidate: dict[str, Any] = {"finishReason": reply.finish_reason, "index": 0}
    if reply.finish_reason == "SAFETY":
        candidate["safetyRatings"] = [
            {"category": "HARM_CATEGORY_DANGEROUS_CONTENT", "probability": "HIGH", "blocked": True}
        ]
    return 200, {
        "candidates": [candidate],
        "usageMetadata": usage,
        "modelVersion": model,
        "responseId": secrets.token_urlsafe(12),
    }


@dataclass
class GeminiDouble(ThreadingServing):
    """A running double. ``base_url`` goes to ``HttpOptions(base_url=...)``.

    Attributes:
        responder: answers unscripted ``generateContent`` calls.
        api_key: the key it accepts (None: any key or bearer token).
        requests: every request received, in order.
        functions: answers unscripted calls that offer tools (None: a plain text turn).
        strict: refuse what the real API refuses (see ``gemini_rules``).
        served: the text models served (default ``gemini_rules.SERVED_MODELS``).
        signatures: the thought signatures given out, base64.
    """

    responder: Responder
    api_key: str | None = None
    functions: FunctionResponder | None = None
    strict: bool = True
    served: frozenset[str] = gemini_rules.SERVED_MODELS
    requests: list[RecordedRequest] = field(default_factory=list)
    signatures: set[str] = field(default_factory=set)
    _scripts: dict[str, deque[Reply]] = field(
        default_factory=lambda: {"generate": deque(), "embed": deque()}
    )
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def script(self, *replies: Reply, action: Action = "generate") -> None:
        """Queue what the next ``generate`` (or ``embed``) calls get, one reply per call."""
        with self._lock:
            self._scripts[action].extend(replies)

    def calls(self, action: str = "generateContent") -> list[RecordedRequest]:
        """Recorded requests of one action."""
        return [r for r in self.requests if r.action == action]

    # --- request handling (called on the server's threads) --------------------------------------

    def sign(self) -> str:
        """A new thought signature (opaque bytes, base64), remembered as given."""
        signature = base64.b64encode(secrets.token_bytes(24)).decode("ascii")
        with self._lock:
            self.signatures.add(signature)
        return signature

    def models_page(self, publishers: bool) -> dict[str, Any]:
        """``models.list``: every served model (Gemini API or Vertex publisher shape)."""
        names = sorted(self.served | gemini_rules.EMBEDDING_MODELS)
        if publishers:
            return {
                "publisherModels": [
                    {"name": f"publishers/google/models/{name}", "versionId": "001"}
                    for name in names
                ]
            }
        return {
            "models": [
                {
                    "name": f"models/{name}",
                    "displayName": name,
                    "supportedGenerationMethods": (
                        ["embedContent", "batchEmbedContents"]
                        if name in gemini_rules.EMBEDDING_MODELS
                        else ["generateContent", "countTokens"]
                    ),
                }
                for name in names
            ]
        }

    def _next(self, action: Action) -> Reply | None:
        with self._lock:
            queue = self._scripts[action]
            return queue.popleft() if queue else None

    def _handle(self, path: str, headers: dict[str, str], raw: bytes) -> tuple[int, dict[str, Any]]:
        route = _ROUTE.match(path)
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = None
        action = route.group("action") if route else ""
        model = route.group("model") if route else ""
        status, response = self._answer(route, headers, body)
        with self._lock:
            self.requests.append(
                RecordedRequest(
                    path=path,
                    action=action,
                    model=model,
                    vertex=bool(route and route.group("project")),
                    headers=headers,
                    body=body if isinstance(body, dict) else {},
                    status=status,
                )
            )
        return status, response

    def _answer(
        self, route: re.Match[str] | None, headers: Mapping[str, str], body: Any
    ) -> tuple[int, dict[str, Any]]:
        if route is None:
            return 404, error_body(404, "Requested entity was not found.")
        if not isinstance(body, dict):
            return 400, error_body(400, "Invalid JSON payload received.")
        key = headers.get("x-goog-api-key")
        bearer = headers.get("authorization", "").startswith("Bearer ")
        if not key and not bearer:
            return 403, error_body(
                403,
                "Method doesn't allow unregistered callers (callers without established "
                "identity). Please use API Key or other form of API consumer identity to call "
                "this API.",
            )
        if key and self.api_key is not None and key != self.api_key:
            return 400, error_body(400, "API key not valid. Please pass a valid API key.")
        action: Action = "generate" if route.group("action") == "generateContent" else "embed"
        model = route.group("model")
        if self.strict:
            refusal = self._refusal(route, body)
            if refusal is not None:
                return refusal.status, error_body(refusal.status, refusal.message)
        reply = self._next(action) or Reply()
        if reply.delay_s:
            time.sleep(reply.delay_s)
        if reply.status != 200:
            return reply.status, error_body(reply.status, reply.message, reply.retry_after_s)
        if action == "embed":
            return self._embed(route.group("action"), body)
        return self._generate(model, body, reply)

    def _refusal(
        self, route: re.Match[str], body: Mapping[str, Any]
    ) -> gemini_rules.Refusal | None:
        vertex = bool(route.group("project"))
        model, action = route.group("model"), route.group("action")
        refusal = gemini_rules.model_refusal(
            model,
            action,
            route.group("version"),
            route.group("location") if vertex else None,
            served=self.served,
        )
        if refusal is None and action == "generateContent":
            refusal = gemini_rules.field_refusal(route.group("version"), vertex, body)
        if refusal is None and action == "generateContent" and gemini_rules.needs_signatures(model):
            with self._lock:
                issued = set(self.signatures)
            refusal = gemini_rules.signature_refusal(body, issued)
        return refusal

    def _generate(
        self, model: str, body: Mapping[str, Any], reply: Reply
    ) -> tuple[int, dict[str, Any]]:
        contents = body.get("contents") or []
        if not contents:
            return 400, error_body(
                400, "* GenerateContentRequest.contents: contents is not specified"
            )
        unscripted = reply.text is None and reply.answer is None
        unscripted = unscripted and not isinstance(reply, FunctionCallReply)
        if body.get("tools") and self.functions is not None and unscripted:
            reply = self.functions(conversation_of(body), tool_specs_of(body))
        elif body.get("tools") and unscripted and _calling_mode(body) == "ANY":
            reply = forced_call(body)
        sign = self.sign if gemini_rules.needs_signatures(model) else None
        if reply.block_reason is not None or reply.no_content:
            return stopped_response(model, body, reply)
        if isinstance(reply, FunctionCallReply) or body.get("tools"):
            return function_calling_response(model, body, reply, sign)
        turns = [(str(c.get("role", "user")), _text_of(c)) for c in contents]
        config = body.get("generationConfig") or {}
        call = GenerateCall(
            model=model,
            system=_text_of(body.get("systemInstruction")),
            prompt=next((text for role, text in turns if role == "user"), ""),
            turns=turns,
            schema=config.get("responseSchema") or config.get("responseJsonSchema"),
            body=dict(body),
        )
        if reply.text is not None:
            text = reply.text
        elif reply.answer is not None:
            text = json.dumps(reply.answer, ensure_ascii=False)
        else:
            answer = self.responder(call)
            if isinstance(answer, Reply):
                return self._generate(model, body, answer)
            if isinstance(answer, BaseModel):
                answer = answer.model_dump(mode="json")
            text = json.dumps(answer, ensure_ascii=False)
        prompt_tokens = _estimate_tokens(call.system) + sum(_estimate_tokens(t) for _, t in turns)
        answer_tokens = _estimate_tokens(text)
        return 200, {
            "candidates": [
                {
                    "content": {"parts": [{"text": text}], "role": "model"},
                    "finishReason": reply.finish_reason,
                    "index": 0,
                }
            ],
            "usageMetadata": usage_metadata(model, prompt_tokens, answer_tokens, reply),
            "modelVersion": model,
            "responseId": secrets.token_urlsafe(12),
        }

    def _embed(self, action: str, body: Mapping[str, Any]) -> tuple[int, dict[str, Any]]:
        requests = body.get("requests") if action == "batchEmbedContents" else [body]
        if not requests:
            return 400, error_body(400, "* BatchEmbedContentsRequest.requests: must not be empty")
        embeddings = []
        for request in requests:
            config = request.get("embedContentConfig") or request
            dimensions = int(config.get("outputDimensionality") or 3072)
            embeddings.append(
                {"values": hashed_embedding(_text_of(request.get("content")), dimensions)}
            )
        if action == "embedContent":
            return 200, {"embedding": embeddings[0]}
        return 200, {"embeddings": embeddings}


def _handler_for(double: GeminiDouble) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            headers = {k.lower(): v for k, v in self.headers.items()}
            path = self.path.split("?", 1)[0]
            status, response = double._handle(path, headers, raw)
            self._reply(status, response)

        def do_GET(self) -> None:
            path = self.path.split("?", 1)[0]
            listing = _LIST_ROUTE.match(path)
            headers = {k.lower(): v for k, v in self.headers.items()}
            authorised = headers.get("x-goog-api-key") or headers.get("authorization")
            if listing is None:
                status, response = 404, error_body(404, "Requested entity was not found.")
            elif not authorised:
                status, response = (
                    403,
                    error_body(403, "Method doesn't allow unregistered callers."),
                )
            else:
                status, response = 200, double.models_page(bool(listing.group("publishers")))
            self._reply(status, response)

        def _reply(self, status: int, response: Any) -> None:
            payload = json.dumps(response).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json; charset=UTF-8")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, format: str, *args: Any) -> None:
            return None

    return Handler


def start_gemini_double(
    responder: Responder | None = None,
    api_key: str | None = None,
    port: int = 0,
    functions: FunctionResponder | None = None,
    strict: bool = True,
) -> GeminiDouble:
    """Start a Gemini double on 127.0.0.1 (a free port unless ``port``), in a daemon thread.

    Args:
        responder: answers unscripted generate calls (default: ``TaskOracle()``).
        api_key: the only key accepted (default: any key, or a bearer token).
        port: port to bind (0 picks a free one).
        functions: answers unscripted calls with tools (e.g. ``playing(policy)``).
        strict: refuse what the real API refuses (``gemini_rules``); only the double's
            own tests turn it off.
    """
    double = GeminiDouble(
        responder=responder or TaskOracle(), api_key=api_key, functions=functions, strict=strict
    )
    return double.serve(_handler_for(double), port, "gemini-double")


def double_environment(double: GeminiDouble) -> dict[str, str]:
    """The variables that point ``choose_llm``/``choose_embedder`` at ``double`` (API-key mode)."""
    return {"GEMINI_API_KEY": DOUBLE_API_KEY, "INBOXFLOW_GEMINI_BASE_URL": double.base_url}


@contextmanager
def gemini_double_environment(responder: Responder | None = None) -> Iterator[GeminiDouble]:
    """Start a double and point this process's environment at it; undo both on exit.

    Variables that would win over the double (``GOOGLE_API_KEY``, Vertex mode,
    ``INBOXFLOW_LLM``) are removed for the duration.
    """
    double = start_gemini_double(responder)
    overridden = ("GOOGLE_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI", "INBOXFLOW_LLM")
    settings = double_environment(double)
    saved = {name: os.environ.get(name) for name in (*settings, *overridden)}
    try:
        for name in overridden:
            os.environ.pop(name, None)
        os.environ.update(settings)
        yield double
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        double.stop()


__all__ = [
    "DOUBLE_API_KEY",
    "GeminiDouble",
    "GenerateCall",
    "RecordedRequest",
    "Reply",
    "TaskOracle",
    "conversation_of",
    "double_environment",
    "gemini_double_environment",
    "hashed_embedding",
    "known_tasks",
    "main",
    "mark_answer",
    "minimal_answer",
    "playing",
    "start_gemini_double",
    "stopped_response",
    "template_pattern",
    "tool_specs_of",
    "usage_metadata",
]


# --- function calling (the agent graph) -----------------------------------------------------------


@dataclass(frozen=True)
class FunctionCallReply(Reply):
    """A scripted answer with function calls (Gemini's ``functionCall`` parts).

    Attributes:
        calls: ``(name, args)`` in order; ``args`` is sent as is (a dict, or
            anything else to play a malformed call), with ids ``call-{n}`` unless
            ``ids`` is False.
        finish_reason: e.g. ``MALFORMED_FUNCTION_CALL`` (then send no calls).
        ids: give each call an id.
    """

    calls: tuple[tuple[str, Any], ...] = ()
    finish_reason: str = "STOP"
    ids: bool = True

    @classmethod
    def of(cls, *calls: tuple[str, Any], text: str | None = None) -> FunctionCallReply:
        """Function calls (parallel when several), with optional text before them."""
        return cls(calls=tuple(calls), text=text)

    @classmethod
    def malformed(cls) -> FunctionCallReply:
        """Gemini's ``MALFORMED_FUNCTION_CALL``: no parts, a finish message."""
        return cls(finish_reason="MALFORMED_FUNCTION_CALL")


FunctionResponder = Callable[[list[dict[str, Any]], list[dict[str, Any]]], "FunctionCallReply"]
"""Answers a request with tools: the conversation (OpenAI style, as ``conversation_of`` reads
it back) and the declared tools (OpenAI specs) in, the model's function calls out."""


def conversation_of(body: Mapping[str, Any]) -> list[dict[str, Any]]:
    """A ``generateContent`` body read back as an OpenAI-style conversation.

    The system instruction is the ``system`` message; a model turn's ``functionCall``
    parts are the assistant's ``tool_calls`` (``{id, name, arguments_json}``); each
    ``functionResponse`` part is a ``tool`` message (``tool_call_id``, ``name``, the
    response as JSON ``content``); other user text is a ``user`` message.
    """
    messages: list[dict[str, Any]] = []
    system = _text_of(body.get("systemInstruction"))
    if system:
        messages.append({"role": "system", "content": system})
    for content in body.get("contents") or []:
        parts = content.get("parts") or []
        if content.get("role") == "model":
            calls = [p["functionCall"] for p in parts if "functionCall" in p]
            messages.append(
                {
                    "role": "assistant",
                    "content": "".join(str(p.get("text") or "") for p in parts),
                    "tool_calls": [
                        {
                            "id": str(c.get("id") or ""),
                            "name": str(c.get("name") or ""),
                            "arguments_json": json.dumps(c.get("args") or {}),
                        }
                        for c in calls
                    ],
                }
            )
            continue
        for part in parts:
            if "functionResponse" in part:
                response = part["functionResponse"]
                messages.append(
                    {
                        "role": "tool",
                        "tool_call_id": str(response.get("id") or ""),
                        "name": str(response.get("name") or ""),
                        "content": json.dumps(response.get("response") or {}),
                    }
                )
        text = "".join(str(p.get("text") or "") for p in parts if "text" in p)
        if text:
            messages.append({"role": "user", "content": text})
    return messages


def tool_specs_of(body: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The request's function declarations as OpenAI-style tool specs."""
    specs = []
    for tool in body.get("tools") or []:
        for declared in tool.get("functionDeclarations") or []:
            parameters = declared.get("parameters_json_schema") or declared.get("parameters")
            specs.append(
                {
                    "type": "function",
                    "function": {
                        "name": declared.get("name"),
                        "description": declared.get("description", ""),
                        "parameters": parameters or {"type": "object"},
                    },
                }
            )
    return specs


def playing(policy: Callable[[list[Any], list[dict[str, Any]]], Any]) -> FunctionResponder:
    """A function responder that plays a deterministic chat policy (``ports.llm.ChatPolicy``)
    on the conversation the request carries: the policy's tool calls become ``functionCall``
    parts (the double gives them ids), its text a text part."""

    def answer(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> FunctionCallReply:
        turn = policy(messages, tools)
        calls = tuple((c.name, json.loads(c.arguments_json)) for c in turn.tool_calls)
        return FunctionCallReply(calls=calls, text=turn.text or (None if calls else "Done."))

    return answer


def _calling_mode(body: Mapping[str, Any]) -> str:
    config = body.get("toolConfig") or body.get("tool_config") or {}
    calling = config.get("functionCallingConfig") or config.get("function_calling_config") or {}
    return str(calling.get("mode") or "AUTO").upper()


def forced_call(body: Mapping[str, Any]) -> FunctionCallReply:
    """``mode: ANY`` obliges the model to call: the first declared function, minimal arguments."""
    (spec, *_) = tool_specs_of(body)
    function = spec["function"]
    return FunctionCallReply(calls=((function["name"], minimal_answer(function["parameters"])),))


def function_calling_response(
    model: str,
    body: Mapping[str, Any],
    reply: Reply,
    sign: Callable[[], str] | None = None,
) -> tuple[int, dict[str, Any]]:
    """The answer to a request with ``tools``: the scripted calls, else a plain text turn.

    With ``sign`` (Gemini 3 models) the first ``functionCall`` part carries a new
    ``thoughtSignature``, as Gemini 3 gives one to the first call of each step.
    """
    parts: list[dict[str, Any]] = []
    text = reply.text if reply.text is not None else None
    if isinstance(reply, FunctionCallReply):
        if text:
            parts.append({"text": text})
        for n, (name, args) in enumerate(reply.calls):
            call: dict[str, Any] = {"name": name, "args": args}
            if reply.ids:
                call["id"] = f"call-{secrets.token_hex(3)}-{n}"
            part: dict[str, Any] = {"functionCall": call}
            if n == 0 and sign is not None:
                part["thoughtSignature"] = sign()
            parts.append(part)
        reason = reply.finish_reason
    else:
        answer = text if text is not None else json.dumps(reply.answer) if reply.answer else ""
        parts.append({"text": answer or "No tool is needed; here is my answer."})
        reason = "STOP"
    candidate: dict[str, Any] = {"finishReason": reason, "index": 0}
    if parts:
        candidate["content"] = {"parts": parts, "role": "model"}
    else:
        candidate["finishMessage"] = (
            "Malformed function call: print(default_api.search_drugs(query=))"
        )
    prompt_tokens = sum(_estimate_tokens(_text_of(c)) for c in body.get("contents") or [])
    answer_tokens = _estimate_tokens(json.dumps(parts))
    return 200, {
        "candidates": [candidate],
        "usageMetadata": usage_metadata(model, prompt_tokens, answer_tokens, reply),
        "modelVersion": model,
        "responseId": secrets.token_urlsafe(12),
    }


def main(argv: list[str] | None = None) -> None:
    """``python -m inboxflow.dev.doubles.gemini_api --port N``: a strict double in the foreground.

    Prints the environment that points any inboxflow process at it (``choose_llm`` and
    ``choose_embedder`` read it as a deployed function does).
    """
    import argparse

    parser = argparse.ArgumentParser(description="Gemini REST API double on loopback")
    parser.add_argument("--port", type=int, default=0, help="port (0: a free one)")
    options = parser.parse_args(argv)
    double = start_gemini_double(port=options.port)
    exports = [f"export {name}={value}" for name, value in double_environment(double).items()]
    serve_until_interrupted(double, f"gemini double listening on {double.base_url}", *exports)


if __name__ == "__main__":
    main()
