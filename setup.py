"""The optional C helper: the FNV-1a digest loops (grit_scan/codec/_fnv.c).

Everything else is in pyproject.toml.  The extension is optional: without a
C compiler the build still succeeds and grit_scan uses its pure-Python
paths, but never silently: the build prints a warning banner, every scan
says so once on stderr, and ``grit --version`` names the fallback."""

import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

args = [] if sys.platform == "win32" else ["-O3"]
BANNER = """
*****************************************************************************
grit-scan: WARNING: the compiled helper (grit_scan.codec._fnv) could not be
built ({reason}). grit will use its pure-Python fallback: --deep, manifest
and payload digests run far slower. Install a C compiler and
the Python headers (e.g. apt-get install gcc python3-dev) and reinstall
without pip's cached wheel: pip install --no-cache-dir --force-reinstall.
*****************************************************************************
"""


class LoudBuildExt(build_ext):
    """build_ext that says so, visibly, when the optional extension fails."""

    def run(self) -> None:
        try:
            super().run()
        except Exception as exc:  # noqa: BLE001 - no compiler at all: warn and go on
            _warn(exc)

    def build_extension(self, ext: Extension) -> None:
        try:
            super().build_extension(ext)
        except Exception as exc:  # noqa: BLE001 - any compiler failure: warn and go on
            _warn(exc)


def _warn(exc: Exception) -> None:
    banner = BANNER.format(reason=f"{type(exc).__name__}: {exc}")
    sys.stderr.write(banner)
    print(banner)  # pip shows stdout with -v; stderr reaches a plain build log
    # pip keeps a successful build's output to itself unless run with -v:
    # the terminal pip runs in, when there is one, gets the banner directly
    try:
        with open("/dev/tty", "w") as tty:
            tty.write(banner)
    except OSError:
        pass  # no terminal (CI): the first scan says so on stderr


setup(ext_modules=[Extension("grit_scan.codec._fnv", ["grit_scan/codec/_fnv.c"],
                             optional=False, extra_compile_args=args)],
      cmdclass={"build_ext": LoudBuildExt})
