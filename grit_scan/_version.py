"""The installed version (one place; setuptools reads it)."""

__version__ = "0.1.0"
