"""Escaping of strings taken from files, at the renderer (docs/reliability.md).

Names, paths and messages come from checkpoints an attacker may have
written.  Before any of them reaches a terminal, a CI log or a viewer, every
control character (C0, DEL, C1: ESC, OSC, CR, NUL ...) and every Unicode
character that reorders or hides text (bidi embeddings, overrides and
isolates, zero-width marks, line and paragraph separators) is shown as a
Python-style escape: ``\\x1b``, ``\\u202e``.  A backslash is left alone, so
ordinary Windows-looking names stay readable; the escaped form is for
reading, and the JSON report keeps the exact name for tools.

Names and paths need not be valid Unicode: a tensor name may hold a lone
surrogate (JSON ``"\\udfff"``) and a file or directory name undecodable
bytes, which Python carries as the surrogates U+DC80..U+DCFF.  Neither can be
written as UTF-8, so both are escaped in every output: a byte as ``\\xff``,
any other surrogate as ``\\udfff`` (``text``); the JSON and SARIF documents
carry the same escape text in the string (``valid_text``), so every output
is valid in its encoding and nothing a file is named can end the report.

No line of a text report may begin (after blanks) with ``::``, which GitHub
Actions reads as a workflow command: ``no_command`` shows such a line's
first colon as ``\\x3a``, and a path starting with ``::`` is shown as
``./::...`` (``text.location``).

Suggested shell commands are built with ``shlex.quote`` by whoever writes
them (the rules); the renderer then escapes the quoted command like any other
string, so nothing a file says can become a terminal sequence or a shell
command when pasted.
"""

from __future__ import annotations

import functools
import re

# Characters never shown raw: C0 controls, DEL, C1 controls, the bidi
# formatting characters (LRM, RLM, ALM, LRE..RLO, LRI..PDI), zero-width
# characters that hide text, line/paragraph separators and the BOM.
_UNSAFE = ("[\x00-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff"
           "\ud800-\udfff]")
# Lone surrogates only: what cannot be encoded as UTF-8.
_SURROGATE = "[\ud800-\udfff]"


# Compiled on first use, not at import (start-up, issue 31: a report with
# no finding may escape nothing).
@functools.cache
def _unsafe() -> re.Pattern[str]:
    return re.compile(_UNSAFE)


@functools.cache
def _surrogate() -> re.Pattern[str]:
    return re.compile(_SURROGATE)


def _one(m: re.Match[str]) -> str:
    c = ord(m.group(0))
    if 0xDC80 <= c <= 0xDCFF:  # an undecodable byte of a file name (surrogateescape)
        return f"\\x{c - 0xDC00:02x}"
    return f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}"


def esc(s: str) -> str:
    """``s`` with every unsafe character shown as an escape (see module doc)."""
    return _unsafe().sub(_one, s)


def valid_text(s: str) -> str:
    """``s`` with every lone surrogate written as its escape text (``\\xff``
    for an undecodable file-name byte, ``\\udfff`` otherwise), so that it
    can be written as UTF-8; other characters unchanged (JSON and SARIF
    keep exact names).  ``s`` itself when it has none."""
    if _surrogate().search(s) is None:
        return s
    return _surrogate().sub(_one, s)


def has_surrogate(s: str) -> bool:
    return _surrogate().search(s) is not None


def no_command(line: str) -> str:
    """``line`` unless, after leading blanks, it begins with ``::`` (a GitHub
    Actions workflow command): then its first colon is shown as ``\\x3a``."""
    body = line.lstrip()
    if not body.startswith("::"):
        return line
    at = len(line) - len(body)
    return line[:at] + "\\x3a" + line[at + 1:]


def has_unsafe(s: str) -> bool:
    return _unsafe().search(s) is not None


def uri_path(path: str) -> str:
    """A relative path as a percent-encoded URI reference (RFC 3986): ``/``
    separators kept, everything outside the unreserved set encoded (UTF-8;
    an undecodable byte of a file name as itself, ``%FF``; any other lone
    surrogate as its UTF-8-style bytes, so a URI is always made)."""
    from urllib.parse import quote  # here: only SARIF writes URIs (start-up)

    p = path.replace("\\", "/")
    try:
        return quote(p, safe="/", errors="surrogateescape")
    except UnicodeEncodeError:
        return quote(p, safe="/", errors="surrogatepass")
