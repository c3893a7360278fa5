"""Which relative paths of an index or manifest would leave their directory
(parsers/index.py ``escapes``): every reason, and names that stay inside.
The drive test is Windows' own path rules (``ntpath.splitdrive``), so a
Linux scan refuses what a Windows loader would read from another drive."""

import pytest

from grit_scan.parsers.index import escapes


@pytest.mark.parametrize(("rel", "why"), [
    ("", "an empty path"),
    ("a\x00b.safetensors", "a NUL byte in the path"),
    ("/etc/passwd", "an absolute path"),
    ("\\\\?\\C:\\x.safetensors", "an absolute path"),
    ("//server/share/x.safetensors", "an absolute path"),
    ("C:x.safetensors", "a drive-qualified path"),
    ("z:/x.safetensors", "a drive-qualified path"),
    ("1:x.safetensors", "a drive-qualified path"),  # Windows reads a drive (or a stream)
    ("a/../../b.safetensors", "a '..' component"),
    ("..\\b.safetensors", "a '..' component"),
    ("sub\\b.safetensors", "a backslash (a Windows path separator)"),
    ("model-00001-of-00002.safetensors", None),
    ("sub/dir/b.safetensors", None),
    ("a..b/c:d.safetensors", None),  # '..' inside a name, a colon after the first two
])
def test_escapes(rel: str, why: str | None) -> None:
    assert escapes(rel) == why
