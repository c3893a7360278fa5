"""The four planes of a GRIT tensor (§3) and the BLOCK_AOS interleave order.

Planes are numbered as the descriptor, the size equations (§7.3 step 4)
and the digest (§6.5) visit them.  ``Plane.X.label`` ("data", "scale0",
"scale1", "aux") is the display and JSON spelling; it is part of the
report format, so it must not change.
"""

from __future__ import annotations

from enum import IntEnum

# The bytes of one plane as callers hold them (file window, encoder output).
PlaneBuf = bytes | bytearray | memoryview


class Plane(IntEnum):
    """Plane index: an IntEnum, so it indexes plane tuples and lists directly."""

    DATA = 0
    SCALE0 = 1
    SCALE1 = 2
    AUX = 3

    @property
    def label(self) -> str:
        """The lower-case display name used in messages and JSON output."""
        return self.name.lower()


# Display names in plane order, for indexing with a plain int.
PLANE_NAMES: tuple[str, ...] = tuple(p.label for p in Plane)

# BLOCK_AOS (RECONSTRUCTION §7, docs/layouts.md): per (super-)group block the
# planes are stored as scale1 ‖ scale0 ‖ aux ‖ data — ggml's block structs put
# the scales before the quants.  Splitting and joining a payload both read it.
BLOCK_AOS_ORDER: tuple[Plane, ...] = (Plane.SCALE1, Plane.SCALE0, Plane.AUX, Plane.DATA)
