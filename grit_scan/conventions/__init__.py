"""Conventions: how the tensors producers ship in safetensors map onto GRIT
descriptors.

One module per convention under ``kinds/`` (a ``Convention`` subclass,
registered when its class is defined); ``engine`` groups a model's stored
tensors into modules and hands each to the first convention, in explicit
precedence, that claims it; ``docs`` generates docs/conventions.md from the
registry.  Research: checkpoint-conventions-and-peers.md, Part 2.
Expressible conventions get a descriptor and their planes; conventions GRIT
v1 cannot express are reported with the §0.3 clause (or the section) that
excludes them, never ignored.
"""

from .base import Convention, Ctx, registered
from .engine import UNUSED, Columns, PlanPlanes, PlanReplays, infer, used_mask
from .suffixes import split_name, split_names

__all__ = ["UNUSED", "Columns", "Convention", "Ctx", "PlanPlanes", "PlanReplays", "infer",
           "registered", "split_name", "split_names", "used_mask"]
