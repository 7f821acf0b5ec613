"""The knowledge base and the memory of past emails, on the embedder and vector index ports.

Two collections in the vector index:

- ``kb_chunks/{source}#{nnn}``: knowledge-base documents (Markdown or text)
  cut into chunks of about 800 characters along headings and paragraphs;
  fields ``source, title, section, text, position, category, embedder, added_at``.
  A document's ``category`` (``billing``, ``technical``...; ``""`` when it has
  none) comes from its front matter (``---`` / ``category: billing`` / ``---``
  at the top), or is given when it is added, or set later (``set_category``);
  ``search`` can keep to some categories, filtering in the index.
- ``email_vectors/{message_id}``: every email the pipeline retrieved context
  for; fields ``message_id, thread_id, subject, sender, received_at,
  category, excerpt, embedder``.

Every stored vector records the ``embedder`` that made it and searches only
consider vectors of the current embedder (offline and Gemini vectors have
the same length but are not comparable). An email is embedded once, as a
query: that vector searches the knowledge base and past emails and is then
stored as the email's own vector (emails are compared with emails, so both
sides are embedded alike).
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .mail import Email, bare_subject, strip_quoted
from .ports.documents import Filter
from .ports.embeddings import Embedder
from .ports.vectors import Neighbor, VectorDocument, VectorIndex
from .schema import EMAIL_VECTORS, KB_CHUNKS

if TYPE_CHECKING:
    from .ports.wired import Ports

log = logging.getLogger(__name__)

CHUNK_CHARS = 800
"""Target chunk length; a chunk exceeds it only when one sentence does."""
EMAIL_EMBED_CHARS = 2000
"""Subject and unquoted body beyond this are not embedded."""
EXCERPT_CHARS = 240
KB_SUFFIXES = (".md", ".markdown", ".txt")
KB_HIT_FIELDS = ("source", "title", "section", "text", "category")
"""The fields of a knowledge-base chunk that ``search`` and ``retrieve`` return."""
EMAIL_HIT_FIELDS = ("subject", "sender", "category", "received_at", "excerpt")
"""The fields of a past email that ``retrieve`` returns."""
MAX_DISTANCE_BY_EMBEDDER: dict[str, float] = {"offline-hash": 0.85}
"""Farther than this, a result is noise (by embedder name prefix; measured on the samples:
related texts of the offline embedder lie within 0.78, unrelated ones beyond 0.85)."""

CATEGORY = re.compile(r"^[a-z][a-z0-9_-]{0,39}$")
"""A category name: lower case, a letter first, at most 40 characters."""
UNCATEGORISED = ""
_FRONT_MATTER = re.compile(r"\A---[ \t]*\n(.*?)\n---[ \t]*(?:\n|\Z)", re.S)
_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


# --- chunking ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Chunk:
    """A piece of a knowledge-base document, embedded and searched on its own."""

    source: str
    position: int
    title: str
    section: str
    text: str

    @property
    def chunk_id(self) -> str:
        """``{source}#{position:03d}``."""
        return f"{self.source}#{self.position:03d}"

    @property
    def embedding_text(self) -> str:
        """What is embedded: the titles give a short chunk its topic."""
        heading = self.title if self.section == self.title else f"{self.title}: {self.section}"
        return f"{heading}\n{self.text}"


def excerpt(text: str, limit: int = EXCERPT_CHARS) -> str:
    """``text`` on one line, cut at a word boundary to at most ``limit`` characters."""
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    cut = flat[: limit - 1].rsplit(" ", 1)[0]
    return cut.rstrip(",;:") + "\u2026"


def _pieces(paragraph: str, max_chars: int) -> list[str]:
    """A paragraph as pieces of at most ``max_chars``, split between sentences (or words)."""
    if len(paragraph) <= max_chars:
        return [paragraph]
    pieces: list[str] = []
    current = ""
    for sentence in _SENTENCE_END.split(paragraph):
        while len(sentence) > max_chars:  # one huge sentence: cut between words
            cut = sentence[:max_chars].rsplit(" ", 1)[0] or sentence[:max_chars]
            if current:
                pieces.append(current)
                current = ""
            pieces.append(cut)
            sentence = sentence[len(cut) :].lstrip()
        if current and len(current) + 1 + len(sentence) > max_chars:
            pieces.append(current)
            current = ""
        current = f"{current} {sentence}" if current else sentence
    if current:
        pieces.append(current)
    return pieces


