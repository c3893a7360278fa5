"""docs/auditing.md's sweep -> report -> triage session, run verbatim.

Every ``sh`` block between the walkthrough markers is run line by line with
bash, in order, in a scratch directory whose ``fixtures`` is this
repository's (so the documented relative paths hold and nothing is written
into the checkout), with ``grit`` on PATH and 200 columns.  A ``# exit N`` comment is the
exit code the line must give (a line without one must not crash: no
traceback, exit below 5); each line of a ``text`` block must appear in the
output of the command just before it.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "auditing.md"


def walkthrough() -> list[tuple[str, str]]:
    """The (kind, body) fenced blocks between the markers, in order."""
    text = DOC.read_text("utf-8")
    start = text.index("<!-- walkthrough:")
    end = text.index("<!-- end walkthrough -->")
    return re.findall(r"^```(sh|text)\n(.*?)^```$", text[start:end], flags=re.M | re.S)


def test_the_walkthrough_runs_verbatim(tmp_path: Path) -> None:
    (tmp_path / "fixtures").symlink_to(ROOT / "fixtures")
    # a fixed width: grit explain wraps its verdict to the terminal's columns
    env = dict(os.environ, COLUMNS="200", PATH=f"{Path(sys.executable).parent}{os.pathsep}"
                                               f"{os.environ.get('PATH', '')}")
    blocks = walkthrough()
    assert [k for k, _ in blocks].count("sh") >= 5 and "text" in {k for k, _ in blocks}
    last = None
    ran: list[str] = []
    for kind, body in blocks:
        if kind == "text":
            assert last is not None, "a text block before any command"
            for line in body.splitlines():
                assert line in last.stdout.splitlines(), (ran[-1], line)
            continue
        for line in body.splitlines():
            if not line.strip():
                continue
            res = subprocess.run(["bash", "-c", line], cwd=tmp_path, env=env,
                                 capture_output=True, text=True)
            ran.append(line)
            assert "Traceback" not in res.stderr, (line, res.stderr)
            want = re.search(r"# exit (\d+)\s*$", line)
            if want:
                assert res.returncode == int(want.group(1)), (line, res.returncode, res.stderr)
            else:
                assert res.returncode < 5, (line, res.returncode, res.stderr)
            last = res
    # the pages the walkthrough makes are there, and nothing was written beside fixtures
    assert {p.name for p in tmp_path.iterdir()} == {"fixtures", "june.jsonl", "june.html",
                                                     "july.jsonl", "july.html"}
    assert "Changes since the baseline" in (tmp_path / "july.html").read_text("utf-8")
