"""Issue 16's defects that are not one `grit scan --json DIR` case (those are
the ``i16_*`` cases in cases.py): --deep, other commands, the escaping of
names in every output, and checks that need a spy on ``os.open``.

Each test failed on the issue's base commit 7c46b23; docs/reliability.md
("Defects of issue 16 and their tests") records how.  They use only what
that commit had too (the command line, ``grit_scan.scan``, ``os.open``,
``os.pread``, ``tree.Walker.walk``), so they can be run against it; the
few that import a newer module say so.  Commands run in their own process
under the hostile suite's address-space limit (limits.py) with a timeout,
so a hang or an allocation out of proportion fails fast.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import struct
import subprocess
import urllib.parse
from collections.abc import Callable
from pathlib import Path

import pytest
from hostile_names import ESC_NAME, RAW, SHELL, hostile_tree
from limits import DEFINED_EXITS, run_limited

from grit_scan.cli import main

ROOT = Path(__file__).resolve().parent.parent.parent
FIX = ROOT / "fixtures"
SHARD = FIX / "broken/sharded-ok/model-00001-of-00002.safetensors"


HERE = os.path.dirname(os.path.abspath(__file__))
RUNNER = os.path.join(HERE, "run_scan.py")


def grit(*args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    """`python -m grit_scan ARGS` under the address-space limit.  It runs
    in this directory: -m puts the working directory first on sys.path, and
    a checkout's own grit_scan/ must not shadow the installed package."""
    p = run_limited(["-m", "grit_scan", *args], timeout=timeout, cwd=HERE)
    assert p.returncode in DEFINED_EXITS, (p.returncode, p.stderr[-2000:])
    assert "Traceback" not in p.stderr, p.stderr[-2000:]
    return p


def scan_json(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict]:
    """`grit scan --json ARGS` in this process (for the tests that spy)."""
    rc = main(["scan", "--json", *args])
    return rc, json.loads(capsys.readouterr().out)


def spy_opens(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, int]]:
    """(device, inode) of every descriptor os.open returns from now on:
    what was really opened, whatever name it was opened by."""
    seen: list[tuple[int, int]] = []
    real_open = os.open

    def spy(path, flags, *a, **k):  # type: ignore[no-untyped-def]
        fd = real_open(path, flags, *a, **k)
        st = os.fstat(fd)
        seen.append((st.st_dev, st.st_ino))
        return fd

    monkeypatch.setattr(os, "open", spy)
    return seen


def ident(p: Path) -> tuple[int, int]:
    st = os.stat(p)
    return st.st_dev, st.st_ino


def after_collect(monkeypatch: pytest.MonkeyPatch, then: Callable[[], None]) -> None:
    """Run ``then`` once the scan has read every header and before the rules
    (--deep) run: between the two passes over the files."""
    from grit_scan import api

    # 7c46b23 imported collect into api; it is reached as api.tree.collect now
    owner = api if hasattr(api, "collect") else api.tree
    real = owner.collect

    def collect_then(*args, **kwargs):  # type: ignore[no-untyped-def]
        data = real(*args, **kwargs)
        then()
        return data

    monkeypatch.setattr(owner, "collect", collect_then)


def findings_on(rep: dict, name: str) -> list[tuple[str, str]]:
    return [(f["kind"], f["message"]) for f in rep["findings"]
            if name in f["path"] or name in f["message"]]


# ------------------------------------------------------------ 2a, 2d: budgets in-process

