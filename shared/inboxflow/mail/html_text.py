"""Readable, inert text from email HTML (inscriptis on a cleaned lxml tree).

Email HTML is hostile input: it may carry scripts, frames, event handlers,
``javascript:`` links and text hidden with CSS that a human never sees but a
model would read as instructions. :func:`html_to_text` parses the markup with
lxml, removes everything a mail client would not show as text, and renders the
rest with inscriptis (tables, lists and links kept as text). Nothing is ever
executed or fetched; the result is plain text.

inscriptis and lxml are imported on first use: only HTML mail pays for them.
"""

from __future__ import annotations

import html
import re
from html.parser import HTMLParser
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from lxml.html import HtmlElement

HTML_INPUT_LIMIT = 256_000
"""Characters of markup converted; the rest is cut before parsing.

inscriptis renders about 1 MB/s of paragraphs but only ~0.2 MB/s of tables
(newsletter layouts), so this bounds a conversion to about a second. Gmail
itself clips messages over 102 KB.
"""

LINK_TARGET_LIMIT = 300
"""Link targets longer than this (tracking redirects) are dropped; the link text stays."""

DROPPED_ELEMENTS = (
    "head",
    "title",
    "meta",
    "link",
    "base",
    "script",
    "style",
    "noscript",
    "template",
    "iframe",
    "frame",
    "frameset",
    "object",
    "embed",
    "applet",
    "svg",
    "math",
    "canvas",
    "audio",
    "video",
    "select",
    "datalist",
)
"""Elements removed with their content: active content, or text a reader does not see."""

_HIDDEN_STYLE = re.compile(
    r"display\s*:\s*none|visibility\s*:\s*hidden|(?<![-\w])font-size\s*:\s*0(?:\.0+)?(?:px|pt|em|rem|%)?\s*(?:;|$|!)"
    r"|max-height\s*:\s*0(?:px)?\s*(?:;|$|!)|opacity\s*:\s*0(?:\.0+)?\s*(?:;|$|!)",
    re.IGNORECASE,
)
_SAFE_LINK = re.compile(r"^(https?://|mailto:)", re.IGNORECASE)
_BLANK_RUNS = re.compile(r"\n{3,}")
_TRAILING_SPACE = re.compile(r"[ \t\u00a0]+\n")

_config: Any = None


def html_to_text(markup: str) -> str:
    """Readable text from HTML: active and hidden content removed, blocks on their own lines.

    Scripts, styles, frames, objects and elements hidden with CSS
    (``display:none``, ``visibility:hidden``, zero font size, zero height,
    zero opacity, the ``hidden`` attribute) are dropped with their content;
    links keep their text and show their ``http(s)``/``mailto`` target as
    ``[text](url)``; other targets (``javascript:``, ``data:``) are removed.

    Args:
        markup: the HTML, as text.

    Returns:
        The text, blank-line runs collapsed, stripped. Never raises: markup
        lxml cannot parse falls back to the standard library's tokenizer.
    """
    if not markup or not markup.strip():
        return ""
    markup = markup[:HTML_INPUT_LIMIT]
    try:
        text = _inscriptis_text(markup)
    except Exception:  # lxml or inscriptis choked on hostile input: the stdlib tokenizer never does
        text = stdlib_html_to_text(markup)
    return _tidy(text)


def reply_text(markup: str) -> str:
    """What the author of an HTML reply wrote: the text before the first quoted part.

    Everything from the first quote on is dropped, in document order: a
    ``blockquote``, Gmail's ``gmail_quote``/``gmail_attr`` containers, Outlook's
    ``divRplyFwdMsg``/``appendonsend`` markers (the quoted message follows them as
    siblings, not inside), Apple Mail's and Thunderbird's cite blocks, Yahoo's and
    Proton's quote containers. A reply quoting the email it answers without an
    "On ... wrote:" line is read without the quote.

    Args:
        markup: the reply's HTML.

    Returns:
        The text, tidied like :func:`html_to_text`; empty when the markup cannot be
        parsed (then nothing in it is taken as the author's).
    """
    if not markup or not markup.strip():
        return ""
    try:
        return _tidy(_inscriptis_text(markup[:HTML_INPUT_LIMIT], cut_quotes=True))
    except Exception:  # unparseable: the quote could not be told from the reply
        return ""


QUOTE_CLASSES = frozenset(
    {
        "gmail_quote",
        "gmail_attr",
        "gmail_quote_container",
        "moz-cite-prefix",
        "yahoo_quoted",
        "protonmail_quote",
        "outlookmessageheader",
        "zmail_extra",
        "x_gmail_quote",
    }
)
"""Classes (lowercased) of the containers mail clients put a quoted message in."""

QUOTE_IDS = frozenset(
    {
        "divrplyfwdmsg",
        "x_divrplyfwdmsg",
        "appendonsend",
        "x_appendonsend",
        "olk_src_body_section",
        "mail-editor-reference-message-container",
    }
)
"""Ids (lowercased) of the elements Outlook puts before (or around) the quoted message."""


