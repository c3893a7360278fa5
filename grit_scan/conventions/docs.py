"""docs/conventions.md, generated from the convention registry.

``python -m grit_scan.conventions.docs [ROOT]`` rewrites it;
tests/test_conventions_registry.py fails when the committed file differs
from what this module generates.
"""

from __future__ import annotations

import sys
from pathlib import Path

from .base import Convention, registered

HEAD = """\
# Conventions

<!-- Generated from grit_scan/conventions/kinds/ by `python -m grit_scan.conventions.docs`;
     edit the convention modules, not this file. -->

`grit scan` groups a safetensors checkpoint's tensors into modules by their
suffixes and hands each module to the first convention below, in precedence
order, whose recogniser claims it. A representable convention gets a
descriptor and its planes; one GRIT v1 cannot express is reported as
`not_representable` with the spec section that excludes it, never ignored.
"Declared parameters checked" are the fields of the declared quantisation
(config.json `quantization_config`, quantize_config.json,
hf_quant_config.json) that the bytes are held to (`declared_mismatch`).
A compressed-tensors declaration is recognised by its storage `format`
(its config groups' and the top-level one; `mixed-precision` names only
that they differ): a format no convention below reads (`marlin-24`) is
`unsupported_convention` when tensors go unchecked, `dense` is storage
without compression (floats are what it says, a quantised tensor
contradicts it), and a `sparsity_config` format (`sparse-24-bitmask`) names
the tensors it wrote as not checked.
Adding a convention: [architecture.md](architecture.md#recipe-add-a-convention).
"""


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _verdict(c: type[Convention]) -> str:
    if c.not_representable is not None:
        clause, reason = c.not_representable
        lead = f"{c.grade}; otherwise " if c.grade else ""
        return f"{lead}not representable ({clause}): {reason}"
    return f"representable: {c.grade}"


def conventions_md() -> str:
    rows = ["| precedence | convention | producer | versions tested | representable | "
            "declared parameters checked | decode |", "|---|---|---|---|---|---|---|"]
    for c in registered():
        rows.append("| " + " | ".join(_cell(x) for x in (
            str(c.precedence), f"`{c.name}`", c.producers, c.versions_tested, _verdict(c),
            ", ".join(f"`{k}`" for k in c.checks) or "none", c.decode)) + " |")
    parts = [HEAD.rstrip(), "\n".join(rows), "## Recognition"]
    for c in registered():
        parts.append(
            f"### `{c.name}`\n\n"
            f"- suffixes: {', '.join(f'`{s}`' for s in c.suffixes) or 'none'}\n"
            f"- declared as: {', '.join(f'`{s}`' for s in c.declared_as) or 'nothing'}\n"
            f"- dtypes: {', '.join(f'`{s}`' for s in c.dtypes) or 'any'}\n"
            f"- planes: {c.planes}\n"
            f"- tensors carry `convention`: {', '.join(f'`{s}`' for s in c.conventions)}")
    return "\n\n".join(parts) + "\n"


def outputs(root: Path) -> dict[Path, str]:
    """The generated file's path and its text."""
    return {root / "docs" / "conventions.md": conventions_md()}


def main(argv: list[str]) -> int:
    root = Path(argv[0]) if argv else Path.cwd()
    for path, text in outputs(root).items():
        path.write_text(text)
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