def test_2a_layer_count_does_not_size_the_name_map(monkeypatch):
    """name_map_layers: gguf's tensor-name map is built for one layer and a
    name's layer number substituted, whatever num_hidden_layers says
    (7c46b23 built it for all of them: 4 GB, 66 s for 100,000; the scan
    case is i16_config_100000_layers)."""
    from grit_scan.parsers import gguf_constants, gguf_tables, roles

    sizes: list[int] = []
    # the module roles builds its map with (gguf's tensor_mapping)
    mapping = gguf_constants.tensor_mapping()
    real = mapping.get_tensor_name_map

    def spy(arch, n_blocks):  # type: ignore[no-untyped-def]
        sizes.append(n_blocks)
        return real(arch, min(n_blocks, 4))  # never the 4 GB map, even on the old code

    monkeypatch.setattr(mapping, "get_tensor_name_map", spy)
    # gguf's own map is spied on here; the shipped table (gguf_tables.py) is
    # gguf's map for one layer (tests/test_gguf_tables.py)
    monkeypatch.setattr(gguf_tables, "current", lambda: None)
    roles._name_map.cache_clear()
    role = roles.role_function("llama", 100_001)
    # the map is built when the first name is mapped
    assert role("model.layers.17.mlp.down_proj.weight") == "blk.17.ffn_down.weight"
    assert role("model.embed_tokens.weight") == "token_embd.weight"
    roles._name_map.cache_clear()
    assert sizes and max(sizes) <= 1, sizes  # the name_map_layers budget


def test_2d_backtracking_patterns_are_refused():
    """pattern_chars / pattern_open_repeats: a re: pattern that could
    backtrack without bound matches nothing and says which budget refused
    it (grit_scan.names is newer than 7c46b23; the scan cases are
    i16_regex_nested_quantifier and i16_regex_open_repeats)."""
    from grit_scan.names import pattern_matches, pattern_refused

    assert "pattern_chars budget" in pattern_refused("re:(a+)+b")
    assert "pattern_chars budget" in pattern_refused("re:(a|aa)*b")
    assert "pattern_open_repeats budget" in pattern_refused("re:.*a.*a.*b")
    assert not pattern_matches("re:(a+)+b", "a" * 40)
    assert pattern_refused("re:.*lm_head") is None
    assert pattern_matches("re:.*lm_head", "model.lm_head")


# ------------------------------------------------------------ 2b: the index check is linear

def _missing_shards_scan(d: Path, n: int) -> float:
    d.mkdir()
    wm = {f"t{i}": f"s{i}.safetensors" for i in range(n)}
    (d / "model.safetensors.index.json").write_text(json.dumps({"weight_map": wm}))
    p = run_limited([RUNNER, str(d)], cwd=HERE)
    assert p.returncode == 1, p.stderr[-2000:]  # missing_shard is structural
    res = json.loads(p.stdout.strip().splitlines()[-1])
    rep = res["report"]  # --json lists 100 of one kind on one file and groups the rest
    assert sum(f["kind"] == "missing_shard" for f in rep["findings"]) + sum(
        g["count"] for g in rep.get("findings_grouped", []) if g["kind"] == "missing_shard") == n
    return float(res["cpu_seconds"])


def test_2b_index_check_time_grows_linearly_with_missing_shards(tmp_path):
    """7c46b23's check was O(N^2) in missing shards (50k: 78 s).  Ten times
    the shards must cost well under 100 times the time: the ratio, not a
    wall-clock limit, so a loaded machine does not decide it (linear: about
    10x; the base commit: over 40x at these sizes)."""
    small = _missing_shards_scan(tmp_path / "small", 4_000)
    large = _missing_shards_scan(tmp_path / "large", 40_000)
    assert large < 25 * small + 2.0, (small, large)


# ------------------------------------------------------------ 2f: --deep on a sparse file

def test_2f_deep_does_not_read_a_sparse_file(tmp_path):
    """deep_sparse_ratio: a file whose apparent size is far beyond its
    allocated blocks gets a finding naming the budget instead of a read of
    its zeros (7c46b23 read them all: 42 minutes for 1.17 TB)."""
    n = 100 * 1024 * 1024  # a 400 MB F32 tensor, never written
    hdr = json.dumps({"w": {"dtype": "F32", "shape": [n], "data_offsets": [0, 4 * n]}}).encode()
    p = tmp_path / "sparse.safetensors"
    with open(p, "wb") as fh:
        fh.write(struct.pack("<Q", len(hdr)) + hdr)
        fh.truncate(8 + len(hdr) + 4 * n)
    if os.stat(p).st_blocks * 512 * 16 >= os.path.getsize(p):
        pytest.skip("this filesystem does not keep sparse files sparse")
    shallow = grit("scan", "--json", str(p))
    assert shallow.returncode == 0 and not json.loads(shallow.stdout)["findings"]
    deep = grit("scan", "--deep", "--json", str(p))
    rep = json.loads(deep.stdout)
    assert [(f["kind"], "deep_sparse_ratio budget" in f["message"])
            for f in rep["findings"]] == [("file_unparseable", True)], rep["findings"]
    assert deep.returncode == 1  # §13: a broken file among parsed ones


