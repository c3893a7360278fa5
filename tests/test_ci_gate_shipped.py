"""The shipped CI files work as shipped: the workflow's run: steps in a
temporary repository, `pre-commit try-repo` against a clone of this
repository, and docs/ci-gate.md followed command by command."""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
CLEAN = ROOT / "fixtures" / "conventions" / "ct-mxfp4"
BROKEN = ROOT / "fixtures" / "broken" / "wrong-group-size"
GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}


def env(**extra):
    e = dict(os.environ, **GIT_ENV, **extra)
    e["PATH"] = f"{BIN}{os.pathsep}{e['PATH']}"
    return e


def sh(cmd, cwd, **kw):
    return subprocess.run(cmd, cwd=cwd, env=kw.pop("env", env()), capture_output=True,
                          text=True, **kw)


def repo_with(tmp_path, src, name="repo"):
    repo = tmp_path / name
    shutil.copytree(src, repo / "models")
    sh(["git", "init", "-q"], repo)
    return repo


# ---------------------------------------------------------------- workflow

def workflow():
    return yaml.safe_load((ROOT / ".github" / "workflows" / "grit-scan.yml").read_text())


def job_env(wf):
    """The workflow's env with no repository variables or inputs set: each
    `${{ inputs.x || vars.Y || 'default' }}` falls back to its literal."""
    out = {}
    for k, v in wf["env"].items():
        lits = re.findall(r"'([^']*)'", v)
        out[k] = lits[-1] if lits else ""
    return out


def run_steps(repo, extra_env):
    """Every `run:` step but the install (the CLI is installed), as GitHub
    runs them (bash -e), carrying $GITHUB_ENV between steps."""
    wf = workflow()
    e = env(**{**job_env(wf), **extra_env})
    genv = repo / ".github_env"
    e["GITHUB_ENV"] = str(genv)
    for step in wf["jobs"]["scan"]["steps"]:
        if "run" not in step or step.get("name") == "Install grit":
            continue
        genv.write_text("")
        r = subprocess.run(["bash", "-e", "-c", step["run"]], cwd=repo, env=e,
                           capture_output=True, text=True)
        for line in genv.read_text().splitlines():
            k, _, v = line.partition("=")
            e[k] = v
        if r.returncode:
            return step["name"], r.returncode, e
    return None, 0, e


def test_workflow_shape():
    wf = workflow()
    steps = wf["jobs"]["scan"]["steps"]
    runs = [s["run"] for s in steps if "run" in s]
    assert sum(len(re.findall(r"^\s*grit scan ", r, re.M)) for r in runs) == 1  # once
    assert wf["env"]["GRIT_FAIL_ON"].endswith("'structural,disagreement' }}")
    install = next(s for s in steps if s.get("name") == "Install grit")
    assert 'pip install "$GRIT_SCAN_SOURCE"' in install["run"]
    assert "vars.GRIT_SCAN_SOURCE" in wf["env"]["GRIT_SCAN_SOURCE"]
    upload = next(s for s in steps if s.get("uses", "").startswith(
        "github/codeql-action/upload-sarif"))
    assert upload["with"]["sarif_file"] == "grit.sarif" and upload["if"] == "always()"


@pytest.mark.parametrize("deep", ["false", "true"])
def test_workflow_steps_pass_clean_fail_broken(tmp_path, deep):
    clean = repo_with(tmp_path, CLEAN, "clean")
    assert sh(["grit", "manifest", "--deep", "models"], clean).returncode == 0
    name, code, e = run_steps(clean, {"GRIT_DEEP": deep})
    assert (name, code) == (None, 0)
    sarif = (clean / "grit.sarif").read_text()
    assert '"version": "2.1.0"' in sarif and "inferred_descriptor" in sarif  # reported
    broken = repo_with(tmp_path, CLEAN, "broken")
    assert sh(["grit", "manifest", "--deep", "models"], broken).returncode == 0
    shutil.copy(BROKEN / "model.safetensors", broken / "models" / "model.safetensors")
    name, code, e = run_steps(broken, {"GRIT_DEEP": deep})
    assert name.startswith("Gate") and code != 0 and e["GRIT_STATUS"] == str(code)
    assert "size_mismatch" in (broken / "grit.sarif").read_text()


