"""Start-up discipline, held by behaviour, not by timings: what a ``grit``
process imports for --version, help and a small scan, and the shortcut past
typer's pydantic conversion gives what typer's own conversion gives."""

import os
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grit_scan.writers import Raw, write_safetensors

# Runs the console script's function the way the `grit` launcher does and
# lists, at exit, every module the process imported.
PROBE = """
import atexit, sys
before = set(sys.modules)  # the interpreter's and site's (an editable install's finder)
atexit.register(lambda: sys.stderr.write("\\nMODULES " + " ".join(sorted(set(sys.modules)
                                                                       - before))))
sys.argv = ["grit", *sys.argv[1:]]
from grit_scan.cli import run
run()
"""

# Never needed to print the version or help.
HEAVY = ("typer", "click", "rich", "numpy", "gguf", "pydantic", "yaml", "shutil",
         "grit_scan.commands._app", "grit_scan.api")


def imported(args, tmp_path, env_extra=None):
    env = {k: v for k, v in os.environ.items()
           if k not in ("COLUMNS", "_GRIT_COMPLETE",
                        "_TYPER_COMPLETE_TEST_DISABLE_SHELL_DETECTION")}
    env.update(env_extra or {})
    p = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True, text=True,
                       cwd=tmp_path, env=env)
    err, _, mods = p.stderr.rpartition("\nMODULES ")
    return p.returncode, p.stdout, err, set(mods.split())


def heavy(mods):
    return sorted(m for m in mods if m.split(".")[0] in HEAVY or m in HEAVY)


def test_version_imports_nothing_heavy(tmp_path):
    code, out, err, mods = imported(["--version"], tmp_path)
    assert code == 0 and err == "" and out.startswith("grit ")
    assert heavy(mods) == []


@pytest.mark.parametrize("args", [["--help"], ["-h"], [], ["scan", "--help"], ["rule", "-h"],
                                  ["vectors", "--help"]])
def test_help_is_typers_and_converts_nothing(args, tmp_path):
    """Help is rendered by typer from the registered commands; printing it
    converts no value, so pydantic is never loaded for it."""
    code, out, err, mods = imported(args, tmp_path)
    assert code == 0 and err == "" and out.startswith("Usage: grit")
    assert "typer" in mods and "pydantic" not in {m.split(".")[0] for m in mods}


def test_small_scan_imports_no_array_or_gguf_stack(tmp_path):
    """A scan of a small safetensors file: no numpy (no arrays are built),
    no gguf (no GGUF file), no rich (no colour on a pipe), no pydantic (no
    option value to convert), no explain codec; no msgspec (small JSON texts
    are the standard library's; issues are plain records), no pathlib and
    no urllib (no URL to redact)."""
    write_safetensors(tmp_path / "tiny.safetensors",
                      {"w.weight": Raw("BF16", [4, 4], bytes(32))})
    for args, want in ((["scan", "tiny.safetensors"], "No findings in 1 file"),
                       (["scan", "--json", "tiny.safetensors"], '"findings": []')):
        code, out, err, mods = imported(args, tmp_path)
        assert code == 0 and want in out, err
        assert not {"numpy", "gguf", "rich", "pydantic", "yaml", "msgspec", "pathlib",
                    "urllib"} & {m.split(".")[0] for m in mods}
        assert "grit_scan.codec.explain" not in mods  # nothing to compare in one file
        # nothing to infer or size: only floats (conventions, plane layouts)
        assert not {"grit_scan.conventions", "grit_scan.codec.layout"} & mods
        assert not FLOAT_SCAN_NEVER & mods, sorted(FLOAT_SCAN_NEVER & mods)


# What a scan of float safetensors has no use for (issue 15, start-up): no
# descriptor, grade or format codec (nothing is described), no GGUF reader,
# GRIT-header parser or manifest reader (no such file), and none of the rule
# kinds' codec (they import it where a quantised tensor is checked).
FLOAT_SCAN_NEVER = {
    "grit_scan.codec.descriptor", "grit_scan.codec.grade", "grit_scan.codec.fmt",
    "grit_scan.codec.placement", "grit_scan.codec.tables", "grit_scan.codec.check",
    "grit_scan.codec.fingerprint", "grit_scan.codec.base32", "grit_scan.codec.planes",
    "grit_scan.parsers.gguf_reader", "grit_scan.parsers.grit_header",
    "grit_scan.parsers.manifest", "grit_scan.parsers.ggml_types", "shlex"}