# ------------------------------------------------------------ 3a: manifest-listed symlink

def test_3a_manifest_listed_symlink_to_outside_is_not_opened(tmp_path, monkeypatch, capsys):
    """A manifest listing an in-tree symlink whose target is outside the
    scanned tree: a path_escape finding, and no descriptor on the outside
    file (7c46b23 opened and read it)."""
    outside = tmp_path / "outside"
    outside.mkdir()
    secret = outside / "secret.safetensors"
    shutil.copy(SHARD, secret)
    root = tmp_path / "root"
    root.mkdir()
    shutil.copy(FIX / "broken/sharded-ok/model-00002-of-00002.safetensors", root / "ok.safetensors")
    (root / "link.safetensors").symlink_to(Path("..") / "outside" / "secret.safetensors")
    (root / "grit-manifest.json").write_text(json.dumps({"grit_manifest": 1, "artifacts": [
        {"path": "link.safetensors", "tensors": {}}]}))
    opened = spy_opens(monkeypatch)
    rc, rep = scan_json(capsys, str(root))
    assert ident(secret) not in opened
    assert any(k == "path_escape" for k, _ in findings_on(rep, "link.safetensors")), rep["findings"]
    assert rc == 1  # path_escape is structural: exit 1 (docs/exit-codes.md)


# ------------------------------------------------------------ 3b: --deep re-checks the file

def test_3b_deep_refuses_a_file_swapped_for_an_outside_symlink(tmp_path, monkeypatch, capsys):
    """Between the header pass and --deep, a shard is replaced by a symlink
    to a file outside the tree (same bytes): --deep reports it and never
    opens the outside file (7c46b23 reopened by name and read it, no
    finding)."""
    d = tmp_path / "m"
    shutil.copytree(FIX / "broken" / "digest-mismatch", d)
    victim = next(d.glob("*.safetensors"))
    outside = tmp_path / "outside.safetensors"

    def swap() -> None:
        shutil.copy(victim, outside)
        victim.unlink()
        victim.symlink_to(outside)

    after_collect(monkeypatch, swap)
    opened = spy_opens(monkeypatch)
    rc, rep = scan_json(capsys, "--deep", str(d))
    assert ident(outside) not in opened
    kinds = [k for k, _ in findings_on(rep, victim.name)]
    assert "digest_mismatch" not in kinds  # its bytes were never read
    assert "file_unparseable" in kinds, rep["findings"]
    assert rc == 1  # file_unparseable is structural (docs/exit-codes.md)


def test_3b_deep_refuses_a_file_replaced_after_its_header_was_read(tmp_path, monkeypatch,
                                                                   capsys):
    """The same bytes under the same name but another inode: not the file
    whose header was read, so --deep reads nothing from it."""
    d = tmp_path / "m"
    shutil.copytree(FIX / "broken" / "digest-mismatch", d)
    victim = next(d.glob("*.safetensors"))

    def swap() -> None:
        spare = tmp_path / "spare"
        shutil.copy(victim, spare)
        os.replace(spare, victim)  # same bytes and size, another inode

    after_collect(monkeypatch, swap)
    rc, rep = scan_json(capsys, "--deep", str(d))
    found = findings_on(rep, victim.name)
    assert "digest_mismatch" not in [k for k, _ in found]
    assert [k for k, m in found if "not the file whose header was read" in m] == [
        "file_unparseable"], found