def chunk_document(text: str, source: str, max_chars: int = CHUNK_CHARS) -> list[Chunk]:
    """Cut a Markdown or plain-text document into chunks.

    Headings start a new chunk; within a section, paragraphs are packed into
    chunks of at most ``max_chars`` characters, and a paragraph longer than
    that is split between sentences. The title is the first level-1 heading,
    else the file name.

    Args:
        text: the document.
        source: its name (the file name), which prefixes the chunk ids.
        max_chars: target chunk length.

    Returns:
        The chunks in document order, numbered from 0.
    """
    title = ""
    sections: list[tuple[str, list[str]]] = []
    section = ""
    paragraph_lines: list[str] = []
    paragraphs: list[str] = []

    def end_paragraph() -> None:
        if paragraph_lines:
            paragraphs.append(" ".join(line.strip() for line in paragraph_lines))
            paragraph_lines.clear()

    for line in text.replace("\r\n", "\n").split("\n"):
        heading = _HEADING.match(line)
        if heading:
            end_paragraph()
            if paragraphs:
                sections.append((section, list(paragraphs)))
                paragraphs.clear()
            name = heading.group(2).strip()
            if len(heading.group(1)) == 1 and not title:
                title = name
            section = name
        elif not line.strip():
            end_paragraph()
        elif line.lstrip().startswith(("- ", "* ", "+ ")) and paragraph_lines:
            end_paragraph()  # each list item is its own paragraph
            paragraph_lines.append(line)
        else:
            paragraph_lines.append(line)
    end_paragraph()
    if paragraphs:
        sections.append((section, list(paragraphs)))

    title = title or _title_from_name(source)
    chunks: list[Chunk] = []
    for name, section_paragraphs in sections:
        current = ""
        for paragraph in section_paragraphs:
            for piece in _pieces(paragraph, max_chars):
                if current and len(current) + 2 + len(piece) > max_chars:
                    chunks.append(Chunk(source, len(chunks), title, name or title, current))
                    current = ""
                current = f"{current}\n\n{piece}" if current else piece
        if current:
            chunks.append(Chunk(source, len(chunks), title, name or title, current))
    return chunks


def _title_from_name(source: str) -> str:
    stem = Path(source).stem.replace("-", " ").replace("_", " ").strip()
    return stem[:1].upper() + stem[1:] if stem else source


def check_category(category: str) -> str:
    """``category`` if it is a valid name (or ``""``, none).

    Raises:
        ValueError: naming the rule.
    """
    if category != UNCATEGORISED and not CATEGORY.match(category):
        raise ValueError(
            f"category {category!r}: lower-case letters, digits, '-' or '_', a letter first, "
            "at most 40 characters"
        )
    return category


def front_matter(text: str) -> tuple[dict[str, str], str]:
    """A document's front matter (``key: value`` lines between ``---`` lines at the top)
    and the text after it; no front matter: ``({}, text)``."""
    match = _FRONT_MATTER.match(text.replace("\r\n", "\n"))
    if match is None:
        return {}, text
    values = {}
    for line in match.group(1).splitlines():
        key, colon, value = line.partition(":")
        if colon and key.strip():
            values[key.strip().lower()] = value.strip().strip("\"'")
    return values, text.replace("\r\n", "\n")[match.end() :]


# --- the knowledge base ------------------------------------------------------------------


@dataclass(frozen=True)
class KbDocument:
    """A document in the knowledge base, as listed."""

    source: str
    title: str
    chunks: int
    chars: int
    added_at: float | None = None
    category: str = UNCATEGORISED


@dataclass(frozen=True)
class Retrieval:
    """What the knowledge base knows about one email."""

    knowledge: list[Neighbor] = field(default_factory=list)
    similar_emails: list[Neighbor] = field(default_factory=list)


