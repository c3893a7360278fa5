"""One module per finding kind (or tight family of kinds); discovered by
``grit_scan.rules.registry``.  Modules whose name starts with ``_`` are not
kinds."""
