"""Shared test set-up.

The tests import ``grit_scan`` from the installed package (README's test
command runs ``.venv/bin/pytest``, which does not put the checkout on
sys.path), so the suite exercises what ``pip install`` produced, including
the compiled helper.  This directory is put on sys.path so test modules in
subdirectories can import the shared helpers (``spec_values``, ...).
Hypothesis runs without its per-example deadline (see below).
"""

import os
import sys

from hypothesis import settings

# Hypothesis' default 200 ms per-example deadline is a wall-clock limit that
# fails on a loaded machine; timing belongs in bench/.
settings.register_profile("grit", deadline=None)
settings.load_profile("grit")

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)