def _inscriptis_text(markup: str, cut_quotes: bool = False) -> str:
    global _config
    from inscriptis.html_engine import Inscriptis
    from inscriptis.model.config import ParserConfig
    from lxml.html import document_fromstring

    if _config is None:
        _config = ParserConfig(display_links=True, table_cell_separator="  ")
    markup = re.sub(r"^\s*<\?xml[^>]*\?>", "", markup)  # lxml refuses str with an encoding decl
    markup = markup.replace("\x00", "")
    if not markup.strip():
        return ""
    tree = document_fromstring(markup)
    _clean(tree)
    if cut_quotes:
        marker = next((e for e in tree.iter() if _is_quote(e)), None)
        if marker is not None:
            _cut_from(marker)
    return str(Inscriptis(tree, _config).get_text())


def _is_quote(element: HtmlElement) -> bool:
    if not isinstance(element.tag, str):
        return False
    if element.tag.lower() == "blockquote":
        return True
    if (element.get("id") or "").strip().lower() in QUOTE_IDS:
        return True
    classes = (element.get("class") or "").lower().split()
    return any(name in QUOTE_CLASSES for name in classes) or (
        element.tag.lower() == "div" and (element.get("type") or "").lower() == "cite"
    )


def _cut_from(marker: HtmlElement) -> None:
    """Remove ``marker`` and everything after it in document order."""
    node = marker
    while True:
        parent = node.getparent()
        if parent is None:
            break
        for sibling in list(node.itersiblings()):
            parent.remove(sibling)  # with its tail text
        node.tail = None
        node = parent
    parent = marker.getparent()
    if parent is not None:
        parent.remove(marker)


def _clean(tree: HtmlElement) -> None:
    """Remove active/hidden elements and comments; keep only safe, short link targets."""
    for element in list(tree.iter()):
        tag = element.tag
        if not isinstance(tag, str):  # comments, processing instructions
            if element.getparent() is not None:
                element.drop_tree()
            continue
        name = tag.lower()
        if name in DROPPED_ELEMENTS or _is_hidden(element):
            if element.getparent() is not None:
                element.drop_tree()
            continue
        if name == "a":
            _clean_link(element)
        elif name == "img":
            element.attrib.pop("src", None)


def _is_hidden(element: HtmlElement) -> bool:
    if element.get("hidden") is not None:
        return True
    style = element.get("style")
    return bool(style and _HIDDEN_STYLE.search(style))


def _clean_link(element: HtmlElement) -> None:
    href = (element.get("href") or "").strip()
    text = element.text_content().strip()
    keep = (
        _SAFE_LINK.match(href)
        and len(href) <= LINK_TARGET_LIMIT
        and text
        and href.removeprefix("mailto:") != text
        and href.rstrip("/") != text.rstrip("/")
    )
    if not keep:
        element.attrib.pop("href", None)


def _tidy(text: str) -> str:
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\u00a0", " ")
    text = _TRAILING_SPACE.sub("\n", text)
    return _BLANK_RUNS.sub("\n\n", text).strip()


# --- the fallback: the standard library's tokenizer ------------------------------------------


class _TextExtractor(HTMLParser):
    _BLOCK = frozenset(
        {"p", "div", "br", "li", "tr", "h1", "h2", "h3", "h4", "h5", "h6", "table", "ul", "ol"}
        | {"blockquote", "section", "article", "header", "footer", "hr"}
    )
    _SKIP = frozenset(DROPPED_ELEMENTS)

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.skip_depth = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self._SKIP:
            self.skip_depth += 1
        elif tag in self._BLOCK:
            self.parts.append("\n  * " if tag == "li" else "\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in self._SKIP:
            self.skip_depth = max(0, self.skip_depth - 1)
        elif tag in self._BLOCK and tag != "li":
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if not self.skip_depth:
            self.parts.append(data)


def stdlib_html_to_text(markup: str) -> str:
    """Text from HTML with the standard library only (the fallback; no CSS, no link targets).

    Args:
        markup: the HTML, as text.

    Returns:
        The text with scripts, styles and frames dropped; never raises.
    """
    parser = _TextExtractor()
    try:
        parser.feed(markup)
        parser.close()
    except Exception:  # the stdlib parser is lenient; this is a last resort
        return html.unescape(re.sub(r"<[^>]{0,2000}>", " ", markup))
    lines = [
        re.sub(r"[ \t\r\f\v]+", " ", line).rstrip() for line in "".join(parser.parts).split("\n")
    ]
    return "\n".join(lines)


__all__ = [
    "DROPPED_ELEMENTS",
    "HTML_INPUT_LIMIT",
    "QUOTE_CLASSES",
    "QUOTE_IDS",
    "html_to_text",
    "reply_text",
    "stdlib_html_to_text",
]
