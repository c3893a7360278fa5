"""grit-scan: audit quantized model checkpoints against the GRIT v1 specification."""

__version__ = "0.1.0"


def scan(*args, **kwargs):  # type: ignore[no-untyped-def]
    """grit_scan.scan(paths, deep=False) -> Report (see grit_scan.api.scan)."""
    from .api import scan as _scan

    return _scan(*args, **kwargs)