# Module-level patterns that now compile where they are first used.
NEVER_COMPILED = {
    r"(?<=\.)\d+(?=\.)|^\d+(?=\.)", r"-\d{5}-of-\d{5}(?=\.gguf$)", r"(?<=[(,])k0=\d+",
    r"(proj|fc\d?|dense|linear|query|key|value|experts|wqkv|qkv|w[123])$",
    r"(embed|norm|lm_head|wte|wpe|router|gate\.weight$)", r"[0-9a-fA-F]{32}",
    r"^(?P<base>.+)-(?P<no>\d{5})-of-(?P<n>\d{5})\.gguf$", r"(?<=\.)\d+(?=\.|$)", r"\d+"}

# The same run, listing at exit the patterns re has compiled (its cache).
PROBE_RE = """
import atexit, re, sys
atexit.register(lambda: sys.stderr.write("\\nPATTERNS " + "\\x00".join(
    str(k[1]) for k in [*getattr(re, "_cache", {}), *getattr(re, "_cache2", {})])))
sys.argv = ["grit", *sys.argv[1:]]
from grit_scan.cli import run
run()
"""


def test_small_scan_compiles_no_pattern_it_does_not_use(tmp_path):
    """The patterns of shard names, GGUF splits, roles, grades and linear
    layers compile where they are used, not when their module is imported
    (issue 15): a scan of one float file uses none of them."""
    import re

    if not hasattr(re, "_cache"):
        pytest.skip("this Python's re keeps no _cache to look at")
    write_safetensors(tmp_path / "tiny.safetensors",
                      {"w.weight": Raw("BF16", [4, 4], bytes(32))})
    for args in (["scan", "tiny.safetensors"], ["scan", "--json", "tiny.safetensors"]):
        p = subprocess.run([sys.executable, "-c", PROBE_RE, *args], capture_output=True,
                           text=True, cwd=tmp_path)
        assert p.returncode == 0, p.stderr
        patterns = set(p.stderr.rpartition("\nPATTERNS ")[2].split("\x00"))
        # the probe sees what is compiled where used: every scan's model
        # assembly matches file names against the shard pattern
        assert r"^(?P<base>.+)-(?P<no>\d{5})-of-(?P<n>\d{5})\.safetensors$" in patterns
        assert not NEVER_COMPILED & patterns, sorted(NEVER_COMPILED & patterns)
        # nor the report's escapes: a report with no finding and plain names has
        # nothing to escape (issue 31)
        from grit_scan.report import escape, json_format

        assert not {escape._UNSAFE, escape._SURROGATE, json_format._LONE} & patterns


@pytest.mark.parametrize("fixture,types", [
    ("conventions/gguf-q4km/model-Q4_K_M.gguf", ("Q4_K", "Q6_K")),
    ("conventions/gguf-mxfp4/model-MXFP4.gguf", ("MXFP4", "Q8_0")),
    ("producers/gguf-quants/tiny-llama-Q8_0.gguf", ("Q8_0",))])
def test_gguf_scan_builds_no_array(fixture, types, tmp_path):
    """A scan of a GGUF without --deep sizes every quantised tensor's planes
    (the reader, grit_check) but moves no bytes, so it loads none of the
    codec's array code (numpy itself comes with gguf's type table, which is
    read through the gguf package's public modules)."""
    path = os.path.join(os.path.dirname(__file__), "..", "fixtures", fixture)
    for args in (["scan", "--json", path], ["scan", "--output-format", "full", path]):
        code, out, err, mods = imported(args, tmp_path)
        assert code in (0, 1, 3) and "Traceback" not in err, err
        if "--json" in args:
            for t in types:  # the ggml tensors were read and checked
                assert f'"convention": "ggml:{t}"' in out
        assert not {"grit_scan.codec.fmt_array", "grit_scan.codec.array",
                    "grit_scan.codec.decode", "grit_scan.parsers.planes"} & set(mods)


