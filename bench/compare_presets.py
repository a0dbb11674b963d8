"""Run every committed spec of an older machine on its ``kafka.eos`` preset and compare verdict and
trace length with the older machine.

    python bench/compare_presets.py [--preset kafka.eos_pipeline] [--max-seconds 60] [--out FILE] [SPEC ...]

Each spec runs twice through ``eoscheck check --json`` in a temporary directory (nothing in the
repository is written): with ``model`` naming the older hand-written machine
(``eoscheck.model.registry:EOS_PIPELINE_MACHINE``), and naming the preset (``kafka.eos.eos_pipeline``,
which ``kafka.eos_pipeline`` now is). A row agrees when both runs give the same
verdict (holds / the same property violated) and, for a violation, the same shortest trace length.
A preset run refused (a bound it cannot express, a liveness property kafka.eos does not declare) or
cut by ``--max-seconds`` is a disagreement with its reason. Exit 0 always; the table is the output
(markdown, to stdout or ``--out``). (The kafka.eos twins it once wrote are gone: with the name on the
preset each was the same configuration as its spec; ``eos_pipeline_preset.twin_text`` still writes one.)
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

#: older machine name -> (the hand-written machine, the preset)
PRESET_MODELS = {"kafka.eos_pipeline": ("eoscheck.model.registry:EOS_PIPELINE_MACHINE", "kafka.eos.eos_pipeline")}
ROOT = Path(__file__).resolve().parent.parent
EOSCHECK = [sys.executable, "-m", "eoscheck.checker.cli"]


@dataclass(frozen=True)
class Outcome:
    """One run's result: ``holds``, ``violates P (n)``, or why there is none."""

    verdict: str
    property: str | None = None
    length: int | None = None
    distinct: int | None = None

    def key(self) -> tuple[str, str | None, int | None]:
        return self.verdict, self.property, self.length

    def show(self) -> str:
        if self.verdict == "violated":
            return f"{self.property} ({self.length})"
        return self.verdict


@dataclass(frozen=True)
class Row:
    spec: str
    old: Outcome
    preset: Outcome

    @property
    def complete(self) -> bool:
        return all(o.verdict in ("holds", "violated") for o in (self.old, self.preset))

    @property
    def agrees(self) -> bool:
        return self.complete and self.old.key() == self.preset.key()

    @property
    def verdict_agrees(self) -> bool:
        return self.complete and (self.old.verdict, self.old.property) == (self.preset.verdict, self.preset.property)


def run(spec_text: str, name: str, max_seconds: float, workdir: Path) -> Outcome:
    """``eoscheck check`` on one spec text; its outcome."""
    path = workdir / f"{name}.toml"
    path.write_text(spec_text)
    summary = workdir / f"{name}.summary.json"
    cmd = [*EOSCHECK, "check", str(path), "--out", str(workdir / f"{name}.ce"), "--json", str(summary),
           "--no-progress", "--quiet", "--max-seconds", str(max_seconds)]
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=workdir, check=False)
    if done.returncode == 2 or not summary.exists():
        why = (done.stderr.strip().splitlines() or ["?"])[-1]
        return Outcome("refused: " + why.split("rejected this configuration: ")[-1].split(".toml:")[-1])
    spec = json.loads(summary.read_text())["specs"][0]
    got = spec["got"]
    distinct = spec["stats"].get("distinct")
    if got.get("limit_hit"):
        return Outcome(f"incomplete ({got['limit_hit']})", distinct=distinct)
    if got["verdict"] == "violated":
        first = got["violations"][0]
        return Outcome("violated", first["property"], first["length"], distinct)
    return Outcome(got["verdict"], distinct=distinct)


def compare(paths: list[Path], preset: str, max_seconds: float) -> list[Row]:
    older, model = PRESET_MODELS[preset]
    rows = []
    with tempfile.TemporaryDirectory(prefix="eoscheck-presets-") as tmp:
        work = Path(tmp)
        for path in paths:
            text = path.read_text()

            def naming(name: str, text: str = text) -> str:
                return re.sub(r'^model\s*=\s*"[^"]*"', f'model = "{name}"', text, count=1, flags=re.MULTILINE)
            rows.append(Row(path.stem, run(naming(older), path.stem, max_seconds, work),
                            run(naming(model), path.stem + ".preset", max_seconds, work)))
    return rows


def specs_of(preset: str, where: Path) -> list[Path]:
    pattern = re.compile(rf'^model\s*=\s*"{re.escape(preset)}"', re.MULTILINE)
    return sorted(p for p in where.rglob("*.toml") if pattern.search(p.read_text()))


def table(rows: list[Row], preset: str) -> str:
    lines = [f"| spec | {preset} | kafka.eos preset | distinct (old / preset) | agrees |", "|---|---|---|---:|---|"]
    for r in rows:
        mark = "yes" if r.agrees else ("verdict only" if r.verdict_agrees else "no")
        lines.append(f"| {r.spec} | {r.old.show()} | {r.preset.show()} | {r.old.distinct or '-'} / "
                     f"{r.preset.distinct or '-'} | {mark} |")
    same = sum(r.agrees for r in rows)
    verdicts = sum(r.verdict_agrees for r in rows)
    lines.append(f"\n{same} of {len(rows)} agree in verdict and length; {verdicts} of {len(rows)} in verdict.")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("specs", nargs="*", type=Path)
    ap.add_argument("--preset", default="kafka.eos_pipeline", choices=sorted(PRESET_MODELS))
    ap.add_argument("--max-seconds", type=float, default=60.0)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args(argv)
    paths = args.specs or specs_of(args.preset, ROOT / "specs")
    rows = compare(paths, args.preset, args.max_seconds)
    text = table(rows, args.preset)
    if args.out:
        args.out.write_text(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
