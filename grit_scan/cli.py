"""The console-script entry point (``grit``); the app is commands/_app.py."""

from __future__ import annotations

from .commands._app import app, main, register, run

__all__ = ["app", "main", "register", "run"]