def test_unquantised_model_with_an_architecture_does_not_load_gguf(tmp_path):
    """gguf's tensor-name map serves the roles of quantised tensors only: a
    float model whose config.json names an architecture never loads it; a
    quantised one maps its roles through the map gguf gives, read from the
    shipped table (parsers/gguf_tables.json) without importing gguf."""
    import json

    (tmp_path / "config.json").write_text(json.dumps(
        {"architectures": ["LlamaForCausalLM"], "model_type": "llama"}))
    write_safetensors(tmp_path / "model.safetensors",
                      {"model.layers.0.mlp.down_proj.weight": Raw("BF16", [4, 4], bytes(32))})
    code, out, err, mods = imported(["scan", "--json", "."], tmp_path)
    assert code == 0 and '"findings": []' in out, err
    assert "gguf" not in {m.split(".")[0] for m in mods}
    # the same module as ModelOpt NVFP4: now a role is asked for
    (tmp_path / "model.safetensors").unlink()
    m = "model.layers.0.mlp.down_proj"
    write_safetensors(tmp_path / "model.safetensors", {
        m + ".weight": Raw("U8", [4, 16], bytes(64)),
        m + ".weight_scale": Raw("F8_E4M3", [4, 2], bytes(8)),
        m + ".weight_scale_2": Raw("F32", [1], bytes(4))})
    code, out, err, mods = imported(["scan", "--json", "."], tmp_path)
    assert '"role": "blk.0.ffn_down.weight"' in out, err
    # gguf's map from the shipped table (tests/test_gguf_tables.py holds it to
    # gguf's own function): gguf is not imported; another gguf than the
    # table's (the lowest pin) is asked itself
    from grit_scan.parsers import gguf_tables

    assert "grit_scan.parsers.gguf_tables" in mods
    with open(gguf_tables.TABLE, encoding="utf-8") as fh:
        shipped = json.load(fh)["sources"]
    if shipped == gguf_tables.installed_sources():
        assert "gguf" not in {m.split(".")[0] for m in mods}
    else:
        assert "gguf.tensor_mapping" in mods


# --- the shortcut gives what it replaces ------------------------------------

def _typer_and_ours():
    """Each parameter of every command as ``command()`` hands it to click,
    with typer's own ``process_value`` (its class's) and the shortcut's (the
    instance's), and a context for its command."""
    import typer

    from grit_scan.commands._app import command

    ours = command()
    for name, sub in [*ours.commands.items(), ("grit", ours)]:
        ctx = typer.Context(sub)
        for p in [*sub.params, sub.get_help_option(ctx)]:
            yield name, ctx, p, type(p).process_value.__get__(p)


def _outcome(process_value, ctx, value):
    import typer

    try:
        return process_value(ctx, value)
    except typer.TyperException as exc:  # click's errors, as typer raises them
        return ("error", type(exc).__name__, exc.format_message())
    except typer.Exit as exc:
        return ("exit", exc.exit_code)


def test_values_that_skip_pydantic_are_what_typer_returns():
    """coercion.py: for every parameter of every command, every value the
    shortcut may keep (defaults, missing values, strings, tuples of strings,
    numbers) gives what typer's own conversion gives: the same value of the
    same type, or the same error."""
    from grit_scan.commands.coercion import CONVERT, declared, shortcut

    checked = 0
    for name, ctx, p, q in _typer_and_ours():
        decl = declared(ctx.command.callback).get(p.name) if ctx.command.callback else None
        for v in (p.default, None, "x", "", ("a", "b"), (), 3, 2.5, "a/b c", "~", "-",
                  "/tmp/x/", "é.bin"):
            if p.name in ("version", "help") and v:
                continue  # prints and exits
            assert "process_value" in vars(p), (name, p.name)  # the shortcut is installed
            want = _outcome(q, ctx, v)
            got = _outcome(p.process_value, ctx, v)
            assert got == want and type(got) is type(want), (name, p.name, v)
            if decl is not None and v is not None and shortcut(
                    decl[0], decl[1], bool(p.multiple or p.nargs == -1), v, ctx) is not CONVERT:
                checked += 1
    assert checked > 40  # values that the shortcut, not typer, answered


