"""The text report of ``eoscheck conform``: one table row per mechanism, then every difference
with both values, then every inexpressible vector with its reason."""

from __future__ import annotations

import json
from typing import Any

from .harness import AGREE, DISAGREE, NOT_EXPRESSIBLE, RunReport


def _short(v: Any, width: int = 70) -> str:
    text = json.dumps(v, sort_keys=True, default=str) if not isinstance(v, str) else repr(v)
    return text if len(text) <= width else text[: width - 3] + "..."


def render(run: RunReport, *, verbose: bool = False) -> str:
    lines = [f"Vectors: {run.path}", f"Variant: {run.variant} (chosen by {run.chosen_by})", ""]
    counts = run.counts()
    width = max([len("mechanism")] + [len(m) for m in counts])
    head = f"{'mechanism':<{width}}  {'vectors':>7}  {'agree':>5}  {'disagree':>8}  {'not expressible':>15}"
    lines += [head, "-" * len(head)]
    total = {AGREE: 0, DISAGREE: 0, NOT_EXPRESSIBLE: 0}
    for mech, row in counts.items():
        n = sum(row.values())
        lines.append(f"{mech:<{width}}  {n:>7}  {row[AGREE]:>5}  {row[DISAGREE]:>8}  {row[NOT_EXPRESSIBLE]:>15}")
        for k in total:
            total[k] += row[k]
    lines += ["-" * len(head), (f"{'total':<{width}}  {sum(total.values()):>7}  {total[AGREE]:>5}  "
              f"{total[DISAGREE]:>8}  {total[NOT_EXPRESSIBLE]:>15}")]
    bad = [v for v in run.vectors if v.outcome == DISAGREE]
    if bad:
        lines += ["", "Differences (expected by Kafka's test / answered by the model):"]
        for v in bad:
            case = f" [{v.case}]" if v.case else ""
            under = f" under {v.variant}" if v.variant != run.variant else ""
            lines.append(f"  {v.id} ({v.mechanism}){case}{under}")
            for step, d in v.differences:
                lines.append(f"    step {step}: {d.field}: expected {_short(d.expected)}, model {_short(d.model)}")
    odd = [v for v in run.vectors if v.outcome == NOT_EXPRESSIBLE]
    if odd:
        lines += ["", "Not expressible:"]
        lines += [f"  {v.id} ({v.mechanism}): {v.reason}" for v in odd]
    if verbose:
        lines += ["", "Fields not checked (the model does not keep them):"]
        for v in run.vectors:
            for s in v.steps:
                for f, why in s.unchecked.items():
                    lines.append(f"  {v.id} step {s.step}: {f}: {why}")
    return "\n".join(lines)
