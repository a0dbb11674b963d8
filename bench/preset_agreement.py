"""kafka.idempotent_produce specs on the older machine and on kafka.eos's preset: verdict, trace length,
distinct states and seconds side by side, each run in this process one after the other.

    python bench/preset_agreement.py specs/*.toml              # every kafka.idempotent_produce spec given
    python bench/preset_agreement.py --write-twins specs/*.toml # and (re)write their kafka.eos twins

Writes the table to ``bench/results/preset-idempotent.md`` (with ``--out``, elsewhere); exit 1 if a
verdict or a trace length differs. With ``--write-twins`` each agreeing spec's twin
(``model.machines.eos_twins``) is written beside it.
"""

from __future__ import annotations

import argparse
import sys
import time
import tomllib
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


def outcome(result: Any) -> tuple[str, list[tuple[str, int]]]:
    return result.verdict, [(v.property, len(v.trace)) for v in result.violations]


def compare(path: Path) -> dict[str, Any] | None:
    """Both runs of one spec, or None if it is not a kafka.idempotent_produce spec."""
    from eoscheck.checker.explore import explore
    from eoscheck.checker.spec import load_spec, spec_to_options
    from eoscheck.model.machines.eos_presets import IDEMPOTENT_PRODUCE
    from eoscheck.model.registry import IDEMPOTENT_PRODUCE_MACHINE as OLD

    spec = load_spec(path)
    if spec.model != OLD.name:
        return None
    options = spec_to_options(spec)
    row: dict[str, Any] = {"spec": path.stem}
    for side, build in (("old", OLD.build), ("eos", IDEMPOTENT_PRODUCE.build)):
        start = time.perf_counter()
        result = explore(build(dict(spec.switches), dict(spec.bounds)), options)
        row[side] = {"outcome": outcome(result), "distinct": result.stats.distinct,
                     "seconds": round(time.perf_counter() - start, 2)}
    row["agree"] = row["old"]["outcome"] == row["eos"]["outcome"]
    return row


def table(rows: list[dict[str, Any]]) -> str:
    out = ["| spec | verdict (length) | agree | distinct old / eos | seconds old / eos |", "|---|---|---|---:|---:|"]
    for r in rows:
        verdict, lengths = r["old"]["outcome"]
        shown = verdict + "".join(f" {p} ({n})" for p, n in lengths)
        if not r["agree"]:
            shown += " / eos: " + str(r["eos"]["outcome"])
        out.append(f"| {r['spec']} | {shown} | {'yes' if r['agree'] else 'NO'} | "
                   f"{r['old']['distinct']:,} / {r['eos']['distinct']:,} | {r['old']['seconds']} / {r['eos']['seconds']} |")
    return "\n".join(out) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("specs", nargs="+")
    parser.add_argument("--out", default=str(HERE / "results" / "preset-idempotent.md"))
    parser.add_argument("--write-twins", action="store_true")
    args = parser.parse_args()

    from eoscheck.checker.outfile import write_output
    from eoscheck.model.machines.eos_presets import IDEMPOTENT_PRODUCE
    from eoscheck.model.machines.eos_twins import twin_name, twin_text
    from eoscheck.model.registry import IDEMPOTENT_PRODUCE_MACHINE as OLD

    rows = []
    for text in args.specs:
        path = Path(text)
        if tomllib.loads(path.read_text()).get("model") != OLD.name:
            continue
        row = compare(path)
        assert row is not None
        print(f"{row['spec']}: {'agree' if row['agree'] else 'DIFFER'} {row['old']['outcome']} "
              f"{row['eos']['outcome']}", flush=True)
        rows.append(row)
        if args.write_twins and row["agree"]:
            write_output(path.with_name(twin_name(path) + ".toml"), twin_text(path, IDEMPOTENT_PRODUCE, OLD))
    header = (f"# kafka.idempotent_produce specs on the older machine and on kafka.eos's preset\n\n"
              f"`python bench/preset_agreement.py` on {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; one "
              f"run each, wall clock on a shared 2-core machine. Distinct counts differ only with two clients: "
              f"kafka.eos's channels keep messages in order per connection, not across clients (a quotient "
              f"that keeps every verdict and trace length), and both reduce by client symmetry.\n\n")
    write_output(args.out, header + table(rows))
    return 0 if all(r["agree"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