def test_enum_choices_are_what_typer_returns():
    """coercion.py: an enum option's string (every member's value, other
    cases, names, junk) gives what typer's pydantic adapter gives: the same
    member, or the same error message."""
    import enum

    from grit_scan.commands.coercion import declared

    checked = 0
    for name, ctx, p, q in _typer_and_ours():
        decl = declared(ctx.command.callback).get(p.name) if ctx.command.callback else None
        if decl is None or not (isinstance(decl[0], type) and issubclass(decl[0], enum.Enum)):
            continue
        values = [w for m in decl[0] for w in (m.value, m.value.upper(), m.name)]
        for v in [*values, "", "x", " json", "json ", "jsonx", "\x1b[1m"]:
            want = _outcome(q, ctx, v)
            got = _outcome(p.process_value, ctx, v)
            assert got == want and type(got) is type(want), (name, p.name, v)
            checked += 1
    assert checked > 20


@pytest.mark.parametrize("fmt", ["full", "sarif", "github", "grouped", "json", "concise"])
def test_output_format_imports_no_pydantic(fmt, tmp_path):
    """``--output-format FORMAT`` names an enum member: no pydantic adapter
    is built for it (issue 15: it nearly doubled a small scan)."""
    write_safetensors(tmp_path / "tiny.safetensors",
                      {"w.weight": Raw("BF16", [4, 4], bytes(32))})
    code, out, err, mods = imported(["scan", "--output-format", fmt, "tiny.safetensors"],
                                    tmp_path)
    assert code == 0 and out, err
    assert "pydantic" not in {m.split(".")[0] for m in mods}
    code, _, err, mods = imported(["scan", "--output-format", "FULL", "tiny.safetensors"],
                                  tmp_path)
    assert code == 64 and "'FULL' is not one of" in err  # typer's own message

def test_values_that_need_converting_still_go_through_typer(capsys):
    from grit_scan.cli import main

    assert main(["scan", "--jobs", "two", "."]) == 64
    assert "grit: error: Invalid value for '--jobs'" in capsys.readouterr().err


SPAN = st.text(alphabet=st.sampled_from(
    list("ab \t\n\r\x07\x08\x0b\x0c\x1b\x00\x7f") + ["é", "\u0301", "中", "\u202e", "😀"]),
    max_size=12)


@given(st.lists(st.tuples(SPAN, st.sampled_from([None, "bold", "dim", "bold red"])),
                min_size=1, max_size=4), st.booleans())
def test_plain_console_writes_what_rich_writes(spans, empty_line):
    """styled.py without colour: the same bytes as rich's Console."""
    import io

    from grit_scan.report.styled import Text, _Plain, _rich_console

    t = Text(*spans[0])
    for s, style in spans[1:]:
        t.append(s, style)
    ours, theirs = io.StringIO(), io.StringIO()
    _Plain(ours, None).print(t)
    rich = _rich_console(theirs, False, None)
    rich.print(t.rich())
    if empty_line:
        _Plain(ours, None).print()
        rich.print()
    assert ours.getvalue() == theirs.getvalue()


def test_coloured_text_keeps_rich_base_style():
    """With colour the line is rich's ``Text(first, style)`` with the other
    spans appended: the first style covers the whole line, as before."""
    import io

    from rich.console import Console
    from rich.text import Text as RichText

    from grit_scan.report.styled import Text, make_console

    ours, theirs = io.StringIO(), io.StringIO()
    make_console(ours, True).print(Text("a.safetensors", "bold").append(": ")
                                   .append("GRIT101", "bold red").append(" size"))
    want = RichText("a.safetensors", style="bold")
    want.append(": ")
    want.append("GRIT101", style="bold red")
    want.append(" size")
    Console(file=theirs, highlight=False, markup=False, emoji=False, soft_wrap=True,
            color_system="standard", force_terminal=True).print(want)
    assert ours.getvalue() == theirs.getvalue() and "\x1b[1m" in ours.getvalue()


HEADER_ENTRY = st.fixed_dictionaries({
    "dtype": st.sampled_from(["BF16", "F32", "U8", "F4", "F6_E2M3", "I64"]),
    "shape": st.lists(st.sampled_from([*range(10), -1, 1 << 63]), max_size=3),
    "data_offsets": st.lists(st.integers(-1, 300) | st.just(1 << 62), min_size=2, max_size=2),
})


