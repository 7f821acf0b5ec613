"""Text from bytes whatever the label says, and valid Unicode only.

Real mail mislabels its charsets: ``iso-8859-1`` that is Windows-1252, UTF-8
declared as Latin-1, ``shift_jis`` that needs Microsoft's superset.
:func:`decode_bytes` repairs what can be repaired and says when it could not;
:func:`clean_text` keeps every text field free of lone surrogates and C0
control characters.
"""

from __future__ import annotations

import codecs
import re

CHARSET_ALIASES = {
    # WHATWG: these labels mean windows-1252 in practice (0x80-0x9F are smart quotes, not C1).
    "iso-8859-1": "cp1252",
    "iso8859-1": "cp1252",
    "latin1": "cp1252",
    "latin-1": "cp1252",
    "l1": "cp1252",
    "us-ascii": "cp1252",
    "ascii": "cp1252",
    "ansi_x3.4-1968": "cp1252",
    # supersets actually used by the mailers that send these labels
    "shift_jis": "cp932",
    "shift-jis": "cp932",
    "sjis": "cp932",
    "x-sjis": "cp932",
    "ms_kanji": "cp932",
    "windows-31j": "cp932",
    "gb2312": "gb18030",
    "gbk": "gb18030",
    "x-gbk": "gb18030",
    "euc-cn": "gb18030",
    "euc-kr": "cp949",
    "ks_c_5601-1987": "cp949",
    "big5": "big5hkscs",
    "iso-2022-jp": "iso2022_jp_2",
    "windows-874": "cp874",
    "tis-620": "cp874",
}
"""Charset labels and the codec mail that carries them really needs."""

_WESTERN_SINGLE_BYTE = frozenset({"cp1252", "iso8859-15", "cp1250"})
_REFUSED_CODECS = frozenset(
    {"unicode_escape", "raw_unicode_escape", "idna", "punycode", "undefined", "mbcs", "oem"}
)
_CONTROL_CHARS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
ESCAPED_BYTES = re.compile(r"[\udc80-\udcff]+")
"""Bytes the stdlib parser kept as surrogate escapes (``surrogateescape``)."""
_SURROGATES = re.compile(r"[\ud800-\udfff]")


def decode_bytes(payload: bytes, label: str) -> tuple[str, str | None]:
    """Decode text bytes by a MIME charset label, repairing what real mail gets wrong.

    Args:
        payload: the bytes after the transfer encoding was undone.
        label: the declared charset (any case), or empty.

    Returns:
        The text (undecodable bytes as U+FFFD, line ends normalised, control
        characters removed) and a warning when the label was unknown or wrong.
    """
    warning: str | None = None
    codec = _codec(label) if label else None
    if label and codec is None:
        warning = f"unknown charset {label!r}: read as UTF-8"
    if codec is None or codec in _WESTERN_SINGLE_BYTE or codec.startswith("utf-8"):
        # undeclared, unknown, or a single-byte label on bytes that are really UTF-8
        try:
            return clean_text(payload.decode("utf-8")), warning
        except UnicodeDecodeError:
            if codec is None and not label:
                codec = "cp1252"  # undeclared 8-bit text: the most common legacy charset
            elif codec is None or codec.startswith("utf-8"):
                return clean_text(payload.decode("utf-8", "replace")), warning or (
                    f"text is not valid {label or 'UTF-8'}: undecodable bytes replaced"
                )
    try:
        text = payload.decode(codec, "strict")
    except UnicodeDecodeError:
        text = payload.decode(codec, "replace")
        warning = warning or f"text is not valid {label}: undecodable bytes replaced"
    except Exception:  # a codec that rejects its input outright
        text = payload.decode("utf-8", "replace")
        warning = warning or f"charset {label!r} could not decode the text: read as UTF-8"
    return clean_text(text), warning


def _codec(label: str) -> str | None:
    name = CHARSET_ALIASES.get(label, label)
    try:
        info = codecs.lookup(name)
    except (LookupError, ValueError):
        return None
    if (
        not getattr(info, "_is_text_encoding", True)
        or info.name.replace("-", "_") in _REFUSED_CODECS
    ):
        return None
    return CHARSET_ALIASES.get(info.name, info.name)


def clean_text(text: str) -> str:
    """Valid Unicode only: escaped bytes re-decoded, lone surrogates and C0 controls removed."""
    if _SURROGATES.search(text):
        text = ESCAPED_BYTES.sub(lambda m: _redecode(m.group()), text)
        text = _SURROGATES.sub("\ufffd", text)
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return _CONTROL_CHARS.sub("", text)


def _redecode(escaped: str) -> str:
    """Bytes the parser kept as surrogate escapes: UTF-8 if they are, else Windows-1252."""
    data = bytes(ord(c) - 0xDC00 for c in escaped)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("cp1252", "replace")


__all__ = ["CHARSET_ALIASES", "ESCAPED_BYTES", "clean_text", "decode_bytes"]
