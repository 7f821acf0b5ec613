"""Pseudonyms for collected eval cases: addresses, names and message ids replaced by a keyed hash.

The key (``pseudonym_keys/eval``, 32 random bytes) is created in the deployment's store the
first time ``inboxflow eval collect`` runs there and stays there: it is never printed and
never written into a data set, so nobody holding a collected set can test a guess
("is p3f2...@d91a....example alice@acme.com?") without the deployment. The same key gives
the same pseudonym every time, so conversations, routing and labels stay consistent across
runs; another deployment (another key) gives others.

What stays: the team's own addresses (the mailboxes mail came to) and their domains, so
routing and replies still work. Names are replaced word by word (the display names' words,
wherever they appear in a text), so "Hi Lena," in a draft and "Lena Fischer" in ``From``
keep matching.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from collections.abc import Iterable
from typing import Any

from ...ports.documents import DocumentStore
from ...schema import PSEUDONYM_KEYS

KEY_DOCUMENT = PSEUDONYM_KEYS.path("eval")
KEY_BYTES = 32
PSEUDONYM_TLD = "example"
"""Pseudonymised domains end in the reserved ``.example`` (RFC 2606): never a real one."""
_ADDRESS = re.compile(r"[\w.+'-]+@[\w-]+(?:\.[\w-]+)+")
_CONSONANTS = "bdfgklmnprstvz"
_VOWELS = "aeiou"
_NAME_WORD = re.compile(r"[^\W\d_][^\W\d_'\u2019-]+")


def pseudonym_key(store: DocumentStore, now: float) -> bytes:
    """The deployment's pseudonym key: read, or created (create-only: two first runs agree)."""
    doc = store.get(KEY_DOCUMENT)
    if doc is None:
        store.create(KEY_DOCUMENT, {"key": secrets.token_hex(KEY_BYTES), "created_at": now})
        doc = store.get(KEY_DOCUMENT)
    assert doc is not None
    return bytes.fromhex(str(doc["key"]))


class Pseudonyms:
    """Consistent replacements under one key.

    Register every address and display name first (``register``), then replace
    (``address``, ``name``, ``text``): a text is scanned once, for addresses, the
    registered domains and the registered name words.

    Args:
        key: the deployment's key.
        keep: the team's addresses, kept as they are (their domains too).
    """

    def __init__(self, key: bytes, keep: Iterable[str] = ()) -> None:
        self._key = key
        self.kept = {address.strip().lower() for address in keep if address}
        self.kept_domains = {address.rpartition("@")[2] for address in self.kept}
        self._domains: set[str] = set()
        self._words: set[str] = set()
        self._pattern: re.Pattern[str] | None = None

    def _hash(self, kind: str, value: str, length: int) -> str:
        digest = hmac.new(self._key, f"{kind}:{value}".encode(), hashlib.sha256)
        return digest.hexdigest()[:length]

    def register(self, address: str | None, name: str | None = None) -> None:
        """Learn an address's domain and the words of its display name (not the team's)."""
        if not address:
            return
        address = address.strip().lower()
        if address in self.kept:
            return
        domain = address.rpartition("@")[2]
        if domain and domain not in self.kept_domains:
            self._domains.add(domain)
        self._words.update(word for word in _NAME_WORD.findall(name or "") if len(word) > 1)
        self._pattern = None

    def address(self, address: str) -> str:
        """``p<hash>@d<hash>.example`` (the team's domain kept); the team's address as it is."""
        address = address.strip().lower()
        if address in self.kept or "@" not in address:
            return address
        local_domain = address.rpartition("@")[2]
        return f"p{self._hash('address', address, 10)}@{self.domain(local_domain)}"

    def domain(self, domain: str) -> str:
        """``d<hash>.example``; the team's domains as they are."""
        domain = domain.strip().lower()
        if domain in self.kept_domains:
            return domain
        return f"d{self._hash('domain', domain, 8)}.{PSEUDONYM_TLD}"

    def name(self, name: str) -> str:
        """Each word of a display name replaced (``Lena Fischer`` -> ``Tobaremi Kilosuna``)."""
        return _NAME_WORD.sub(lambda match: self._word(match.group(0)), name)

    def _word(self, word: str) -> str:
        """A name-like word of three syllables (letters only: a parser still reads it as a name)."""
        if len(word) <= 1:
            return word
        digest = bytes.fromhex(self._hash("name", word.casefold(), 12))
        syllables = (
            _CONSONANTS[a % len(_CONSONANTS)] + _VOWELS[b % len(_VOWELS)]
            for a, b in zip(digest[::2], digest[1::2], strict=True)
        )
        return "".join(syllables).capitalize()

    def message_id(self, message_id: str) -> str:
        """A message id as ``<hash>@collected.example`` (the same id, the same pseudonym)."""
        return f"{self._hash('message', message_id.strip().strip('<>'), 20)}@collected.example"

    def text(self, text: str) -> str:
        """``text`` with every address, registered domain and registered name word replaced."""
        if not text:
            return text
        return self._compiled().sub(self._replace, text)

    def value(self, value: Any) -> Any:
        """A JSON value with every string replaced as ``text`` does."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, list):
            return [self.value(item) for item in value]
        if isinstance(value, dict):
            return {key: self.value(item) for key, item in value.items()}
        return value

    def _compiled(self) -> re.Pattern[str]:
        if self._pattern is None:
            domains = sorted(self._domains, key=len, reverse=True)
            words = sorted(self._words, key=len, reverse=True)
            parts = [f"(?P<address>{_ADDRESS.pattern})"]
            if domains:
                joined = "|".join(map(re.escape, domains))
                parts.append(rf"(?<![\w.-])(?P<domain>{joined})(?![\w-])")
            if words:
                joined = "|".join(map(re.escape, words))
                parts.append(rf"(?<!\w)(?P<word>(?-i:{joined}))(?!\w)")
            self._pattern = re.compile("|".join(parts), re.IGNORECASE)
        return self._pattern

    def _replace(self, match: re.Match[str]) -> str:
        if match.group("address"):
            return self.address(match.group("address"))
        if match.lastgroup == "domain":
            return self.domain(match.group("domain"))
        return self._word(match.group(0))
