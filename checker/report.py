"""What ``eoscheck check`` reports: verdicts against expectations, TLC-style statistics, the
verdict table, a JSON summary and JUnit XML for CI.

``judge`` is the single place that decides whether a run met its spec's expectation; the table,
the JSON summary, the JUnit file and the exit code all read its answer.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from .files import write_text_atomic
from .result import Result, Stats, Violation
from .spec import Spec

SUMMARY_FORMAT = "eoscheck-summary"
SUMMARY_VERSION = 1


@dataclass
class Outcome:
    """One spec's run: what was expected, what came out, and whether that meets the spec."""

    spec: Spec
    result: Result
    strategy: str
    actions: list[str]  # the machine's action names, for coverage warnings
    met: bool = False
    message: str = ""
    #: property -> the counterexample files written for it (json first, then itf)
    counterexamples: dict[str, list[Path]] = field(default_factory=dict)


def judge(spec: Spec, result: Result) -> tuple[bool, str]:
    """Whether ``result`` meets ``spec.expect``, with a one-line reason."""
    exp = spec.expect
    if exp.verdict == "holds":
        if result.verdict == "holds" and not result.violations:
            return True, "every checked property holds"
        if result.violations:
            v = result.violations[0]
            return False, (f"expected every property to hold, but {v.property} is violated "
                           f"(trace of {v.length} states)")
        return False, f"expected holds, but the run is {_incomplete(result)}; holds is not proven"
    matching = [v for v in result.violations if v.property == exp.property]
    if not matching:
        if result.violations:
            got = ", ".join(v.property for v in result.violations)
            return False, (f"expected {exp.property} violated, but the run found {got} instead "
                           "(restrict check.properties or use --continue)")
        if result.verdict == "holds":
            return False, f"expected {exp.property} violated, but every checked property holds"
        return False, f"expected {exp.property} violated, but none was found: {_incomplete(result)}"
    v = matching[0]
    if exp.length is not None and v.length != exp.length:
        return False, (f"{exp.property} is violated as expected, but the trace has {v.length} "
                       f"states where the spec expects {exp.length}")
    return True, f"{exp.property} is violated as expected (trace of {v.length} states)"


def _incomplete(result: Result) -> str:
    if result.limit_hit:
        return f"incomplete (stopped at the {result.limit_hit} limit)"
    return "incomplete (" + ("; ".join(result.notes) or "the strategy cannot exhaust the space") + ")"


def make_outcome(spec: Spec, result: Result, actions: Sequence[str]) -> Outcome:
    met, message = judge(spec, result)
    return Outcome(spec=spec, result=result, strategy=result.strategy, actions=list(actions),
                   met=met, message=message)


# ------------------------------------------------------------------------------ terminal output


def expected_label(spec: Spec) -> str:
    e = spec.expect
    if e.verdict == "holds":
        return "holds"
    return f"violates {e.property}" + (f" (len {e.length})" if e.length is not None else "")


def got_label(result: Result) -> str:
    if result.violations:
        parts = [f"{v.property} (len {v.length})" for v in result.violations]
        return "violates " + ", ".join(parts)
    if result.verdict == "holds":
        return "holds"
    return f"incomplete ({result.limit_hit})" if result.limit_hit else "incomplete"


