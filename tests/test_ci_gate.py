"""Issue 13 through the CLI: --fail-on, the config file, exit codes and
one-line errors, skipped files by kind, path_escape narrowed, the manifest
gate and --changed (the pre-commit hook's entry)."""

import json
import os
import shutil
from pathlib import Path

import pytest

from grit_scan.cli import main

ROOT = Path(__file__).resolve().parent.parent
FIX = ROOT / "fixtures"
CLEAN = FIX / "conventions" / "ct-mxfp4"  # one inferred_descriptor warning, nothing else
BROKEN = FIX / "broken" / "wrong-group-size"  # one size_mismatch (structural)
MIXED = FIX / "conventions" / "grit-gguf"  # correct mixed precision: artifact_drift only


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def model(tmp_path, src=CLEAN, name="models"):
    dst = tmp_path / name
    shutil.copytree(src, dst)
    return dst


# ------------------------------------------------------------------ --fail-on

def test_fail_on_severities_under_both_policies(capsys):
    assert run(capsys, "scan", CLEAN)[0] == 3  # the warning counts by default
    assert run(capsys, "scan", "--fail-on", "structural,disagreement", CLEAN)[0] == 0
    assert run(capsys, "scan", "--fail-on", "warning", CLEAN)[0] == 3
    assert run(capsys, "scan", "--exit-policy", "simple", "--fail-on", "structural", CLEAN)[0] == 0
    assert run(capsys, "scan", "--exit-policy", "simple", "--fail-on", "warning", CLEAN)[0] == 1
    assert run(capsys, "scan", "--fail-on", "structural,disagreement", BROKEN)[0] == 1
    assert run(capsys, "scan", "--fail-on", "disagreement", BROKEN)[0] == 0


def test_fail_on_kinds_and_codes_and_json(capsys):
    assert run(capsys, "scan", "--fail-on", "inferred_descriptor", CLEAN)[0] == 3
    assert run(capsys, "scan", "--fail-on", "GRIT1", CLEAN)[0] == 0
    code, out, _ = run(capsys, "scan", "--json", "--fail-on", "disagreement,GRIT305", CLEAN)
    doc = json.loads(out)
    assert code == 3 and doc["fail_on"] == ["disagreement", "inferred_descriptor"]
    assert [f["kind"] for f in doc["findings"]] == ["inferred_descriptor"]  # still reported
    doc = json.loads(run(capsys, "scan", "--json", CLEAN)[1])
    assert doc["fail_on"] == ["structural", "disagreement", "warning"]


@pytest.mark.parametrize("argv", [
    ["scan", "--fail-on", "bogus"], ["scan", "--fail-on", "info"], ["scan", "--fail-on", ""],
    ["scan", "--bogus-option"], ["scan", "--exit-policy", "strict"], ["scan", "--jobs", "x"],
    ["manifest", "--nope"],
])
def test_usage_errors_exit_64(capsys, argv):
    code, _, err = run(capsys, *argv, CLEAN)
    assert code == 64 and "Traceback" not in err and err.strip()


# -------------------------------------------------------- errors, skipped

def test_nonexistent_path_is_one_line_exit_4(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, "scan", "models/")
    assert (code, out, err) == (4, "", "grit: error: models/: no such file or directory\n")
    assert run(capsys, "scan", "--exit-policy", "simple", "models/")[0] == 2


