"""grit-scan: audit quantized model checkpoints against the GRIT v1 specification."""

__version__ = "0.1.0"
