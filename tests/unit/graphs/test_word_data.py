"""The offline model's word data (``inboxflow.graphs.word_data``): every graph's TOML files
in ``cues/``, read by one loader that names the file it cannot read."""

from __future__ import annotations

import pytest

from inboxflow.graphs.word_data import WordDataError, read_cue_lists, read_word_data


def test_cue_lists_are_read_from_each_languages_toml_in_order(tmp_path, monkeypatch):
    package = tmp_path / "cue_lists_demo"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "en.toml").write_text(
        'match = "words"\n[cues]\nrefund = ["refund*", "money back"]\n'
    )
    (package / "cs.toml").write_text('[cues]\nrefund = ["vratit penize"]\n')
    monkeypatch.syspath_prepend(str(tmp_path))
    lists = read_cue_lists("cue_lists_demo", ["cs", "en"])
    assert list(lists) == ["cs", "en"]
    assert lists["en"] == {"match": "words", "cues": {"refund": ["refund*", "money back"]}}
    with pytest.raises(FileNotFoundError):
        read_cue_lists("cue_lists_demo", ["de"])


@pytest.mark.parametrize(
    ("package", "kind"),
    [
        ("inboxflow.graphs.support.cues", "cues"),
        ("inboxflow.graphs.pipeline.cues", "intents"),
        ("inboxflow.graphs.agent.cues", "medical_advice"),
    ],
)
def test_every_language_of_a_graphs_cue_files_is_read(package: str, kind: str) -> None:
    import importlib

    languages = importlib.import_module(package).LANGUAGES
    lists = read_cue_lists(package, languages)
    assert list(lists) == list(languages) == ["en", "cs", "de", "fr", "es", "ja"]
    assert all(lists[language][kind] for language in languages)


@pytest.mark.parametrize(
    ("package", "name", "key"),
    [
        ("inboxflow.graphs.assistant.cues", "when", "weekdays"),
        ("inboxflow.graphs.planner.cues", "labels", "full_name"),
        ("inboxflow.graphs.planner.cues", "frames", "quote"),
        ("inboxflow.graphs.planner.cues", "values", "none_words"),
        ("inboxflow.graphs.planner.cues", "states", "state_names"),
        ("inboxflow.graphs.planner.cues", "car_makes", "car_makes"),
    ],
)
def test_a_graphs_named_word_data_file_is_read(package: str, name: str, key: str) -> None:
    assert read_word_data(package, name)[key]


def test_the_assistants_language_files_hold_every_kind_of_cue() -> None:
    import inboxflow.graphs.assistant.cues as cues

    lists = read_cue_lists(cues.__name__, cues.LANGUAGES)
    kinds = ["thanks", "requests", "meeting_words", "meeting_asks", "money_asks", "cold_pitch"]
    assert all(list(lists[language]) == kinds for language in cues.LANGUAGES)


def _package(tmp_path, monkeypatch, name: str, files: dict[str, str]) -> str:
    package = tmp_path / name
    package.mkdir()
    (package / "__init__.py").write_text("")
    for file, text in files.items():
        (package / file).write_text(text, "utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    return name


def test_a_malformed_file_is_an_error_naming_the_file_and_the_line(tmp_path, monkeypatch):
    package = _package(
        tmp_path,
        monkeypatch,
        "word_data_broken",
        {"labels.toml": '[zip]\nen = ["zip" "postcode"]\n'},
    )
    with pytest.raises(WordDataError, match=r"word_data_broken/labels\.toml is not valid TOML"):
        read_word_data(package, "labels")
    with pytest.raises(ValueError, match=r"line 2"):
        read_word_data(package, "labels")


def test_a_malformed_language_file_names_that_language_file(tmp_path, monkeypatch):
    package = _package(
        tmp_path,
        monkeypatch,
        "word_data_languages",
        {"en.toml": 'thanks = ["thanks"]\n', "cs.toml": "thanks = dekuji\n"},
    )
    assert read_cue_lists(package, ["en"]) == {"en": {"thanks": ["thanks"]}}
    with pytest.raises(WordDataError, match=r"word_data_languages/cs\.toml"):
        read_cue_lists(package, ["en", "cs"])


def test_a_missing_file_is_an_error_naming_the_file(tmp_path, monkeypatch):
    package = _package(tmp_path, monkeypatch, "word_data_missing", {})
    with pytest.raises(FileNotFoundError, match=r"word_data_missing/states\.toml"):
        read_word_data(package, "states")


def test_a_duplicate_key_is_an_error_not_a_silent_overwrite(tmp_path, monkeypatch):
    """A Python dict literal kept the last of two equal keys; a data file refuses them."""
    package = _package(
        tmp_path, monkeypatch, "word_data_twice", {"frames.toml": "[quote]\ncs = []\ncs = []\n"}
    )
    with pytest.raises(WordDataError, match=r"word_data_twice/frames\.toml"):
        read_word_data(package, "frames")
