"""The third adversarial round: the gate on a stranger's pull request
(docs/reliability.md, "Threat model").  Every test here failed on the round's
start commit 7b7b45c (docs/reliability.md, "Defects of round 3 and their
tests", says how), and runs the real command line in its own process under
the hostile suite's address-space limit (limits.py), with its peak resident
memory asserted against the same 200 MB budget as the scan cases.

They use only what that commit had (the command line, ``grit_scan.scan``,
``fuzz/mutate_scan.py``'s interface), so they can be run against it with
``PYTHONPATH=<checkout of 7b7b45c>``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hostile_names import rename_tensor
from limits import AS_LIMIT, CHILD_ENV, DEFINED_EXITS

ROOT = Path(__file__).resolve().parent.parent.parent
FIX = ROOT / "fixtures"
HERE = Path(__file__).resolve().parent
RUN_CLI = str(HERE / "run_cli.py")
RSS_BUDGET_MB = 200  # test_hostile.py's per-case budget
FORMATS = ("concise", "full", "grouped", "json", "sarif", "github")
SURROGATE_NAME = "model.layers.1.self_attn.k_proj.\udfff.weight"


class Run:
    def __init__(self, p: subprocess.CompletedProcess[bytes]) -> None:
        self.returncode = p.returncode
        self.raw = p.stdout
        err = p.stderr.decode("utf-8", "replace")
        m = re.search(r"GRIT_PEAK_RSS_MB=([0-9.]+)\s*$", err)
        assert m, err[-2000:]
        self.rss = float(m.group(1))
        self.stderr = err[: m.start()]
        # the output is valid in its encoding: strict UTF-8 decodes it
        self.stdout = p.stdout.decode("utf-8")


def _limit() -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (AS_LIMIT, AS_LIMIT))


def grit(*args: str, cwd: Path | str = HERE, timeout: float = 120, stdin: Any = None,
         env: dict[str, str] | None = None) -> Run:
    """The real command line (run_cli.py) with stdout a real UTF-8 stream
    (strict: an unencodable character is an error, as on a UTF-8 CI
    runner), under the address-space limit; a defined exit, no traceback,
    peak RSS within the budget."""
    e = {**CHILD_ENV, "PYTHONIOENCODING": "utf-8", "LC_ALL": "C.UTF-8",
         "PYTHONPATH": os.pathsep.join(p for p in (os.environ.get("PYTHONPATH"),) if p)}
    e.pop("NO_COLOR", None)
    e.pop("FORCE_COLOR", None)
    e.pop("COLUMNS", None)
    if env:
        e.update(env)
    p = subprocess.run([sys.executable, RUN_CLI, *args], capture_output=True, cwd=cwd,
                       timeout=timeout, env=e, preexec_fn=_limit, stdin=stdin)
    r = Run(p)
    assert "Traceback" not in r.stderr, r.stderr[-2000:]
    assert r.returncode in DEFINED_EXITS, (r.returncode, r.stderr[-2000:])
    assert r.rss < RSS_BUDGET_MB, r.rss
    return r


def all_strings(doc: Any) -> list[str]:
    out: list[str] = []
    if isinstance(doc, str):
        out.append(doc)
    elif isinstance(doc, dict):
        for k, v in doc.items():
            out += all_strings(k) + all_strings(v)
    elif isinstance(doc, list):
        for v in doc:
            out += all_strings(v)
    return out


# ------------------------------------------------------------ 1: names that kill the report

@pytest.fixture(scope="module")
def bad_names(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """fixtures/sample with a tensor named with a lone surrogate (JSON
    ``"\\udfff"``), a directory and a file named with the byte 0xff."""
    base = tmp_path_factory.mktemp("names")
    tree = base / "sample"
    shutil.copytree(FIX / "sample", tree)
    f = tree / "llama-mxfp4" / "model.safetensors"
    rename_tensor(f, f, "model.layers.1.self_attn.k_proj.weight", SURROGATE_NAME)
    os.rename(tree / "llama-gguf", os.fsdecode(bytes(tree / "llama") + b"\xffgguf"))
    shutil.copy(tree / "half-converted" / "model.safetensors",
                os.fsdecode(bytes(tree / "half-converted") + b"/bad\xff.safetensors"))
    return base


@pytest.mark.parametrize("fmt", FORMATS)
def test_1_unencodable_names_are_escaped_in_every_format(bad_names: Path, fmt: str) -> None:
    """Every format through a real UTF-8 stdout: valid UTF-8, the names
    escaped (``\\udfff``, ``\\xff``), exit 1 as fixtures/sample's graded
    code (a structural finding), and the neighbours' findings all there
    (7b7b45c: exit 70 and an empty or cut report in five formats)."""
    r = grit("scan", "--output-format", fmt, "sample", cwd=bad_names)
    assert r.returncode == 1, r.stderr
    assert b"\xff" not in r.raw.replace("\u00ff".encode(), b"")
    assert "\udfff" not in r.stdout and "\udcff" not in r.stdout
    if fmt in ("json", "sarif"):
        doc = json.loads(r.stdout)
        for s in all_strings(doc):
            s.encode("utf-8")  # no lone surrogate survives parsing either
        text = "\n".join(all_strings(doc))
        assert "k_proj.\\udfff.weight" in text
        assert "bad\\xff.safetensors" in text or "bad%FF.safetensors" in text
        assert "llama\\xffgguf" in text or "llama%FFgguf" in text
    else:
        assert "k_proj.\\udfff.weight" in r.stdout, r.stdout[:2000]
        assert "bad\\xff.safetensors" in r.stdout and "llama\\xffgguf" in r.stdout
    # the finding on the renamed tensor and its neighbours' findings
    if fmt == "json":
        kinds = sorted((f["kind"], f["path"].rsplit("/", 2)[-2]) for f in doc["findings"])
        # a lone surrogate in a name: refused, as the safetensors library
        # refuses it, with the name escaped in the message
        assert ("file_unparseable", "llama-mxfp4") in kinds
        assert ("role_drift", "half-converted") in kinds
        assert ("gid_disagreement", "llama\\xffgguf") in kinds
        assert sum(1 for k in kinds if k[0] == "role_drift") == 4, kinds  # two files
    if fmt == "sarif":
        uris = [loc["physicalLocation"]["artifactLocation"]["uri"]
                for res in doc["runs"][0]["results"] for loc in res["locations"]]
        assert any(u.endswith("bad%FF.safetensors") for u in uris), uris


def test_1_sarif_uri_is_the_files_bytes(bad_names: Path) -> None:
    """A non-UTF-8 file name is percent-encoded byte for byte (RFC 3986):
    decoded as bytes, the URI is the file's real name."""
    import urllib.parse

    r = grit("scan", "--sarif", "sample", cwd=bad_names)
    doc = json.loads(r.stdout)
    uris = {loc["physicalLocation"]["artifactLocation"]["uri"]
            for res in doc["runs"][0]["results"] for loc in res["locations"]}
    real = {os.fsencode(p.relative_to(bad_names)) for p in (bad_names / "sample").rglob("*")}
    decoded = {urllib.parse.unquote_to_bytes(u) for u in uris}
    assert decoded <= real, decoded - real
    assert any(b"\xff" in d for d in decoded)


