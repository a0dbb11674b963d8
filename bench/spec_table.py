"""The README's spec table from one run: ``eoscheck check specs/ --json S.json`` then
``python3 bench/spec_table.py S.json`` prints the rows and the totals line, so the table is always
the output of a single run rather than rows edited by hand."""

from __future__ import annotations

import json
import sys
import tomllib
from pathlib import Path
from typing import Any


def expected_text(spec: dict[str, Any]) -> str:
    """The expected verdict, with the property and trace length the run found for a violation."""
    exp = spec["expected"]
    if exp["verdict"] == "holds":
        return "holds"
    found = spec["got"]["violations"]
    prop = exp.get("property") or (found[0]["property"] if found else "")
    length = exp.get("length") or next((v["length"] for v in found if v["property"] == prop), None)
    return f"{exp['verdict']} {prop}" + (f" ({length} states)" if length else "")


def bounds_text(path: Path) -> str:
    """The bounds the spec file sets (the rest are the model's defaults)."""
    data = tomllib.loads(path.read_text())
    return ", ".join(f"{k}={v}" for k, v in data.get("bounds", {}).items()) or "defaults"


def rows(summary: dict[str, Any], root: Path) -> list[str]:
    out = []
    for spec in sorted(summary["specs"], key=lambda s: s["spec"]):
        stats = spec["stats"]
        model = spec["model"].removeprefix("kafka.")
        out.append(f"| {spec['spec']} | {model} / {spec['variant']} | {bounds_text(root / spec['path'])} | "
                   f"{expected_text(spec)} | {stats['distinct']:,} | {stats['depth']} | "
                   f"{stats['elapsed_seconds']:.2f}s |")
    return out


def main(argv: list[str]) -> int:
    if len(argv) != 1 or argv[0].startswith("-"):
        print("usage: python3 bench/spec_table.py SUMMARY.json", file=sys.stderr)
        return 2
    summary = json.loads(Path(argv[0]).read_text())
    for line in rows(summary, Path.cwd()):
        print(line)
    totals = summary["totals"]
    print(f"\nTotal: {totals['specs']} specs, {totals['distinct']:,} distinct states, "
          f"{totals['elapsed_seconds']:.1f} s of exploration.")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
