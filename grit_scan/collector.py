"""The cyclic garbage collector, paused around work that allocates many
small objects which live on (docs/performance.md): importing typer and the command
modules, reading headers into hundreds of thousands of records, writing a
report while the whole model is alive.  Each filled generation would make
the collector walk all of them again.  Restored as it was on exit, so a
pause nested in another leaves the collector off until the outer one ends."""

from __future__ import annotations

import gc


class paused:  # noqa: N801 - used as ``with paused():``, like contextlib's helpers
    """``with paused():`` runs its block with the cyclic collector off."""

    __slots__ = ("was_enabled",)

    def __enter__(self) -> None:
        self.was_enabled = gc.isenabled()
        gc.disable()

    def __exit__(self, *exc: object) -> None:
        if self.was_enabled:
            gc.enable()
