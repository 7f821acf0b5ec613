"""The offline model's word data: TOML files in each graph's ``cues/`` folder, read here.

A graph keeps the words its rules look for as data, never as Python literals: the folder
``graphs/<graph>/cues/`` holds two kinds of TOML file, and this module is the one reader of
both (:mod:`.cue_matching` matches what they hold; code that reads the words stays in Python).

- **A language file** ``<language>.toml`` (ISO 639-1: ``en.toml``, ``cs.toml``...): the
  cue lists of one language, each key a kind of cue (``complaint = ["refund", ...]``) or a
  table of them (``[intents]``: per category, a phrase and its weight). Every graph that
  searches all languages in every email reads these with :func:`read_cue_lists`.
- **A named file** ``<what it holds>.toml`` (``labels.toml``, ``states.toml``, ``when.toml``):
  words that are not one language's, or tables across languages (per field, per language;
  a name and its code). It is read with :func:`read_word_data`.

Values are TOML strings, arrays of strings, numbers and tables; keys that are not plain
words are quoted (``"new york" = "NY"``, ``"30" = [...]`` where the code reads a number).
Each graph's ``cues/__init__.py`` turns what it reads into the values its rules use
(tuples, numbers as keys) and documents its files' keys. Files are read on first use, not
when a module is imported (cold start), and ship as package data (``graphs/*/cues/*.toml``
in ``pyproject.toml``).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from typing import Any


class WordDataError(ValueError):
    """A word-data file is missing or not valid TOML; the message names the file."""


def read_word_data(package: str, name: str) -> dict[str, Any]:
    """The data of the file ``<name>.toml`` in ``package`` (a graph's ``cues`` package).

    Raises:
        FileNotFoundError: ``package`` has no such file (the message names it).
        WordDataError: the file is not valid TOML (the message names it and the line).
    """
    import tomllib
    from importlib import resources

    path = f"{package.replace('.', '/')}/{name}.toml"
    file = resources.files(package).joinpath(f"{name}.toml")
    try:
        text = file.read_text("utf-8")
    except FileNotFoundError:
        raise FileNotFoundError(f"no word data file {path}") from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise WordDataError(f"{path} is not valid TOML: {error}") from error


def read_cue_lists(package: str, languages: Iterable[str]) -> dict[str, dict[str, Any]]:
    """Each language's cue lists: the language file ``<language>.toml`` of ``package``.

    A graph keeps its lists as data, one TOML file per language beside the code that
    reads them; this reads them the same way for every graph, in ``languages`` order.

    Raises:
        FileNotFoundError: a language has no file.
        WordDataError: a file is not valid TOML (a ``ValueError``).
    """
    return {language: read_word_data(package, language) for language in languages}


@functools.cache
def cue_languages(package: str) -> frozenset[str]:
    """The languages ``package`` has a language file for (``en.toml`` -> ``en``): what the
    offline model can read (the safety screen hands other mail to a person). Listed once per
    package and process (the safety screen asks for every email)."""
    from importlib import resources

    return frozenset(
        entry.name.removesuffix(".toml")
        for entry in resources.files(package).iterdir()
        if entry.name.endswith(".toml") and len(entry.name) == len("xx.toml")
    )


__all__ = ["WordDataError", "cue_languages", "read_cue_lists", "read_word_data"]
