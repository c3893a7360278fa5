"""Strings from the input as they are shown on the page and in Markdown.

Everything a sweep line carries (targets, paths, tensor names, messages)
may come from a hostile file.  ``shown`` applies the project's escaping
(report/escape.py: control and bidi characters as visible escapes) and also
shows what a UTF-8 page cannot hold or an HTML parser rejects: lone
surrogates (JSON allows ``"\\ud800"``) and Unicode noncharacters.  HTML and
Markdown syntax is escaped afterwards by the renderer of each format.
"""

from __future__ import annotations

import re

from ..escape import esc

_UNENCODABLE = re.compile("[\ud800-\udfff\ufdd0-\ufdef\ufffe\uffff]|[\U0001fffe-\U0010ffff]")


def _one(m: re.Match[str]) -> str:
    c = ord(m.group(0))
    if c > 0xFFFF and (c & 0xFFFE) != 0xFFFE:
        return m.group(0)  # an ordinary astral character
    return f"\\u{c:04x}" if c <= 0xFFFF else f"\\U{c:08x}"


def shown(s: str) -> str:
    """``s`` safe to put in a UTF-8 document (see the module doc)."""
    return _UNENCODABLE.sub(_one, esc(s))


def clip(s: str, n: int) -> str:
    """``s`` cut to ``n`` characters with an ellipsis (chart labels)."""
    return s if len(s) <= n else s[: n - 1] + "\u2026"
