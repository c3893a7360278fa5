"""Readers: bytes on disk -> the format-neutral artifact model (model.py)."""
