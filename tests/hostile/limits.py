"""The resource limit every hostile child process runs under (shared by
test_hostile.py's scan cases and test_defects.py's other commands)."""

import os
import resource
import subprocess
import sys

# The address-space limit every case runs under.  The interpreter with
# grit_scan.api and numpy imported reserves about 110-150 MB of address space
# (VmPeak), so 500 MB leaves the scan itself at least 350 MB.
AS_LIMIT = 500 * 1024 * 1024
# One BLAS/OpenMP thread: each extra thread's arena is reserved address space.
CHILD_ENV = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
# docs/exit-codes.md: graded 0-4 and 64 (usage); 70 is a bug, 130 an interrupt.
DEFINED_EXITS = {0, 1, 2, 3, 4, 64}


def _limit_address_space() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (AS_LIMIT, AS_LIMIT))


def run_limited(args: list[str], timeout: float = 120, **kw: object
                ) -> subprocess.CompletedProcess:
    """Run a Python child under AS_LIMIT with small thread arenas."""
    return subprocess.run([sys.executable, *args], capture_output=True, text=True,
                          timeout=timeout, env=CHILD_ENV, preexec_fn=_limit_address_space,
                          **kw)  # type: ignore[call-overload]
