"""`grit show` on every hostile case of the scan's catalogue (cases.py):
never a traceback, a defined exit (0 shown, 1 some file not read, 4 nothing
read), no raw escape in the text, valid JSON, and output in proportion to
the input.  All cases run in one child process (run_show.py) under the
suite's address-space limit."""

from __future__ import annotations

import json
import os

from limits import run_limited

HERE = os.path.dirname(os.path.abspath(__file__))

# The output may be this many times the input, plus a constant (the
# table's headings and a hostile name's escapes, four characters a byte).
PER_INPUT_BYTE = 6
CONSTANT = 64 * 1024


def test_show_survives_every_hostile_case() -> None:
    p = run_limited([os.path.join(HERE, "run_show.py")], timeout=900, cwd=HERE)
    assert p.returncode == 0, p.stderr[-3000:]
    rows = [json.loads(x) for x in p.stdout.splitlines()]
    assert len(rows) >= 100
    for row in rows:
        assert "error" not in row, (row["case"], row.get("error"))
        for mode in ("text", "json"):
            got = row[mode]
            assert got["rc"] in (0, 1, 4), (row["case"], mode, got)
            assert not got["traceback"] and not got["raw_escape"], (row["case"], mode)
            assert got["bytes"] <= PER_INPUT_BYTE * row["input"] + CONSTANT, (
                row["case"], mode, got["bytes"], row["input"])
