"""``inboxflow kb``: load, list and search the knowledge base; set documents' categories.

The knowledge base lives in the configured store: the embedded SQLite file
under ``--home`` (default ``INBOXFLOW_HOME`` or ``.inboxflow``), Firestore
when ``FIRESTORE_EMULATOR_HOST`` / ``INBOXFLOW_STORE=firestore`` say so, or
(``--dev``) the emulated cloud running on ``--home``.
Embeddings come from Gemini when it is configured, else the offline embedder.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.table import Table
from rich.text import Text

from inboxflow.dev.cli.options import dev_option, home_option, use_home
from inboxflow.dev.cli.render import cli_console
from inboxflow.settings import Settings

if TYPE_CHECKING:
    from inboxflow.knowledge import KbDocument, KnowledgeBase

app = typer.Typer(help="The knowledge base the retrieve node searches.", no_args_is_help=True)

HOME = home_option()
DEV = dev_option()


@contextmanager
def _knowledge_base(home: Path, dev: bool) -> Iterator[tuple[KnowledgeBase, str]]:
    """The knowledge base of the configured store, and a description of where it is."""
    from inboxflow.knowledge import KnowledgeBase
    from inboxflow.services import default_embedder, make_store, make_vector_index

    use_home(home, dev)
    settings = Settings.from_env(os.environ)
    store = make_store(settings)
    vectors = make_vector_index(store)
    where = (
        f"SQLite {settings.sqlite_path}"
        if settings.store == "sqlite"
        else f"Firestore (project {settings.project})"
    )
    try:
        yield KnowledgeBase(default_embedder(os.environ), vectors), where
    finally:
        vectors.close()
        store.close()


def _when(epoch_s: float | None) -> str:
    if not epoch_s:
        return ""
    return datetime.fromtimestamp(epoch_s, UTC).strftime("%Y-%m-%d %H:%M")


def _documents_table(title: str, documents: list[KbDocument], *, with_added: bool) -> Table:
    """One row per document: name, title, category, chunks, characters (and when added)."""
    table = Table(title=title)
    table.add_column("document", no_wrap=True)
    table.add_column("title")
    table.add_column("category")
    table.add_column("chunks", justify="right")
    table.add_column("chars", justify="right")
    if with_added:
        table.add_column("added", no_wrap=True)
    for doc in documents:
        added = (_when(doc.added_at),) if with_added else ()
        row = (Text(doc.source), Text(doc.title), Text(doc.category or "-"))
        table.add_row(*row, str(doc.chunks), str(doc.chars), *added)
    return table


def _no_document(source: str) -> typer.Exit:
    """Say there is no document ``source``; the exit to raise (status 1)."""
    cli_console().print(Text(f"no document named {source!r}", style="red"))
    return typer.Exit(1)


SOURCE = typer.Argument(..., help="Document name as listed (the file name).")

CATEGORY_HELP = (
    "The documents' category (billing, technical, general...: the support specialist "
    "that searches them); default: each file's front matter (category: ...), else none."
)


@app.command("add")
def add(
    files: list[Path] = typer.Argument(..., help="Markdown or text files (.md, .markdown, .txt)."),
    category: str | None = typer.Option(None, help=CATEGORY_HELP),
    home: Path = HOME,
    dev: bool = DEV,
) -> None:
    """Add (or replace) documents; a document is identified by its file name."""
    console = cli_console()
    missing = [str(f) for f in files if not f.is_file()]
    if missing:
        console.print(Text(f"no such file: {', '.join(missing)}", style="red"))
        raise typer.Exit(2)
    with _knowledge_base(home, dev) as (kb, where):
        try:
            added = kb.add_documents(files, category)
        except (ValueError, UnicodeDecodeError) as exc:
            console.print(Text(str(exc), style="red"))
            raise typer.Exit(2) from exc
        title = f"added to the knowledge base ({where}, {kb.embedder.name})"
        console.print(_documents_table(title, added, with_added=False))


@app.command("seed")
def seed(home: Path = HOME, dev: bool = DEV) -> None:
    """Load the bundled sample knowledge base (matches the sample inbox)."""
    from inboxflow.knowledge import sample_kb_paths

    add(sample_kb_paths(), None, home, dev)


@app.command("list")
def list_documents(home: Path = HOME, dev: bool = DEV) -> None:
    """The documents in the knowledge base."""
    console = cli_console()
    with _knowledge_base(home, dev) as (kb, where):
        documents = kb.documents()
    if not documents:
        console.print(
            f"the knowledge base is empty ({where}); add files with: inboxflow kb add FILE..."
        )
        return
    console.print(_documents_table(f"knowledge base ({where})", documents, with_added=True))


@app.command("search")
def search(
    text: str = typer.Argument(..., help="What to look for."),
    limit: int = typer.Option(5, min=1, max=50, help="How many chunks to show."),
    category: list[str] | None = typer.Option(
        None, help="Only documents of this category (repeat for several; '' for none)."
    ),
    home: Path = HOME,
    dev: bool = DEV,
) -> None:
    """The knowledge-base chunks nearest to TEXT (cosine distance, nearest first)."""
    from inboxflow.knowledge import excerpt

    console = cli_console()
    with _knowledge_base(home, dev) as (kb, where):
        found = kb.search(text, limit=limit, categories=category or None)
        embedder = kb.embedder.name
    if not found:
        console.print(f"nothing found ({where}, {embedder}); is the knowledge base empty?")
        raise typer.Exit(1)
    table = Table(title=f"nearest chunks ({where}, {embedder})")
    table.add_column("distance", justify="right")
    table.add_column("chunk", no_wrap=True)
    table.add_column("category")
    table.add_column("section")
    table.add_column("excerpt", ratio=1)
    for hit in found:
        table.add_row(
            f"{hit.distance:.3f}",
            Text(hit.doc_id),
            Text(str(hit.fields.get("category") or "-")),
            Text(str(hit.fields.get("section", ""))),
            Text(excerpt(str(hit.fields.get("text", "")), 160)),
        )
    console.print(table)


@app.command("category")
def set_category(
    source: str = SOURCE,
    category: str | None = typer.Argument(
        None, help="The new category ('' for none); omitted: show the current one."
    ),
    home: Path = HOME,
    dev: bool = DEV,
) -> None:
    """Show or set a document's category (its chunks are written again, with their text)."""
    console = cli_console()
    with _knowledge_base(home, dev) as (kb, _):
        if category is None:
            found = [d for d in kb.documents() if d.source == source]
            if not found:
                raise _no_document(source)
            typer.echo(f"{source}: {found[0].category or '(none)'}")
            return
        try:
            doc = kb.set_category(source, category)
        except KeyError:
            raise _no_document(source) from None
        except ValueError as exc:
            console.print(Text(str(exc), style="red"))
            raise typer.Exit(2) from exc
    typer.echo(f"{source}: category {doc.category or '(none)'} ({doc.chunks} chunks)")


@app.command("remove")
def remove(
    source: str = SOURCE,
    home: Path = HOME,
    dev: bool = DEV,
) -> None:
    """Remove a document and its chunks."""
    with _knowledge_base(home, dev) as (kb, _):
        removed = kb.remove_document(source)
    if not removed:
        raise _no_document(source)
    cli_console().print(f"removed {source} ({removed} chunks)")