# ---------------------------------------------------------------- pre-commit

def test_pre_commit_try_repo(tmp_path):
    clone = tmp_path / "grit-clone"
    assert sh(["git", "clone", "-q", str(ROOT), str(clone)], tmp_path).returncode == 0
    e = env(PRE_COMMIT_HOME=str(tmp_path / "pre-commit-home"))
    repo = repo_with(tmp_path, CLEAN)

    def try_repo(*files):
        sh(["git", "add", "-A"], repo)
        r = sh([str(BIN / "pre-commit"), "try-repo", str(clone), "grit-scan", "--files",
                *files], repo, env=e)
        return r.returncode, r.stdout + r.stderr

    code, out = try_repo("models/model.safetensors", "models/config.json")
    assert code == 0 and "grit scan" in out and "Passed" in out, out
    sh(["git", "commit", "-q", "-m", "model"], repo)
    cfg = repo / "models" / "config.json"
    cfg.write_text(cfg.read_text().replace("{", '{"comment": "x",', 1))
    code, out = try_repo("models/config.json")  # config-only: rescans the model
    assert code == 0 and "Passed" in out, out
    (repo / "notes").mkdir()
    (repo / "notes" / "config.json").write_text("{}")
    code, out = try_repo("notes/config.json")  # no model: passes
    assert code == 0 and "Passed" in out, out
    shutil.copy(BROKEN / "model.safetensors", repo / "models" / "model.safetensors")
    code, out = try_repo("models/model.safetensors", "models/config.json")
    assert code == 1 and "Failed" in out and out.count("GRIT101 size_mismatch ") == 1, out


# ---------------------------------------------------------------- docs

def doc_steps():
    """docs/ci-gate.md in order: ("run", line) for every ```sh line and
    ("save", name, text) for a block after "Save as `name`:"."""
    text = (ROOT / "docs" / "ci-gate.md").read_text()
    steps = []
    for m in re.finditer(r"(?:Save as\s+`([^`]+)`:\s*\n\s*\n)?```(\w+)\n(.*?)```", text, re.S):
        save, lang, body = m.groups()
        if save:
            steps.append(("save", save, body))
        elif lang == "sh":
            steps += [("run", ln) for ln in body.splitlines() if ln.strip()]
    return steps


def test_ci_gate_doc_followed_literally(tmp_path):
    repo = repo_with(tmp_path, CLEAN)
    steps = doc_steps()
    assert steps[0] == ("run", 'pip install "$GRIT_SCAN_SOURCE"')  # the CLI is installed
    ran = []
    for step in steps[1:]:
        if step[0] == "save":
            (repo / step[1]).write_text(step[2])
            continue
        r = sh(["bash", "-e", "-c", step[1]], repo)
        assert r.returncode == 0, (step[1], r.stdout, r.stderr)
        ran.append(step[1])
    assert any(c.startswith("grit manifest") for c in ran)
    assert any(c.startswith("pre-commit run") for c in ran)
    assert (repo / "grit-manifest.json").exists() and (repo / ".pre-commit-config.yaml").exists()
    # the gate the doc sets up fails once a model breaks
    shutil.copy(BROKEN / "model.safetensors", repo / "models" / "model.safetensors")
    gate = next(c for c in ran if c.startswith("grit scan --deep"))
    assert sh(["bash", "-c", gate], repo).returncode == 1
    r = sh(["pre-commit", "run", "--files", "models/model.safetensors"], repo)
    assert r.returncode == 1 and "size_mismatch" in r.stdout
