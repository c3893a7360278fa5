#!/usr/bin/env bash
# The compiled helper (grit_scan/codec/_fnv.c) built with AddressSanitizer and
# UndefinedBehaviorSanitizer, then its tests and a fuzz pass run against that
# build (not the one the package build made).  .ci/run runs it after the
# tests (about 15 s); by hand:
#
#     .ci/sanitize.sh [PYTHON] [FUZZ_CASES]
#
# PYTHON is an interpreter grit-scan is installed in (default .venv/bin/python).
# Any sanitizer report aborts the run (exit != 0).
set -euo pipefail
cd "$(dirname "$0")/.."
py=${1:-.venv/bin/python}
cases=${2:-20000}
out=$(mktemp -d /tmp/grit-sanitize-XXXXXX)
trap 'rm -rf "$out"' EXIT

suffix=$("$py" -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')
include=$("$py" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
so="$out/_fnv$suffix"
gcc -shared -fPIC -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined \
    -fno-sanitize-recover=all -Wall -Wextra -Werror \
    -I"$include" grit_scan/codec/_fnv.c -o "$so"

# pytest loads this plugin first: it puts the sanitized build in sys.modules
# under the helper's name, so codec/fnv.py imports it instead of the built one
cat > "$out/sanitized_fnv.py" <<PY
import importlib.util, sys
spec = importlib.util.spec_from_file_location("grit_scan.codec._fnv", "$so")
mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)
sys.modules["grit_scan.codec._fnv"] = mod
PY

export LD_PRELOAD="$(gcc -print-file-name=libasan.so)"
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export PYTHONPATH="$out${PYTHONPATH:+:$PYTHONPATH}"
export GRIT_REQUIRE_COMPILED=1

"$py" -c "import sanitized_fnv
from grit_scan.codec import fnv
assert fnv._compiled.__file__ == '$so', fnv._compiled.__file__
print('sanitize: helper under test', fnv._compiled.__file__)"
"$py" -m pytest -q -p sanitized_fnv -p no:cacheprovider tests/test_fnv_compiled.py \
    tests/test_fingerprint.py tests/test_deep_parallel.py
"$py" -c "import sanitized_fnv, runpy, sys
sys.argv = ['fuzz_fnv.py', '$cases']
runpy.run_path('fuzz/fuzz_fnv.py', run_name='__main__')"
echo "sanitize: no sanitizer report"