def _contiguous(entries):
    """Offsets made consistent for most draws, so both outcomes are common."""
    from grit_scan.parsers.safetensors_reader import DTYPE_BITS

    pos = 0
    for e in entries:
        n = 1
        for x in e["shape"]:
            n *= x
        size = n * DTYPE_BITS[e["dtype"]] // 8 if n >= 0 else 0
        e["data_offsets"] = [pos, pos + size]
        pos += size
    return entries, pos


def test_large_header_scan_imports_no_numpy(tmp_path):
    """A header of 300 float tensors (more than a small file) is checked in
    bulk without numpy: importing it cost more than the check."""
    write_safetensors(tmp_path / "big.safetensors",
                      {f"l{i}.weight": Raw("BF16", [2, 2], bytes(8)) for i in range(300)})
    code, out, err, mods = imported(["scan", "--json", "big.safetensors"], tmp_path)
    assert code == 0 and '"findings": []' in out, err
    assert "numpy" not in {m.split(".")[0] for m in mods}


@given(st.lists(HEADER_ENTRY, min_size=1, max_size=6), st.booleans(),
       st.sampled_from([0, 0, 0, 0, -1, 1]),
       st.randoms(use_true_random=False))
def test_bulk_header_check_is_the_per_entry_check(entries, fix, slack, rnd):
    """safetensors_reader: the bulk check of a header (C-level maps, no
    numpy) accepts a header only when the per-entry path, which names every
    problem, finds none, and its table lists what that path lists; a header
    the per-entry path finds nothing in, with every extent below 2^63, is
    accepted."""
    from grit_scan.artifact import ArtifactDraft, Format
    from grit_scan.parsers import safetensors_reader as sr

    region = None
    if fix:
        entries, region = _contiguous(entries)
        rnd.shuffle(entries)
    region = (region if region is not None else 64) + slack
    obj = {f"t{i}": e for i, e in enumerate(entries)}
    hdr = sr.Header(header_len=8, data_start=16)
    ok = sr._fast_path(dict(obj), hdr, region)
    art = ArtifactDraft(path="x", abs_path="x", format=Format.SAFETENSORS)
    rows, spans = [], []
    for name, entry in obj.items():
        st_ = sr._entry(name, entry, hdr.data_start, region, art)
        if st_ is not None:
            rows.append(st_)
            spans.append((st_.offset - 16, st_.offset - 16 + st_.nbytes, name))
    sr._coverage(spans, region, art)
    clean = not art.issues and len(rows) == len(obj)
    if ok:
        assert clean and hdr.table is not None and list(hdr.table) == rows
    elif clean:
        assert any(d >= 1 << 63 for e in entries for d in e["shape"])


def test_help_order_does_not_follow_import_order():
    """In one process, a command run before ``--help`` imports its module
    first; the help still lists the commands as a fresh process does."""
    code = ("import contextlib, io, sys\n"
            "from grit_scan.cli import main\n"
            "out = io.StringIO()\n"
            "with contextlib.redirect_stdout(out):\n"
            "    main(['rule', 'inferred_descriptor'])\n"
            "out = io.StringIO()\n"
            "with contextlib.redirect_stdout(out):\n"
            "    main(['--help'])\n"
            "sys.stdout.write(out.getvalue())\n")
    env = {**os.environ, "COLUMNS": "80"}
    after_rule = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                                text=True)
    fresh = subprocess.run([sys.executable, "-m", "grit_scan", "--help"], env=env,
                           capture_output=True, text=True)
    assert after_rule.returncode == 0 and fresh.returncode == 0
    assert after_rule.stdout == fresh.stdout
    listed = [line.split()[0] for line in fresh.stdout.split("Commands:")[1].splitlines()
              if line.startswith("  ") and not line.startswith("   ")]
    assert listed[:3] == ["scan", "manifest", "sweep"]


# --- a plain scan without typer (commands/fast_scan.py, issue 31) -----------

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "fixtures")