def test_3b_deep_reports_a_file_growing_while_read(tmp_path, monkeypatch, capsys):
    """A file appended to while --deep reads its tensor bytes is reported as
    changed (7c46b23 gave no finding)."""
    d = tmp_path / "m"
    shutil.copytree(FIX / "sample" / "llama-mxfp4", d)
    victim = d / "model.safetensors"
    n = struct.unpack("<Q", victim.read_bytes()[:8])[0]
    data_start = 8 + n
    vid = ident(victim)
    real_pread = os.pread
    grown = []

    def pread_then_grow(fd, size, offset):  # type: ignore[no-untyped-def]
        data = real_pread(fd, size, offset)
        st = os.fstat(fd)
        if offset >= data_start and (st.st_dev, st.st_ino) == vid and not grown:
            with open(victim, "ab") as f:  # another process appends
                f.write(b"\0" * 64)
            grown.append(offset)
        return data

    monkeypatch.setattr(os, "pread", pread_then_grow)
    rc, rep = scan_json(capsys, "--deep", str(d))
    assert grown, "--deep never read the tensor bytes"
    assert any("changed while being read" in m and "--deep" in m
               for _, m in findings_on(rep, "model.safetensors")), rep["findings"]
    assert rc == 1  # a file_unparseable finding is structural (docs/exit-codes.md)


# ------------------------------------------------------------ 3d: unreadable directory

def test_3d_unreadable_directory_is_a_finding(tmp_path, monkeypatch, capsys):
    """A directory that cannot be listed (chmod 000; simulated, as root can
    list anything) is a file_unparseable finding and exit 1, as an
    unreadable file or a FIFO is (7c46b23: a "Skipped" note and exit 0)."""
    shutil.copy(SHARD, tmp_path / "good.safetensors")
    locked = tmp_path / "locked"
    locked.mkdir()
    real_scandir = os.scandir

    def scandir(path):  # type: ignore[no-untyped-def]
        if os.path.basename(os.fspath(path)) == "locked":
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    rc, rep = scan_json(capsys, str(tmp_path))
    assert ("file_unparseable" in [k for k, _ in findings_on(rep, "locked")]), rep["findings"]
    assert rc == 1


# ------------------------------------------------------------ 4b, 4c: encode and decode

def _desc_hex() -> str:
    """An MXFP4 descriptor, from the committed sample's __grit__ table."""
    raw = (FIX / "sample/llama-mxfp4/model.safetensors").read_bytes()
    head = json.loads(raw[8:8 + struct.unpack("<Q", raw[:8])[0]])
    grit_table = json.loads(head["__metadata__"]["__grit__"])
    return str(next(iter(grit_table["tensors"].values()))["desc"])


