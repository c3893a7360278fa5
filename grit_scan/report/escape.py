"""Escaping of strings taken from files, at the renderer (docs/reliability.md).

Names, paths and messages come from checkpoints an attacker may have
written.  Before any of them reaches a terminal, a CI log or a viewer, every
control character (C0, DEL, C1: ESC, OSC, CR, NUL ...) and every Unicode
character that reorders or hides text (bidi embeddings, overrides and
isolates, zero-width marks, line and paragraph separators) is shown as a
Python-style escape: ``\\x1b``, ``\\u202e``.  A backslash is left alone, so
ordinary Windows-looking names stay readable; the escaped form is for
reading, and the JSON report keeps the exact name for tools.

Suggested shell commands are built with ``shlex.quote`` by whoever writes
them (the rules); the renderer then escapes the quoted command like any other
string, so nothing a file says can become a terminal sequence or a shell
command when pasted.
"""

from __future__ import annotations

import re
from urllib.parse import quote

# Characters never shown raw: C0 controls, DEL, C1 controls, the bidi
# formatting characters (LRM, RLM, ALM, LRE..RLO, LRI..PDI), zero-width
# characters that hide text, line/paragraph separators and the BOM.
_UNSAFE = re.compile(
    "[\x00-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]"
)


def _one(m: re.Match[str]) -> str:
    c = ord(m.group(0))
    return f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}"


def esc(s: str) -> str:
    """``s`` with every unsafe character shown as an escape (see module doc)."""
    return _UNSAFE.sub(_one, s)


def has_unsafe(s: str) -> bool:
    return _UNSAFE.search(s) is not None


def uri_path(path: str) -> str:
    """A relative path as a percent-encoded URI reference (RFC 3986): ``/``
    separators kept, everything outside the unreserved set encoded (UTF-8)."""
    return quote(path.replace("\\", "/"), safe="/")