def test_1_fuzzer_renders_through_real_utf8_streams() -> None:
    """fuzz/mutate_scan.py renders every format into a strict UTF-8 byte
    stream (a string buffer accepts what stdout refuses)."""
    sys.path.insert(0, str(ROOT / "fuzz"))
    try:
        import mutate_scan
    finally:
        sys.path.remove(str(ROOT / "fuzz"))
    from grit_scan.api import scan

    rep = scan([str(FIX / "sample")])
    bad = rep.findings[0]
    import dataclasses

    broken = dataclasses.replace(rep, findings=[dataclasses.replace(bad, tensor="x\udfff")])
    mutate_scan.render_all(broken, 0, set())  # no exception: the name is escaped
    stream = mutate_scan.utf8_stream()
    with pytest.raises(UnicodeEncodeError):
        stream.write("\udfff")


# ------------------------------------------------------------ 3: arguments stay arguments

def _hook_command(files: list[str]) -> list[str]:
    """The command pre-commit runs for the shipped hook: entry, args, then
    the staged file names (pre-commit's own rule)."""
    import shlex

    import yaml

    hook = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())[0]
    return [*shlex.split(hook["entry"]), *hook.get("args", []), *files]


def test_3_hook_file_names_are_never_options(tmp_path: Path) -> None:
    """Staged files named ``--output-file=real.safetensors`` and
    ``-rf.safetensors``: the shipped hook scans them as files and writes
    nothing (7b7b45c: the report overwrote real.safetensors; ``-rf`` gave
    exit 64 and no scan)."""
    real = tmp_path / "real.safetensors"
    shutil.copy(FIX / "sample/llama-mxfp4/model.safetensors", real)
    before = real.read_bytes()
    for name in ("--output-file=real.safetensors", "-rf.safetensors"):
        shutil.copy(real, tmp_path / name)
    for staged in (["--output-file=real.safetensors"], ["-rf.safetensors"]):
        cmd = _hook_command(staged)
        assert cmd[:2] == ["grit", "scan"]
        r = grit(*cmd[1:], cwd=tmp_path)
        assert real.read_bytes() == before
        # the model (the directory) was scanned: its size_mismatch, exit 1
        assert r.returncode == 1, (cmd, r.returncode, r.stderr)
        assert f"{staged[0]}::model.layers.1.self_attn.k_proj.weight: GRIT101" in r.stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "--output-file=real.safetensors", "-rf.safetensors", "real.safetensors"]