def test_small_scan_imports_no_typer(tmp_path):
    """``grit scan FILE`` (and ``--json``, ``--output-format full``) is parsed
    by commands/fast_scan.py: typer, click and the command modules are never
    imported; the output is the scan's."""
    write_safetensors(tmp_path / "tiny.safetensors",
                      {"w.weight": Raw("BF16", [4, 4], bytes(32))})
    for args in (["scan", "tiny.safetensors"], ["scan", "--json", "tiny.safetensors"],
                 ["--debug", "scan", "--output-format", "full", "tiny.safetensors"],
                 ["scan", "tiny.safetensors", "--debug", "--deep"]):
        code, out, err, mods = imported(args, tmp_path)
        assert code == 0 and err == "" and out, (args, err)
        tops = {m.split(".")[0] for m in mods}
        assert not {"typer", "click", "pydantic"} & tops, args
        if "--deep" not in args:  # nor what only other inputs, errors or --debug need
            assert not {"shutil", "traceback", "secrets", "subprocess", "zipfile"} & tops, args
        assert "grit_scan.commands._app" not in mods and "grit_scan.commands.scan_cmds" \
            not in mods
    # anything else is typer's
    code, out, err, mods = imported(["scan", "--select", "size_mismatch", "tiny.safetensors"],
                                    tmp_path)
    assert code == 0 and "typer" in mods and "grit_scan.commands.scan_cmds" in mods


def _typer_kwargs(argv):
    """What typer hands ``run_scan`` for ``argv`` (scan_cmds.scan_cmd's
    call), with the exit code of typer's main; run_scan itself is not run."""
    from unittest import mock

    from grit_scan.commands import _app, scan_cmds

    got = []
    with mock.patch.object(scan_cmds, "run_scan", lambda **kw: got.append(kw) or 0):
        code = _app.main(list(argv))
    return code, (got[0] if got else None)


def _with_defaults(kwargs):
    import inspect

    from grit_scan.commands.scan_run import run_scan

    bound = inspect.signature(run_scan).bind(**kwargs)
    bound.apply_defaults()
    return dict(bound.arguments)


TOKENS = ["a", "b.safetensors", "scan", "--deep", "--json", "--sarif", "--statistics",
          "--isolated", "--output-format", "full", "json", "sarif", "grouped", "FULL",
          "--debug", "-h", "--help", "--", "-", "", "--output-format=json", "--jobs", "2",
          "--changed", "--select", "size_mismatch", "--js", "-x", "--version"]


@pytest.mark.parametrize("argv", [
    ["scan"], ["scan", "a"], ["scan", "a", "b"], ["scan", "--json", "a"],
    ["scan", "a", "--json", "b", "--deep"], ["--debug", "scan", "a"],
    ["scan", "a", "--debug"], ["scan", "--output-format", "full", "a"],
    ["scan", "--output-format", "sarif", "--output-format", "github", "a"],
    ["scan", "--json", "--json", "--sarif", "--statistics", "--isolated", "a"],
    ["--debug", "--debug", "scan", "--debug"], ["scan", "--output-format", "json", "--json"]])
def test_plain_scan_is_parsed_as_typer_parses_it(argv):
    """fast_scan.parse gives run_scan what typer gives it (every parameter,
    defaults included), on the command lines it takes."""
    from grit_scan.commands.fast_scan import parse

    ours = parse(list(argv))
    assert ours is not None, argv
    code, theirs = _typer_kwargs(argv)
    assert code == 0 and theirs is not None
    assert _with_defaults(ours) == {**theirs, "debug": theirs["debug"]}


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(TOKENS), max_size=7), st.booleans(), st.booleans())
def test_generated_command_lines_are_parsed_as_typer_parses_them(tail, debug, scan_first):
    """Any command line fast_scan.parse takes, typer takes too and hands
    run_scan the same values (of the same types); a line it declines is
    typer's, whatever typer makes of it."""
    from grit_scan.commands.fast_scan import parse

    argv = (["--debug"] if debug else []) + (["scan"] if scan_first else []) + tail
    ours = parse(list(argv))
    if ours is None:
        return
    code, theirs = _typer_kwargs(argv)
    assert code == 0 and theirs is not None, argv
    full = _with_defaults(ours)
    assert full == theirs and [type(v) for v in full.values()] == \
        [type(theirs[k]) for k in full], argv