class KnowledgeBase:
    """Knowledge-base documents and past emails, embedded and searchable.

    Args:
        embedder: turns texts into vectors.
        vectors: where the vectors live.
        clock: anything with ``now()`` for ``added_at`` (wall clock by default).
        max_distance: ``retrieve`` drops results farther than this; default from
            ``MAX_DISTANCE_BY_EMBEDDER`` (no cut-off for embedders not listed).
    """

    def __init__(
        self,
        embedder: Embedder,
        vectors: VectorIndex,
        clock: Any = None,
        max_distance: float | None = None,
    ) -> None:
        self.embedder = embedder
        self.vectors = vectors
        self.clock = clock
        if max_distance is None:
            max_distance = next(
                (d for p, d in MAX_DISTANCE_BY_EMBEDDER.items() if embedder.name.startswith(p)),
                None,
            )
        self.max_distance = max_distance

    def _now(self) -> float:
        return float(self.clock.now()) if self.clock is not None else time.time()

    @property
    def _mine(self) -> list[Filter]:
        return [("embedder", "==", self.embedder.name)]

    # --- documents -----------------------------------------------------------------------

    def add_text(self, source: str, text: str, category: str | None = None) -> KbDocument:
        """Add (or replace) one document given as text.

        Chunks are embedded as documents and upserted; chunks left over from
        an earlier, longer version of the same source are deleted.

        Args:
            source: the document's name.
            text: the document; front matter (``category: ...``) is read, not indexed.
            category: the document's category; None: its front matter's (else none).

        Raises:
            ValueError: the document has no text, or the category is not a valid name.
            RetryableError: the embedder failed transiently.
        """
        meta, body = front_matter(text)
        try:
            category = check_category(meta.get("category", "") if category is None else category)
        except ValueError as exc:
            raise ValueError(f"{source}: {exc}") from None
        chunks = chunk_document(body, source)
        if not chunks:
            raise ValueError(f"{source}: no text to add")
        return self._write(source, chunks, category)

    def _write(self, source: str, chunks: list[Chunk], category: str) -> KbDocument:
        vectors = self.embedder.embed([c.embedding_text for c in chunks], purpose="document")
        added_at = self._now()
        self.vectors.upsert_many(
            KB_CHUNKS.name,
            [
                VectorDocument(
                    chunk.chunk_id,
                    vector,
                    {
                        "source": chunk.source,
                        "title": chunk.title,
                        "section": chunk.section,
                        "text": chunk.text,
                        "position": chunk.position,
                        "category": category,
                        "embedder": self.embedder.name,
                        "added_at": added_at,
                    },
                )
                for chunk, vector in zip(chunks, vectors, strict=True)
            ],
        )
        keep = {chunk.chunk_id for chunk in chunks}
        for doc_id, _ in self.vectors.documents(KB_CHUNKS.name, where=[("source", "==", source)]):
            if doc_id not in keep:
                self.vectors.delete(KB_CHUNKS.name, doc_id)
        return KbDocument(
            source=source,
            title=chunks[0].title,
            chunks=len(chunks),
            chars=sum(len(c.text) for c in chunks),
            added_at=added_at,
            category=category,
        )

    def set_category(self, source: str, category: str) -> KbDocument:
        """Give a document a category (``""``: none), keeping its text.

        The chunks are written again from their stored text (the vector index
        updates whole documents), so they are embedded again.

        Raises:
            KeyError: no document has that name.
            ValueError: the category is not a valid name.
        """
        check_category(category)
        stored = sorted(
            (
                fields
                for _, fields in self.vectors.documents(KB_CHUNKS.name, [("source", "==", source)])
            ),
            key=lambda fields: int(fields.get("position", 0)),
        )
        if not stored:
            raise KeyError(source)
        chunks = [
            Chunk(
                source,
                int(f.get("position", 0)),
                str(f.get("title", "")),
                str(f.get("section", "")),
                str(f.get("text", "")),
            )
            for f in stored
        ]
        return self._write(source, chunks, category)

    def add_documents(
        self, paths: Iterable[str | Path], category: str | None = None
    ) -> list[KbDocument]:
        """Add (or replace) Markdown or text files; a file's name is its source id.

        ``category`` (None: each file's front matter) is given to every file.

        Raises:
            OSError: a file cannot be read.
            UnicodeDecodeError: a file is not UTF-8.
            ValueError: a file is empty or not ``.md``/``.markdown``/``.txt``.
        """
        added = []
        for path in map(Path, paths):
            if path.suffix.lower() not in KB_SUFFIXES:
                raise ValueError(f"{path}: only {', '.join(KB_SUFFIXES)} files can be added")
            added.append(self.add_text(path.name, path.read_text(encoding="utf-8"), category))
        return added

    def remove_document(self, source: str) -> int:
        """Delete every chunk of a source; returns how many."""
        doc_ids = [
            d for d, _ in self.vectors.documents(KB_CHUNKS.name, where=[("source", "==", source)])
        ]
        for doc_id in doc_ids:
            self.vectors.delete(KB_CHUNKS.name, doc_id)
        return len(doc_ids)

    def documents(self) -> list[KbDocument]:
        """The documents in the knowledge base, by source."""
        by_source: dict[str, list[dict[str, Any]]] = {}
        for _, fields in self.vectors.documents(KB_CHUNKS.name):
            by_source.setdefault(str(fields.get("source", "?")), []).append(fields)
        return [
            KbDocument(
                source=source,
                title=str(chunks[0].get("title", source)),
                chunks=len(chunks),
                chars=sum(len(str(c.get("text", ""))) for c in chunks),
                added_at=max((float(c.get("added_at") or 0) for c in chunks), default=None),
                category=str(chunks[0].get("category") or UNCATEGORISED),
            )
            for source, chunks in sorted(by_source.items())
        ]

    def search(
        self, text: str, limit: int = 5, categories: Sequence[str] | None = None
    ) -> list[Neighbor]:
        """Knowledge-base chunks nearest to ``text``, nearest first, with ``KB_HIT_FIELDS``.

        Args:
            text: what to look for.
            limit: at most this many chunks.
            categories: only documents of these categories (``""``: uncategorised
                ones); None: all. Each is an equality filter in the index.
        """
        (vector,) = self.embedder.embed([text], purpose="query")
        if categories is None:
            return self.vectors.nearest(
                KB_CHUNKS.name, vector, limit, where=self._mine, fields=KB_HIT_FIELDS
            )
        found = [
            neighbor
            for category in dict.fromkeys(categories)
            for neighbor in self.vectors.nearest(
                KB_CHUNKS.name,
                vector,
                limit,
                where=[*self._mine, ("category", "==", category)],
                fields=KB_HIT_FIELDS,
            )
        ]
        return sorted(found, key=lambda n: n.distance)[:limit]

    # --- emails --------------------------------------------------------------------------

    @staticmethod
    def email_text(email: Email) -> str:
        """What is embedded of an email: its subject and unquoted body, trimmed."""
        body = strip_quoted(email.body_text)
        return f"{bare_subject(email.subject)}\n{body}"[:EMAIL_EMBED_CHARS]

    def index_email(
        self, email: Email, category: str | None = None, vector: Sequence[float] | None = None
    ) -> None:
        """Upsert an email into ``email_vectors`` under its message id (idempotent).

        Args:
            email: the email.
            category: its category when known.
            vector: its embedding if already computed (see the module docstring).
        """
        if vector is None:
            (vector,) = self.embedder.embed([self.email_text(email)], purpose="query")
        fields: dict[str, Any] = {
            "message_id": email.message_id,
            "thread_id": email.thread_id,
            "subject": email.subject,
            "sender": email.sender.address,
            "received_at": email.received_at.isoformat(),
            "excerpt": excerpt(strip_quoted(email.body_text)),
            "embedder": self.embedder.name,
        }
        if category:
            fields["category"] = category
        self.vectors.upsert(EMAIL_VECTORS.name, email.message_id, vector, fields)

    def retrieve(
        self,
        email: Email,
        category: str | None = None,
        kb_limit: int = 3,
        email_limit: int = 3,
        index: bool = True,
    ) -> Retrieval:
        """Embed an email once, find KB chunks and similar past emails, then index it.

        Chunks come with ``KB_HIT_FIELDS``, past emails with ``EMAIL_HIT_FIELDS``.
        The email itself (by message id) is never among the similar emails,
        so a re-run after indexing returns the same answer. Results beyond
        ``max_distance`` are dropped.
        """
        (vector,) = self.embedder.embed([self.email_text(email)], purpose="query")
        knowledge = self.vectors.nearest(
            KB_CHUNKS.name, vector, kb_limit, where=self._mine, fields=KB_HIT_FIELDS
        )
        similar = [
            n
            for n in self.vectors.nearest(
                EMAIL_VECTORS.name,
                vector,
                email_limit + 1,
                where=self._mine,
                fields=EMAIL_HIT_FIELDS,
            )
            if n.doc_id != email.message_id
        ][:email_limit]
        if index:
            self.index_email(email, category, vector)
        return Retrieval(knowledge=self._near(knowledge), similar_emails=self._near(similar))

    def _near(self, found: list[Neighbor]) -> list[Neighbor]:
        limit = self.max_distance
        return found if limit is None else [n for n in found if n.distance <= limit]


# --- construction ------------------------------------------------------------------------


def sample_kb_paths() -> list[Path]:
    """The bundled sample knowledge base (``samples/kb``), in name order."""
    folder = resources.files("inboxflow") / "samples" / "kb"
    return sorted(Path(str(p)) for p in folder.iterdir() if p.name.endswith(KB_SUFFIXES))


def seed_knowledge(kb: KnowledgeBase) -> list[KbDocument]:
    """Load the bundled sample knowledge base (idempotent: chunk ids are fixed)."""
    return kb.add_documents(sample_kb_paths())


def knowledge_base_for(ports: Ports) -> KnowledgeBase:
    """The knowledge base over ``ports.embedder`` and ``ports.vectors``."""
    return KnowledgeBase(ports.embedder, ports.vectors)


__all__ = [
    "UNCATEGORISED",
    "Chunk",
    "KbDocument",
    "KnowledgeBase",
    "Retrieval",
    "check_category",
    "chunk_document",
    "excerpt",
    "front_matter",
    "knowledge_base_for",
    "sample_kb_paths",
    "seed_knowledge",
]