def test_no_checkpoint_lists_skipped_by_kind(capsys, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    code, out, err = run(capsys, "scan", empty)
    assert code == 4 and out == ""
    assert err == f"grit: error: no checkpoint found under {empty} (no files skipped)\n"
    pk = tmp_path / "pickles"
    pk.mkdir()
    (pk / "pytorch_model.bin").write_bytes(b"\x80\x02}q\x00.")
    (pk / "model.onnx").write_bytes(b"\x08\x07")
    (pk / "README.md").write_text("hi")
    code, out, err = run(capsys, "scan", pk)
    assert code == 4
    assert err == (f"grit: error: no checkpoint found under {pk} (2 files skipped: 1 "
                   "other weights format (not a safetensors/GGUF file), 1 pickle (not a "
                   "safetensors/GGUF file))\n")
    code, out, err = run(capsys, "scan", "--json", pk)
    skipped = {s["path"].rsplit("/", 1)[1]: s for s in json.loads(out)["skipped"]}
    assert code == 4 and set(skipped) == {"pytorch_model.bin", "model.onnx"}
    assert skipped["pytorch_model.bin"]["kind"] == "pickle"
    assert "not a safetensors/GGUF file" in skipped["pytorch_model.bin"]["reason"]


def test_outside_symlinks_matter_only_when_a_reader_would_follow(capsys, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "python").write_text("#!")
    shutil.copy(CLEAN / "model.safetensors", outside / "w.safetensors")
    repo = model(tmp_path, name="repo")
    (repo / ".venv" / "bin").mkdir(parents=True)
    os.symlink(outside / "python", repo / ".venv" / "bin" / "python")
    os.symlink(outside / "python", repo / "README")
    code, out, _ = run(capsys, "scan", "--json", repo)
    doc = json.loads(out)
    assert "path_escape" not in {f["kind"] for f in doc["findings"]} and code == 3
    assert sorted(s["kind"] for s in doc["skipped"]) == ["outside_symlink"] * 2
    os.symlink(outside / "w.safetensors", repo / "shard.safetensors")
    code, out, _ = run(capsys, "scan", "--json", repo)
    escapes = [f for f in json.loads(out)["findings"] if f["kind"] == "path_escape"]
    assert code == 1 and [f["path"] for f in escapes] == [f"{repo}/shard.safetensors"]


# ------------------------------------------------------------- config file

def test_config_file_found_upward_and_overridden(capsys, tmp_path, monkeypatch):
    proj = tmp_path / "proj"
    proj.mkdir()
    m = model(proj)
    (proj / "pyproject.toml").write_text('[project]\nname = "x"\n\n[tool.grit]\n'
                                         'fail-on = "structural,disagreement"\n')
    assert run(capsys, "scan", m)[0] == 3  # run from elsewhere: not the project's config
    monkeypatch.chdir(m)  # the project root is the working directory
    assert run(capsys, "scan", m)[0] == 0  # found from the working directory upward
    assert run(capsys, "scan", "--isolated", m)[0] == 3
    assert run(capsys, "scan", "--fail-on", "warning", m)[0] == 3  # the option wins
    (proj / "grit.toml").write_text('exit-policy = "simple"\nfail-on = ["warning"]\n')
    assert run(capsys, "scan", m)[0] == 1  # grit.toml wins over pyproject.toml
    other = tmp_path / "other.toml"
    other.write_text('[tool.grit]\nignore = ["inferred_descriptor"]\n')
    code, out, _ = run(capsys, "scan", "--json", "--config", other, m)
    assert code == 0 and json.loads(out)["findings"] == []


def test_config_select_ignore_and_per_path_ignores(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    m = model(tmp_path)
    model(tmp_path, BROKEN, "legacy")
    (tmp_path / "grit.toml").write_text(
        'select = ["GRIT1", "inferred_descriptor"]\n\n[per-path-ignores]\n'
        '"legacy/*" = ["size_mismatch"]\n')
    code, out, _ = run(capsys, "scan", "--json", tmp_path)
    kinds = {(f["kind"], f["path"].split("/")[-2]) for f in json.loads(out)["findings"]}
    assert code == 3 and kinds == {("inferred_descriptor", "models")}
    code, out, _ = run(capsys, "scan", "--json", "--ignore", "inferred_descriptor", m)
    assert code == 0


@pytest.mark.parametrize("text,needle", [
    ('selct = ["GRIT1"]\n', "unknown key(s) selct"),
    ('fail-on = ["nope"]\n', "unknown finding kind"),
    ('exit-policy = "strict"\n', "exit-policy"),
    ("select = 3\n", "select: expected a list"),
    ("not toml [\n", "not valid TOML"),
])
def test_bad_config_is_a_usage_error_naming_the_file(capsys, tmp_path, text, needle,
                                                     monkeypatch):
    monkeypatch.chdir(tmp_path)
    m = model(tmp_path)
    (tmp_path / "grit.toml").write_text(text)
    code, _, err = run(capsys, "scan", m)
    assert code == 64 and needle in err and "grit.toml" in err and len(err.splitlines()) == 1


# ------------------------------------------------------------ manifest gate

def test_manifest_refuses_missing_empty_and_structural(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, _, err = run(capsys, "manifest", "--deep", "models/")
    assert code == 4 and err == "grit: error: models/: no such file or directory\n"
    Path("empty").mkdir()
    code, _, err = run(capsys, "manifest", "empty")
    assert code == 4 and "nothing to record" in err
    model(tmp_path, BROKEN, "bad")
    code, _, err = run(capsys, "manifest", "bad")
    assert code == 1 and "--allow-findings" in err
    assert "size_mismatch  bad/model.safetensors :: model.layers.0.self_attn.k_proj.weight" in err
    assert not Path("grit-manifest.json").exists()
    code, out, _ = run(capsys, "manifest", "--allow-findings", "bad")
    assert code == 0 and Path("grit-manifest.json").exists()


def test_manifest_records_versions_and_is_not_an_artifact(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    model(tmp_path, MIXED)
    assert run(capsys, "manifest", "--deep", "models")[0] == 0
    doc = json.loads(Path("grit-manifest.json").read_text())
    assert doc["grit_manifest"] == 1 and doc["spec_version"] == 1
    assert doc["tool_version"] == run(capsys, "--version")[1].split()[1]
    code, out, _ = run(capsys, "scan", "--json", "--deep", "grit-manifest.json")
    rep = json.loads(out)
    assert [a["path"] for a in rep["artifacts"]] == ["models/model.gguf"]
    assert {(f["kind"], f["path"]) for f in rep["findings"]} == {
        ("artifact_drift", "models/model.gguf")}  # the file's own, not the manifest's
    assert code == 3
    # an old manifest (no versions) still reads
    del doc["tool_version"], doc["spec_version"]
    Path("grit-manifest.json").write_text(json.dumps(doc))
    assert run(capsys, "scan", "--fail-on", "structural,disagreement",
               "grit-manifest.json")[0] == 0


def test_scanning_a_manifest_reports_unlisted_checkpoints(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    model(tmp_path)
    assert run(capsys, "manifest", "models")[0] == 0
    gate = ("scan", "--json", "--fail-on", "structural,disagreement", "grit-manifest.json")
    assert run(capsys, *gate)[0] == 0
    (Path("models") / "sub").mkdir()
    shutil.copy(CLEAN / "model.safetensors", "models/sub/added.safetensors")
    code, out, _ = run(capsys, *gate)
    found = [(f["kind"], f["code"], f["path"]) for f in json.loads(out)["findings"]
             if f["severity"] != "warning"]
    assert code == 2 and found == [("unlisted_checkpoint", "GRIT205",
                                    "models/sub/added.safetensors")]


# ------------------------------------------------------------- --changed

def test_changed_scans_the_owning_models_once(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    model(tmp_path)
    model(tmp_path, BROKEN, "bad")
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "config.json").write_text("{}")
    code, out, _ = run(capsys, "scan", "--changed", "app/config.json")
    assert code == 0 and "no model among the changed files" in out
    code, out, _ = run(capsys, "scan", "--changed", "--json", "models/config.json")
    doc = json.loads(out)
    assert code == 3 and doc["roots"] == ["models"]  # a config-only change rescans its model
    code, out, _ = run(capsys, "scan", "--changed", "--json", "./bad/model.safetensors",
                       "bad/model.safetensors", "bad/config.json")
    doc = json.loads(out)
    assert code == 1 and doc["roots"] == ["./bad"]
    assert [f["kind"] for f in doc["findings"]] == ["size_mismatch"]  # once, not twice