def test_completion_and_odd_forms_are_typers(monkeypatch):
    from grit_scan.commands.fast_scan import parse

    for argv in (["scan", "--"], ["scan", "-"], ["scan", ""], ["scan", "-h"],
                 ["scan", "--output-format=json"], ["scan", "--output-format"],
                 ["scan", "--output-format", "FULL"], ["scan", "--jobs", "2"], ["rule"],
                 ["--version"], [], ["-x", "scan"], ["scan", "--changed", "a"]):
        assert parse(argv) is None, argv
    assert parse(["scan", "a"]) is not None
    monkeypatch.setenv("_GRIT_COMPLETE", "complete_bash")
    assert parse(["scan", "a"]) is None


def _both(argv, capsys):
    """(exit code, stdout, stderr) of ``grit ARGV`` by the console path
    (cli.main: the fast path for a plain scan) and by typer's
    (commands._app.main)."""
    from grit_scan.cli import main
    from grit_scan.commands import _app

    out = []
    for run in (main, _app.main):
        code = run(list(argv))
        o, e = capsys.readouterr()
        out.append((code, o, e))
    return out


@pytest.mark.parametrize("args", [
    ["sample"], ["--json", "sample"], ["--output-format", "full", "sample"],
    ["--sarif", "sample"], ["--output-format", "github", "broken"],
    ["--output-format", "grouped", "--statistics", "broken"], ["--json", "--statistics",
                                                                "conformance"],
    ["producers", "conventions"], ["no/such/path"], ["--json", "no/such/path"],
    ["--json", "--sarif", "sample"], ["--statistics", "--sarif", "sample"],
    ["--output-format", "full", "--json", "sample"], ["--isolated", "--deep", "sample"]])
def test_fast_path_prints_what_typer_prints(args, capsys, monkeypatch):
    """The same exit code and the same bytes on stdout and stderr, findings,
    usage errors and missing paths included."""
    from grit_scan.commands.fast_scan import parse

    monkeypatch.chdir(FIXTURES)
    argv = ["scan", *args]
    assert parse(argv) is not None
    fast, typer_ = _both(argv, capsys)
    assert fast == typer_
    assert fast[1] or fast[2]


@pytest.mark.parametrize("exc", [RuntimeError("boom\nsecond line"), KeyboardInterrupt(),
                                 EOFError(), BrokenPipeError(5, "not a closed pipe"),
                                 "usage"])
@pytest.mark.parametrize("debug", [False, True])
def test_fast_path_ends_errors_as_typer_does(exc, debug, capsys, monkeypatch):
    """An exception out of the scan ends as commands/_app.py ends it under
    typer: internal error 70, Ctrl-C 130, a usage error 64, the same lines
    (the traceback with --debug)."""
    from grit_scan.commands import scan_cmds, scan_run
    from grit_scan.commands.outcome import UsageError

    def boom(**kw):
        raise UsageError("--jobs takes a positive number") if exc == "usage" else exc

    monkeypatch.setattr(scan_run, "run_scan", boom)
    monkeypatch.setattr(scan_cmds, "run_scan", boom)
    argv = (["--debug"] if debug else []) + ["scan", "x"]
    fast, typer_ = _both(argv, capsys)
    assert fast[:2] == typer_[:2]
    if debug and not isinstance(exc, (KeyboardInterrupt, EOFError)):
        # the tracebacks differ in the frames above the scan, not in what was raised
        assert fast[2].splitlines()[-1] == typer_[2].splitlines()[-1]
        assert fast[2].splitlines()[0] == typer_[2].splitlines()[0]
    else:
        assert fast[2] == typer_[2]


def test_closed_pipe_exits_1_as_click_does(tmp_path):
    """``grit scan ... | head``: stdout closed while the report is written;
    exit 1 and nothing on stderr, as typer (click's main) ends it."""
    script = ("import sys, os\n"
              "r, w = os.pipe()\n"
              "os.close(r)\n"
              "os.dup2(w, 1)\n"
              "sys.argv = ['grit', *sys.argv[1:]]\n"
              "from grit_scan.cli import run\n"
              "run()\n")
    outs = []
    for extra in ([], ["--select", "size_mismatch,role_drift,artifact_drift"]):
        p = subprocess.run([sys.executable, "-c", script, "scan", "--output-format", "full",
                            *extra, os.path.join(FIXTURES, "sample")],
                           capture_output=True, text=True)
        outs.append((p.returncode, p.stderr))
    assert outs[0] == outs[1]