def seconds(elapsed: float) -> str:
    if elapsed < 60:
        return f"{elapsed:.2f}s"
    minutes, secs = divmod(int(elapsed), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m{secs:02d}s" if hours else f"{minutes}m{secs:02d}s"


def print_stats(console: Console, outcome: Outcome) -> None:
    """TLC-style statistics for one run: counts, depth, throughput, coverage, collision odds."""
    s: Stats = outcome.result.stats
    spec = outcome.spec
    console.print(Text.assemble(("", ""), (spec.name, "bold"), f"  ({spec.model}, variant {spec.variant}, "
                                f"{outcome.strategy})"))
    console.print(f"  {s.generated:,} states generated, {s.distinct:,} distinct states found, "
                  f"{s.queue:,} states left on queue.")
    console.print(f"  The depth of the complete state graph search is {s.depth}."
                  if outcome.result.verdict == "holds" else f"  Depth reached: {s.depth}.")
    if outcome.result.view:
        console.print(f"  View: {outcome.result.view}; states with the same view are one state "
                      "(--view none turns it off).")
    if outcome.result.symmetry:
        console.print(f"  Symmetry reduction: {outcome.result.symmetry}; distinct states are one per orbit "
                      "(--no-symmetry counts them all).")
    console.print(f"  {seconds(s.elapsed)}: {s.states_per_second:,.0f} distinct states/s, "
                  f"{s.generated_per_second:,.0f} generated states/s.")
    console.print(f"  Fingerprint collision probability: {s.collision_probability:.1e} "
                  "(optimistic estimate, as TLC's)")
    if s.observed_collision is not None:
        console.print(f"  Based on the actual fingerprints: {s.observed_collision:.1e} "
                      "(1 / the smallest gap between two)")
    actions = outcome.actions or sorted(s.coverage)
    if actions:
        cov = Table(box=None, padding=(0, 2), show_edge=False, pad_edge=False)
        cov.add_column("  action", no_wrap=True)
        cov.add_column("generated", justify="right")
        cov.add_column("distinct", justify="right")
        for name in actions:
            c = s.coverage.get(name)
            gen, dis = (c.generated, c.distinct) if c else (0, 0)
            cov.add_row(f"  {name}", f"{gen:,}", f"{dis:,}", style="yellow" if gen == 0 else None)
        console.print(cov)
    never = s.never_fired(actions)
    if never:
        console.print(Text(f"  warning: action(s) never fired: {', '.join(never)} "
                           "(often a spec bug: a guard that is never true)", style="bold yellow"))
    for note in outcome.result.notes:
        console.print(Text(f"  note: {note}", style="dim"))


def print_table(console: Console, outcomes: Sequence[Outcome]) -> None:
    """The verdict table: status first, then spec, expectation, result and TLC's counts."""
    rows = []
    for o in outcomes:
        s = o.result.stats
        rows.append(("OK" if o.met else "FAIL", o.spec.name, f"{o.spec.model}/{o.spec.variant}",
                     expected_label(o.spec), got_label(o.result),
                     (f"{s.distinct:,}", f"{s.generated:,}", str(s.depth), seconds(s.elapsed))))
    numeric = ("distinct", "generated", "depth", "time")
    num_widths = [max([len(h)] + [len(r[5][i]) for r in rows]) for i, h in enumerate(numeric)]
    status_width = 4
    # rich shrinks columns unpredictably when a table is too wide (it even truncates numbers), so
    # the text columns get explicit widths: whatever the numbers leave, wrapped.
    gaps = 2 * 7
    room = max(console.width - status_width - sum(num_widths) - gaps, 30)
    natural = [max([4] + [max(len(r[1]), len(r[2])) for r in rows]),
               max([8] + [len(r[3]) for r in rows]), max([3] + [len(r[4]) for r in rows])]
    if sum(natural) <= room:
        _print_wide(console, rows, natural, num_widths, status_width)
    else:  # expected/got up to 30% each, the spec name gets the rest
        expected_w = min(natural[1], max(room * 3 // 10, 10))
        got_w = min(natural[2], max(room * 3 // 10, 10))
        spec_w = max(room - expected_w - got_w, 10)
        if natural[0] > spec_w:  # a name would be cut mid-word: two lines per spec instead
            _print_narrow(console, rows)
        else:
            _print_wide(console, rows, [spec_w, expected_w, got_w], num_widths, status_width)
    for o in outcomes:
        if not o.met:
            # soft_wrap: one line per failure, so grep and CI logs see the whole reason
            console.print(Text.assemble(("FAIL ", "bold red"), (o.spec.name, "bold"), f": {o.message}"),
                          soft_wrap=True)
    failed = sum(not o.met for o in outcomes)
    summary = f"{len(outcomes) - failed} of {len(outcomes)} spec(s) met their expected verdict"
    console.print(Text(summary, style="bold green" if not failed else "bold red"))


def _print_narrow(console: Console, rows: list) -> None:
    """Too narrow for one row per spec (long spec names in 80 columns): two lines per spec, so a
    name is never cut in the middle."""
    console.print(Text("eoscheck verdicts", style="italic"))
    for status, name, model, expected, got, (distinct, generated, depth, elapsed) in rows:
        console.print(Text.assemble((f"{status:<5}", "bold green" if status == "OK" else "bold red"),
                                    (name, "bold")), soft_wrap=True)
        console.print(Text(f"     {model}: {distinct} distinct, {generated} generated, depth {depth}, "
                           f"{elapsed}", style="dim"), soft_wrap=True)
        console.print(f"     expected {expected.replace(chr(10), ' ')}; got {got.replace(chr(10), ' ')}",
                      soft_wrap=True, highlight=False)


def _print_wide(console: Console, rows: list, widths: list[int], num_widths: list[int],
                status_width: int) -> None:
    numeric = ("distinct", "generated", "depth", "time")
    table = Table(title="eoscheck verdicts", title_justify="left", box=box.SIMPLE_HEAD,
                  show_edge=False, padding=(0, 1), pad_edge=False, collapse_padding=True)
    table.add_column("", no_wrap=True, width=status_width)
    table.add_column("spec", overflow="fold", width=widths[0])
    table.add_column("expected", overflow="fold", width=widths[1])
    table.add_column("got", overflow="fold", width=widths[2])
    for name, w in zip(numeric, num_widths):
        table.add_column(name, justify="right", no_wrap=True, width=w)
    for status, name, model, expected, got, numbers in rows:
        spec = Text(name, style="bold")
        spec.append(f"\n{model}", style="dim")
        table.add_row(Text(status, style="bold green" if status == "OK" else "bold red"),
                      spec, expected, got, *numbers)
    console.print(table)


# ------------------------------------------------------------------------------ JSON summary


def _violation_json(v: Violation, files: list[Path]) -> dict[str, Any]:
    return {"property": v.property, "kind": v.kind, "length": v.length,
            "found_length": v.found_length, "shortened_by": v.shortened_by,
            "counterexample": [str(p) for p in files]}


def stats_json(s: Stats, actions: Sequence[str]) -> dict[str, Any]:
    names = list(actions) or sorted(s.coverage)
    return {
        "distinct": s.distinct, "generated": s.generated, "depth": s.depth, "queue": s.queue,
        "elapsed_seconds": round(s.elapsed, 6),
        "states_per_second": round(s.states_per_second, 3),
        "generated_per_second": round(s.generated_per_second, 3),
        "collision_probability": s.collision_probability,
        "observed_collision_probability": s.observed_collision,
        "coverage": {a: {"generated": s.coverage[a].generated if a in s.coverage else 0,
                         "distinct": s.coverage[a].distinct if a in s.coverage else 0}
                     for a in names},
        "never_fired": s.never_fired(names),
    }


def summary(outcomes: Sequence[Outcome]) -> dict[str, Any]:
    """The JSON summary: stable keys, one entry per spec in the order they ran."""
    specs = []
    for o in outcomes:
        e = o.spec.expect
        specs.append({
            "spec": o.spec.name, "path": str(o.spec.path), "model": o.spec.model,
            "variant": o.spec.variant, "switches": dict(o.spec.switch_overrides),
            "bounds": dict(o.spec.bounds), "strategy": o.strategy,
            "expected": {"verdict": e.verdict, "property": e.property, "length": e.length},
            "got": {"verdict": o.result.verdict, "limit_hit": o.result.limit_hit,
                    "violations": [_violation_json(v, o.counterexamples.get(v.property, []))
                                   for v in o.result.violations]},
            "met": o.met, "message": o.message,
            "stats": stats_json(o.result.stats, o.actions),
            "notes": list(o.result.notes),
            "symmetry": o.result.symmetry,
            "view": o.result.view,
        })
    failed = sum(not o.met for o in outcomes)
    return {
        "format": SUMMARY_FORMAT, "version": SUMMARY_VERSION, "ok": failed == 0,
        "totals": {"specs": len(outcomes), "met": len(outcomes) - failed, "failed": failed,
                   "distinct": sum(o.result.stats.distinct for o in outcomes),
                   "generated": sum(o.result.stats.generated for o in outcomes),
                   "elapsed_seconds": round(sum(o.result.stats.elapsed for o in outcomes), 6)},
        "specs": specs,
    }


def write_summary(path: str | Path, outcomes: Sequence[Outcome]) -> None:
    write_text_atomic(path, json.dumps(summary(outcomes), indent=2) + "\n")


# ------------------------------------------------------------------------------ JUnit XML


def junit(outcomes: Sequence[Outcome]) -> ET.ElementTree:
    """JUnit XML as CI servers read it: one testcase per spec, a <failure> when not met."""
    failed = sum(not o.met for o in outcomes)
    total_time = f"{sum(o.result.stats.elapsed for o in outcomes):.3f}"
    root = ET.Element("testsuites", name="eoscheck", tests=str(len(outcomes)),
                      failures=str(failed), errors="0", time=total_time)
    suite = ET.SubElement(root, "testsuite", name="eoscheck", tests=str(len(outcomes)),
                          failures=str(failed), errors="0", skipped="0", time=total_time)
    for o in outcomes:
        s = o.result.stats
        case = ET.SubElement(suite, "testcase", classname=f"eoscheck.{o.spec.model}",
                             name=o.spec.name, file=str(o.spec.path), time=f"{s.elapsed:.3f}")
        details = [f"expected: {expected_label(o.spec)}", f"got: {got_label(o.result)}",
                   f"strategy {o.strategy}: {s.distinct} distinct, {s.generated} generated, "
                   f"depth {s.depth}"]
        for prop, files in o.counterexamples.items():
            details.append(f"counterexample for {prop}: {files[0]}  (eoscheck show {files[0]})")
        if not o.met:
            failure = ET.SubElement(case, "failure", message=o.message, type="ExpectationNotMet")
            failure.text = "\n".join(details)
        out = ET.SubElement(case, "system-out")
        out.text = "\n".join([o.message] + details)
    ET.indent(root)
    return ET.ElementTree(root)


def write_junit(path: str | Path, outcomes: Sequence[Outcome]) -> None:
    tree = junit(outcomes)
    text = ET.tostring(tree.getroot(), encoding="unicode", xml_declaration=False)
    write_text_atomic(path, '<?xml version="1.0" encoding="UTF-8"?>\n' + text + "\n")