def test_4b_encode_refuses_an_overflowing_shape(tmp_path):
    """3 x 6148914691236517206 wraps to 2 in int64 (7c46b23: exit 70); now one
    usage line with the exact element count, exit 64, nothing written."""
    values = tmp_path / "v.f32"
    values.write_bytes(b"\0" * 8)
    p = grit("encode", "--grade", "mxfp4", "--shape", "3,6148914691236517206",
             "--input", str(values), "--out", str(tmp_path / "o"), timeout=30)
    assert p.returncode == 64, p.stderr
    assert "18,446,744,073,709,551,618 elements" in p.stderr  # 3 * 6148914691236517206
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("what", ["encode_fifo", "decode_fifo", "decode_dev_zero"])
def test_4c_codec_inputs_must_be_regular_files(tmp_path, what):
    """A FIFO as --input or --payload-file hung 7c46b23 (here: the 20 s
    timeout) and /dev/zero ran it out of memory (here: the 500 MB limit);
    each is now one usage line, exit 64."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    argv = {
        "encode_fifo": ["encode", "--grade", "mxfp4", "--shape", "32", "--input", str(fifo),
                        "--out", str(tmp_path / "o")],
        "decode_fifo": ["decode", "--desc", _desc_hex(), "--shape", "32",
                        "--payload-file", str(fifo)],
        "decode_dev_zero": ["decode", "--desc", _desc_hex(), "--shape", "32",
                            "--payload-file", "/dev/zero"],
    }[what]
    p = grit(*argv, timeout=20)
    assert p.returncode == 64, (p.returncode, p.stderr)
    assert "not a regular file" in p.stderr
    assert not (tmp_path / "o").exists()


# ------------------------------------------------------------ 6: escaping, on the command line

@pytest.fixture(scope="module")
def names_tree(tmp_path_factory):
    base = tmp_path_factory.mktemp("names")
    return base, hostile_tree(base)


def test_6_text_report_and_its_fix_lines_escape_names(names_tree):
    """The text report, default and full (with its Fix: lines), carries no
    raw control or bidi character (7c46b23 printed ESC[2J and OSC 52 raw)."""
    base, _ = names_tree
    for extra in ([], ["--output-format", "full"]):
        p = grit("scan", *extra, str(base))
        assert not RAW.search(p.stdout), (extra, RAW.search(p.stdout))
        assert p.returncode == 1, p.stderr  # fixtures/sample exits 1 (docs/reliability.md)
    assert "Fix:" in p.stdout and "\\x1b[2J" in p.stdout


def test_6_explain_escapes_names(names_tree):
    base, f = names_tree
    spec = f"{f}::{ESC_NAME}"
    p = grit("explain", spec, spec)
    assert p.returncode == 0, p.stderr
    assert not RAW.search(p.stdout + p.stderr)
    assert "\\x1b[2J" in p.stdout and "\\u202e" in p.stdout


def test_6_no_quantised_tensor_error_escapes_names(names_tree):
    base, f = names_tree
    p = grit("explain", f"{f}::nope\x1b]52;c;eA==\x07", f"{f}::{ESC_NAME}")
    assert p.returncode == 64, p.stderr
    assert "has no quantised tensor" in p.stderr
    assert not RAW.search(p.stderr + p.stdout), p.stderr


def _run_suggestion(cmd: str, cwd: Path) -> list[str]:
    """The suggested command through bash, `grit explain` replaced by printf:
    the arguments it would get, one per line."""
    assert cmd.startswith("grit explain ")
    r = subprocess.run(["bash", "-c", cmd.replace("grit explain", "printf '%s\\n'", 1)],
                       capture_output=True, text=True, cwd=cwd)
    assert r.returncode == 0, r.stderr
    return r.stdout.split("\n")[:-1]


def _suggestions(rep: dict) -> list[tuple[str, str, str]]:
    return [(f["detail"]["suggested_fix"], f["path"], f["tensor"]) for f in rep["findings"]
            if "grit explain" in str(f.get("detail", {}).get("suggested_fix", ""))]


def test_6_suggested_explain_command_is_two_arguments_in_json(names_tree, tmp_path):
    base, _ = names_tree
    rep = json.loads(grit("scan", "--json", str(base)).stdout)
    sugg = _suggestions(rep)
    assert sugg and all("touch PWNED" in cmd and SHELL in path for cmd, path, _ in sugg)
    for cmd, path, tensor in sugg:
        args = _run_suggestion(cmd, tmp_path)
        assert len(args) == 2 and args[1] == f"{path}::{tensor}", args
    assert not (tmp_path / "PWNED").exists()


def test_6_suggested_explain_command_is_two_arguments_in_sarif(names_tree, tmp_path):
    base, _ = names_tree
    log = json.loads(grit("scan", "--sarif", str(base)).stdout)
    sugg = [r["properties"]["detail"]["suggested_fix"] for r in log["runs"][0]["results"]
            if "grit explain" in str(r["properties"].get("detail", {}).get("suggested_fix"))]
    assert sugg
    for cmd in sugg:
        args = _run_suggestion(cmd, tmp_path)
        assert len(args) == 2 and all("::" in a for a in args), args
    assert not (tmp_path / "PWNED").exists()


def test_6_suggested_explain_command_is_two_arguments_in_text(names_tree, tmp_path):
    base, _ = names_tree
    out = grit("scan", "--output-format", "full", str(base)).stdout
    cmds = [m.group(1) for m in re.finditer(r"Fix: (grit explain .*)$", out, re.M)]
    assert cmds
    for cmd in cmds:
        args = _run_suggestion(cmd, tmp_path)
        assert len(args) == 2 and all("::" in a for a in args), args
    assert not (tmp_path / "PWNED").exists()


def test_6_sarif_uris_are_percent_encoded(names_tree):
    """RFC 3986: a SARIF artifactLocation.uri has no raw quote, space or
    control byte; decoded, it is the file's path (7c46b23 wrote them raw)."""
    base, f = names_tree
    log = json.loads(grit("scan", "--sarif", str(base)).stdout)
    uris = [loc["physicalLocation"]["artifactLocation"]["uri"]
            for r in log["runs"][0]["results"] for loc in r.get("locations", [])]
    assert uris
    for uri in uris:
        assert re.fullmatch(r"[A-Za-z0-9\-._~%/:@!$&()*+,;=]*", uri), uri
        assert "'" not in uri
    assert any(urllib.parse.unquote(u).endswith(str(f.relative_to(base))) for u in uris), uris


# ------------------------------------------------------------ opened once, without following

def test_file_swapped_for_a_symlink_after_the_walk_is_not_followed(tmp_path, monkeypatch,
                                                                   capsys):
    """The walk resolved a regular file inside the root; before the reader
    opens it, it is replaced by a symlink to a file outside.  The open
    (O_NOFOLLOW on the resolved path) refuses it: a finding naming the
    file, and no descriptor on the outside file (7c46b23 followed it)."""
    from grit_scan.parsers import tree

    if not hasattr(os, "O_NOFOLLOW"):
        pytest.skip("no O_NOFOLLOW on this platform")
    root = tmp_path / "root"
    root.mkdir()
    shutil.copy(FIX / "broken/sharded-ok/model-00002-of-00002.safetensors", root / "ok.safetensors")
    victim = root / "victim.safetensors"
    shutil.copy(SHARD, victim)
    outside = tmp_path / "outside.safetensors"
    shutil.copy(SHARD, outside)
    real_walk = tree.Walker.walk

    def walk_then_swap(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        real_walk(self, *args, **kwargs)
        if not victim.is_symlink():
            victim.unlink()
            victim.symlink_to(outside)

    monkeypatch.setattr(tree.Walker, "walk", walk_then_swap)
    opened = spy_opens(monkeypatch)
    rc, rep = scan_json(capsys, str(root))
    assert ident(outside) not in opened
    found = findings_on(rep, victim.name)
    assert [k for k, m in found if "symbolic link" in m] == ["file_unparseable"], found
    assert any(a["path"].endswith("ok.safetensors") and a["parsed"] for a in rep["artifacts"])
    assert rc == 1  # file_unparseable is structural (docs/exit-codes.md)


def test_safefile_refuses_a_symlink_with_a_clear_message(tmp_path):
    """The open itself (new in this branch: not in 7c46b23)."""
    from grit_scan.parsers.fileio import SafeFile, SymlinkRefused

    if not hasattr(os, "O_NOFOLLOW"):
        pytest.skip("no O_NOFOLLOW on this platform")
    target = tmp_path / "t.safetensors"
    shutil.copy(SHARD, target)
    link = tmp_path / "l.safetensors"
    link.symlink_to(target)
    with pytest.raises(SymlinkRefused, match="symbolic link .* not followed"):
        SafeFile(str(link))
    with SafeFile(str(target)) as f:  # the resolved path opens
        assert f.size == target.stat().st_size


def test_symlinks_named_on_the_command_line_are_still_followed(tmp_path):
    """What the user names is resolved once before opening, so a symlinked
    operand (file, index or a FILE::TENSOR) still scans like its target."""
    real = tmp_path / "real"
    shutil.copytree(FIX / "sample" / "llama-mxfp4", real)
    links = tmp_path / "links"
    links.mkdir()
    (links / "model.safetensors").symlink_to(real / "model.safetensors")
    direct = json.loads(grit("scan", "--json", str(real / "model.safetensors")).stdout)
    via = grit("scan", "--json", str(links / "model.safetensors"))
    rep = json.loads(via.stdout)
    assert [a["parsed"] for a in rep["artifacts"]] == [True]
    assert [f["kind"] for f in rep["findings"]] == [f["kind"] for f in direct["findings"]]
    name = "model.layers.0.self_attn.q_proj.weight"
    p = grit("explain", f"{links / 'model.safetensors'}::{name}",
             f"{real / 'model.safetensors'}::{name}")
    assert p.returncode == 0, p.stderr
