"""One module per convention, each holding one ``Convention`` subclass
(``conventions/base.py`` registers it; docs/conventions.md lists them).
Modules whose names start with ``_`` hold what several conventions share."""
