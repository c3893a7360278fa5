"""The GRIT v1 codec: formats, grades, descriptors, placements, fingerprints,
checks.  Pure functions and frozen dataclasses; it imports nothing from the
parsers, rules or report layers (docs/architecture.md)."""