def test_3_report_is_never_written_over_a_scanned_file(tmp_path: Path) -> None:
    """``--output-file`` naming a file the scan reads (directly or through a
    link) is refused, the file untouched (7b7b45c overwrote the checkpoint
    with its own report); a new file beside it is written as before."""
    m = tmp_path / "m.safetensors"
    shutil.copy(FIX / "sample/llama-mxfp4/model.safetensors", m)
    before = m.read_bytes()
    (tmp_path / "link").symlink_to("m.safetensors")
    for target in ("m.safetensors", "link"):
        r = grit("scan", "--output-file", target, ".", cwd=tmp_path)
        assert r.returncode == 64 and "which this scan read" in r.stderr, r.stderr
        assert m.read_bytes() == before
    r = grit("scan", "--output-file", "report.txt", ".", cwd=tmp_path)
    assert r.returncode == 1 and "GRIT101" in (tmp_path / "report.txt").read_text()


def test_3_options_given_as_file_names_are_refused(tmp_path: Path) -> None:
    """An option that lands after the hook's ``--`` (a user's ``args:``) is
    a usage error naming it, never silently dropped."""
    shutil.copy(FIX / "sample/llama-mxfp4/model.safetensors", tmp_path / "m.safetensors")
    r = grit("scan", "--changed", "--", "--fail-on", "structural", "m.safetensors",
             cwd=tmp_path)
    assert r.returncode == 64 and "'--fail-on' is not a file" in r.stderr, r.stderr


def _repo_with_outside(tmp_path: Path) -> tuple[Path, Path]:
    outside = tmp_path / "outside"
    shutil.copytree(FIX / "sample" / "llama-mxfp4", outside / "m")
    repo = tmp_path / "repo"
    repo.mkdir()
    return repo, outside


def test_3_changed_does_not_follow_a_staged_symlinked_directory(tmp_path: Path) -> None:
    """A staged path through a symlinked directory to a model outside the
    repository: not read, and said on stderr (7b7b45c scanned the outside
    model: its size_mismatch in the report)."""
    repo, outside = _repo_with_outside(tmp_path)
    (repo / "link").symlink_to(outside / "m")
    r = grit("scan", "--changed", "--json", "--", "link/model.safetensors", cwd=repo)
    assert "link/model.safetensors: not scanned" in r.stderr, r.stderr
    assert r.returncode == 0 and "size_mismatch" not in r.stdout
    plain = grit("scan", "--json", ".", cwd=repo)  # what `grit scan .` does with it
    assert "size_mismatch" not in plain.stdout


def test_3_changed_does_not_follow_a_symlinked_manifest(tmp_path: Path) -> None:
    """A staged grit-manifest.json that is a symlink to a manifest outside
    the repository is not read (7b7b45c read it and the files it lists)."""
    repo, outside = _repo_with_outside(tmp_path)
    (outside / "m" / "grit-manifest.json").write_text(json.dumps(
        {"grit_manifest": 1, "artifacts": [{"path": "model.safetensors", "tensors": {}}]}))
    (repo / "grit-manifest.json").symlink_to(outside / "m" / "grit-manifest.json")
    r = grit("scan", "--changed", "--json", "--", "grit-manifest.json", cwd=repo)
    assert "grit-manifest.json: not scanned" in r.stderr, r.stderr
    assert "size_mismatch" not in r.stdout and r.returncode == 0


def test_3_changed_still_follows_links_inside_the_repository(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    shutil.copytree(FIX / "sample" / "llama-mxfp4", repo / "real")
    (repo / "link").symlink_to("real")
    r = grit("scan", "--changed", "--json", "--", "link/model.safetensors", cwd=repo)
    assert r.returncode == 1 and "size_mismatch" in r.stdout, r.stderr


@pytest.mark.parametrize("fmt", ["concise", "full", "grouped"])
def test_3_no_text_line_begins_with_a_workflow_command(tmp_path: Path, fmt: str) -> None:
    """A directory named ``::error::dir`` and a tensor named
    ``::warning::x``: no line of a text report begins, after blanks, with
    ``::`` (GitHub Actions trims leading blanks and runs it as a workflow
    command; 7b7b45c printed ``::error::dir/...`` at the start of a line)."""
    d = tmp_path / "::error::dir"
    shutil.copytree(FIX / "sample" / "llama-mxfp4", d)
    f = d / "model.safetensors"
    rename_tensor(f, f, "model.layers.1.self_attn.k_proj.weight", "::warning::x")
    r = grit("scan", "--output-format", fmt, ".", cwd=tmp_path)
    r2 = grit("scan", "--output-format", fmt, "::error::dir", cwd=tmp_path)
    for out in (r.stdout, r2.stdout):
        lines = out.splitlines()
        assert not [x for x in lines if x.lstrip().startswith("::")], out
        assert any("::error::dir" in x for x in lines)  # the path is still shown
    if fmt == "concise":
        assert "./::error::dir/model.safetensors::::warning::x: GRIT101" in r2.stdout


def test_3_suggested_explain_command_runs_with_colons_in_names(tmp_path: Path) -> None:
    """Two exports of one tensor named ``::w::q.weight`` that disagree on k0
    (the same scheme, e2m1/e8m0 groups, so they are compared): the
    suggested ``grit explain`` command, run as printed, explains them
    (7b7b45c split FILE::TENSOR at the last ``::``: "no such file")."""
    import shlex

    import numpy as np

    from grit_scan.codec import grade as G
    from grit_scan.codec.encode import encode
    from grit_scan.writers import GritTensor, write_grit_safetensors

    v = np.random.default_rng(27).standard_normal((16, 128)).astype(np.float32)
    g64 = G.parse_grade("grit1(e=e2m1,k0=64,s0=e8m0,esr=exp2floormaxabs)")
    for d, g in (("a", G.GRADE_MXFP4), ("b", g64)):
        (tmp_path / "sample" / d).mkdir(parents=True)
        write_grit_safetensors(str(tmp_path / "sample" / d / "model.safetensors"),
                               [GritTensor.from_encoded("::w::q.weight", encode(v, g, 1), g)])
    rep = json.loads(grit("scan", "--json", "sample", cwd=tmp_path).stdout)
    cmds = [f["detail"]["suggested_fix"] for f in rep["findings"]
            if str(f["detail"].get("suggested_fix", "")).startswith("grit explain")]
    assert cmds, [f["kind"] for f in rep["findings"]]
    for cmd in cmds:
        argv = shlex.split(cmd)
        assert argv[:2] == ["grit", "explain"] and sum("::w::q.weight" in a for a in argv) == 2
        r = grit(*argv[1:], cwd=tmp_path)
        assert r.returncode == 1, r.stderr  # docs/exit-codes.md: the operands differ
        assert "A = sample/" in r.stdout and "::::w::q.weight" in r.stdout


# ------------------------------------------------------------ 2: config cannot switch the gate off

GATE_OFF = 'ignore = ["GRIT1", "GRIT2", "GRIT3", "GRIT4"]\n'


def test_2_config_inside_the_scanned_tree_is_never_applied(tmp_path: Path) -> None:
    """A grit.toml ignoring every code and a pyproject.toml ignoring
    everything on every path, both inside the scanned directory (below the
    project root, the working directory): neither applies, the broken model
    still exits 1 (7b7b45c: exit 0, "No findings")."""
    proj = tmp_path / "proj"
    shutil.copytree(FIX / "sample", proj / "models")
    (proj / "models" / "llama-mxfp4" / "grit.toml").write_text(GATE_OFF)
    (proj / "models" / "pyproject.toml").write_text(
        '[tool.grit.per-path-ignores]\n"*" = ["GRIT1", "GRIT2", "GRIT3", "GRIT4"]\n')
    for target in ("models", "models/llama-mxfp4"):
        r = grit("scan", "--json", target, cwd=proj)
        doc = json.loads(r.stdout)
        assert r.returncode == 1, doc["summary"]
        assert "size_mismatch" in {f["kind"] for f in doc["findings"]}
        assert doc["summary"]["ignored"] == []


def test_2_findings_hidden_by_config_are_counted(tmp_path: Path) -> None:
    """The project's own grit.toml may ignore; the report then says what it
    hid, in text and JSON (7b7b45c: nothing).  fixtures/sample has 7
    findings (README): size_mismatch on llama-mxfp4, and on llama-gguf a
    gid_disagreement, an artifact_drift and an unregistered_grade."""
    shutil.copytree(FIX / "sample", tmp_path / "sample")
    (tmp_path / "grit.toml").write_text(
        'ignore = ["size_mismatch"]\n[per-path-ignores]\n"sample/llama-gguf/*" = ["GRIT2", '
        '"GRIT3"]\n')
    r = grit("scan", "sample", cwd=tmp_path)
    assert "1 finding ignored by grit.toml: 1 size_mismatch" in r.stdout, r.stdout
    assert ("3 findings ignored by grit.toml: 1 artifact_drift, 1 gid_disagreement, "
            "1 unregistered_grade") in r.stdout, r.stdout
    doc = json.loads(grit("scan", "--json", "sample", cwd=tmp_path).stdout)
    assert doc["summary"]["ignored"] == [
        {"by": "grit.toml", "count": 1, "kinds": {"size_mismatch": 1}},
        {"by": "grit.toml", "count": 3, "kinds": {"artifact_drift": 1, "gid_disagreement": 1,
                                                  "unregistered_grade": 1}}]
    assert len(doc["findings"]) == 7 - 4
    # the command line's own --select is counted the same way
    r = grit("scan", "--isolated", "--select", "size_mismatch", "sample", cwd=tmp_path)
    assert "6 findings ignored by --select:" in r.stdout, r.stdout
    assert r.returncode == 1


def test_2_shipped_workflow_reads_no_config_from_the_checkout(tmp_path: Path) -> None:
    """The workflow's scan step, run as GitHub runs it, in a checkout whose
    grit.toml ignores everything: the gate still fails on the broken model
    (7b7b45c read the pull request's grit.toml: status 0)."""
    import yaml

    wf = yaml.safe_load((ROOT / ".github" / "workflows" / "grit-scan.yml").read_text())
    step = next(s for s in wf["jobs"]["scan"]["steps"] if "grit scan" in s.get("run", ""))
    repo = tmp_path / "repo"
    shutil.copytree(FIX / "sample" / "llama-mxfp4", repo / "models")
    r = grit("manifest", "--allow-findings", "--out", "grit-manifest.json", "models", cwd=repo)
    assert r.returncode == 0, r.stderr
    (repo / "grit.toml").write_text(GATE_OFF)
    (repo / "pyproject.toml").write_text('[tool.grit]\nfail-on = ["warning"]\n')
    genv = tmp_path / "github_env"
    genv.write_text("")
    bindir = str(Path(sys.executable).parent)
    e = {**CHILD_ENV, "GITHUB_ENV": str(genv), "GRIT_DEEP": "false",
         "GRIT_FAIL_ON": "structural,disagreement",
         "PATH": bindir + os.pathsep + os.environ.get("PATH", "")}
    p = subprocess.run(["bash", "-e", "-c", step["run"]], cwd=repo, env=e, capture_output=True,
                       text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert genv.read_text().strip() == "GRIT_STATUS=1", genv.read_text()
    assert "size_mismatch" in (repo / "grit.sarif").read_text()


# ------------------------------------------------------------ 6: config limits

def _config_case(tmp_path: Path, case: str) -> tuple[list[str], str]:
    """(extra options, what the one error line must say) for a hostile config."""
    shutil.copytree(FIX / "sample" / "llama-mxfp4", tmp_path / "m")
    cfg = tmp_path / "grit.toml"
    if case == "nested_inline_tables":
        n = 200_000
        cfg.write_text("x=" + "{a=" * n + "1" + "}" * n + "\n")  # 800 KB
        return [], "config_depth budget"
    if case == "nested_table_header":
        cfg.write_text("[" + ".".join(["a"] * 200_000) + "]\n")
        return [], "config_depth budget"
    if case == "dev_zero":
        return ["--config", "/dev/zero"], "not a regular file"
    if case == "fifo_config":
        os.mkfifo(tmp_path / "fifo.toml")
        return ["--config", str(tmp_path / "fifo.toml")], "not a regular file"
    if case == "fifo_discovered":
        os.mkfifo(cfg)
        return [], "not a regular file"
    if case == "30_mb":
        with open(cfg, "w") as f:
            line = "# " + "x" * 1000 + "\n"
            for _ in range(30_000):
                f.write(line)
            f.write('ignore = ["GRIT1"]\n')
        return [], "config_file_bytes budget"
    if case == "40000_globs":
        cfg.write_text("[per-path-ignores]\n" + "".join(
            f'"p{i}/*" = ["GRIT3"]\n' for i in range(40_000)))
        return [], "config_patterns budget"
    raise AssertionError(case)


@pytest.mark.parametrize("case", ["nested_inline_tables", "nested_table_header", "dev_zero",
                                  "fifo_config", "fifo_discovered", "30_mb", "40000_globs"])
def test_6_hostile_config_is_one_usage_line(tmp_path: Path, case: str) -> None:
    """Each exits 64 with one line naming the file and what refused it,
    within the memory budget, before any scanning (7b7b45c: exit 70 from a
    RecursionError or a MemoryError at 1.45 GB, a FIFO hung, 30 MB took
    766 MB, 40,000 globs were accepted and matched against every finding).
    The timeout is a hang guard only."""
    extra, needle = _config_case(tmp_path, case)
    r = grit("scan", *extra, "m", cwd=tmp_path, timeout=60)
    assert r.returncode == 64, (r.returncode, r.stderr[-500:])
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0], r.stderr[-500:]
    assert ("grit.toml" in lines[0] or "fifo.toml" in lines[0] or "/dev/zero" in lines[0])
    assert r.stdout == ""


# ------------------------------------------------------------ 7: round-2 leftovers

def _desc_hex() -> str:
    """An MXFP4 descriptor, from the committed sample's __grit__ table."""
    import struct

    raw = (FIX / "sample/llama-mxfp4/model.safetensors").read_bytes()
    head = json.loads(raw[8:8 + struct.unpack("<Q", raw[:8])[0]])
    return str(next(iter(json.loads(head["__metadata__"]["__grit__"])["tensors"].values()))
               ["desc"])


def test_7_check_with_300_extents_is_a_usage_error() -> None:
    """300 extents of 2^63 - 32 (each a multiple of k0): their product has
    about 5,700 digits, past Python's int-to-string limit (7b7b45c: exit
    70); now one usage line, exit 64."""
    shape = ",".join([str((1 << 63) - 32)] * 300)
    r = grit("check", "--desc", _desc_hex(), "--shape", shape, "--plane-bytes", "1,1,1,1")
    assert r.returncode == 64, (r.returncode, r.stderr)
    assert "300 extents whose product exceeds int64" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


def test_7_check_refuses_dev_zero_as_payload() -> None:
    """--payload-file /dev/zero (7b7b45c: MemoryError at the limit, exit
    70): not a regular file, exit 64."""
    r = grit("check", "--desc", _desc_hex(), "--shape", "64", "--payload-file", "/dev/zero",
             timeout=60)
    assert r.returncode == 64 and "not a regular file" in r.stderr, r.stderr


def test_7_check_refuses_a_fifo_as_payload(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    r = grit("check", "--desc", _desc_hex(), "--shape", "64", "--payload-file", str(fifo),
             timeout=60)
    assert r.returncode == 64 and "not a regular file" in r.stderr, r.stderr


def test_7_json_report_is_bounded_like_the_grouped_text(tmp_path: Path) -> None:
    """An index naming 30,000 missing shards: every one is counted (exit
    1, summary 30,000 structural), the document lists 100 and groups the
    rest with its count and first names (7b7b45c: 13 MB, 30,000 findings)."""
    d = tmp_path / "m"
    d.mkdir()
    (d / "model.safetensors.index.json").write_text(json.dumps(
        {"metadata": {}, "weight_map": {f"t{i}": f"s{i}.safetensors" for i in range(30_000)}}))
    r = grit("scan", "--json", str(d))
    doc = json.loads(r.stdout)
    assert r.returncode == 1
    assert doc["summary"]["findings"]["structural"] == 30_000
    assert len(doc["findings"]) == 100
    (g,) = doc["findings_grouped"]
    assert (g["kind"], g["count"], len(g["first"])) == ("missing_shard", 29_900, 50)
    assert len(r.raw) < 2_000_000  # the index itself is 1 MB; its shard list is kept


def _gguf(path: Path, tensors: list[tuple[str, Any]], kv: tuple[tuple[str, int], ...] = ()
          ) -> Path:
    """A GGUF written by gguf-py, llama.cpp's own Python writer."""
    import gguf

    w = gguf.GGUFWriter(str(path), "llama")
    for k, v in kv:
        w.add_uint32(k, v)
    for n, a in tensors:
        w.add_tensor(n, a)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path


@pytest.mark.parametrize("case", ["name_64_bytes", "five_dims", "unaligned_offset"])
def test_7_gguf_llama_cpp_refuses(tmp_path: Path, case: str) -> None:
    """What llama.cpp's gguf.cpp rejects (research: gguf-ggml-internals.md,
    "Checks in gguf.cpp HEAD": names < 64 bytes, n_dims <= 4, offsets on the
    alignment) is a structural finding that says so (7b7b45c: a 64-byte
    name passed clean, the others did not say llama.cpp refuses them)."""
    import numpy as np

    z = np.zeros(8, np.float32)
    if case == "name_64_bytes":
        f = _gguf(tmp_path / "a.gguf", [("a" * 64, z), ("ok", z)])
    elif case == "five_dims":
        f = _gguf(tmp_path / "a.gguf", [("x", np.zeros((1, 1, 1, 2, 8), np.float32))])
    else:  # laid out at 32, declared 64: the second tensor's offset 32 is off it
        f = _gguf(tmp_path / "a.gguf", [("a", z), ("b", z)], kv=(("general.alignment", 64),))
    r = grit("scan", "--json", str(f))
    doc = json.loads(r.stdout)
    msgs = [x["message"] for x in doc["findings"] if x["kind"] == "file_unparseable"]
    assert any("llama.cpp refuses to load this file" in m for m in msgs), doc["findings"]
    # graded: a file we still parsed exits 1, one we could not read at all 4
    assert r.returncode == (1 if case == "name_64_bytes" else 4)
