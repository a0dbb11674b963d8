"""What ``eoscheck check`` reports: verdicts against expectations, TLC-style statistics, the
verdict table, a JSON summary and JUnit XML for CI.

``judge`` is the single place that decides whether a run met its spec's expectation; the table,
the JSON summary, the JUnit file and the exit code all read its answer.
"""

from __future__ import annotations

import json
import textwrap
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from .outfile import write_output
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
    #: actions the configuration switches off (Machine.disabled_actions): not warned about
    disabled: frozenset[str] = frozenset()

    def never_fired(self) -> list[str]:
        """Actions that could fire in this configuration but never did (often a spec bug).

        Only a complete exploration can say so: a run that stopped at its first violation or at a
        limit has not tried every state, and its untried actions are not dead."""
        if self.result.verdict != "holds" or self.result.violations or self.result.limit_hit:
            return []
        return [a for a in self.result.stats.never_fired(self.actions) if a not in self.disabled]


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


def make_outcome(spec: Spec, result: Result, actions: Sequence[str],
                 disabled: frozenset[str] = frozenset()) -> Outcome:
    met, message = judge(spec, result)
    return Outcome(spec=spec, result=result, strategy=result.strategy, actions=list(actions),
                   met=met, message=message, disabled=frozenset(disabled))


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
    if s.outside:
        console.print(f"  {s.outside:,} generated states lay outside the state constraint (the bounds) and were "
                      "not explored: a verdict covers the runs inside them.")
    actions = _with_cut(outcome.actions or sorted(s.coverage), s)
    if actions:
        cut = s.outside > 0  # the column only where the bounds cut something
        cov = Table(box=None, padding=(0, 2), show_edge=False, pad_edge=False)
        cov.add_column("  action", no_wrap=True)
        cov.add_column("generated", justify="right")
        cov.add_column("distinct", justify="right")
        if cut:
            cov.add_column("outside", justify="right")
        for name in actions:
            c = s.coverage.get(name)
            gen, dis, out = (c.generated, c.distinct, c.outside) if c else (0, 0, 0)
            if gen == 0 and name in outcome.disabled:
                cov.add_row(f"  {name}", "off", "off", *(["off"] if cut else []), style="dim")
            else:
                cov.add_row(f"  {name}", f"{gen:,}", f"{dis:,}", *([f"{out:,}"] if cut else []),
                            style="yellow" if gen == 0 else None)
        console.print(cov)
    print_warnings(console, outcome)
    for note in outcome.result.notes:
        console.print(Text(f"  note: {note}", style="dim"))


def print_warnings(console: Console, outcome: Outcome, with_name: bool = False) -> None:
    """The dead-action warning: actions the configuration allows that never fired."""
    never = outcome.never_fired()
    if not never:
        return
    if with_name:  # one short line among the specs; -v gives the coverage table
        console.print(Text(f"warning: {outcome.spec.name}: never fired: {', '.join(never)}",
                           style="bold yellow"))
    else:
        console.print(Text(f"  warning: action(s) never fired: {', '.join(never)} (often a spec "
                           "bug: a guard that is never true)", style="bold yellow"))


def result_label(result: Result) -> str:
    """The verdict column: what the run found, in a few words."""
    if result.violations:
        return ", ".join(f"{v.property} ({v.length})" for v in result.violations)
    if result.verdict == "holds":
        return "holds"
    return f"incomplete ({result.limit_hit})" if result.limit_hit else "incomplete"


def print_table(console: Console, outcomes: Sequence[Outcome]) -> None:
    """The verdict table, one row per spec, laid out to the console width.

    Columns: status, spec, what was found (a violated property with its trace length, or holds),
    then distinct states and time while the width allows. A spec that meets its expectation found
    what it expects, so the expectation is shown only for failures (in the lines below the table).
    Names are never cut: a result too long for its column wraps between words, and a console too
    narrow even for the names gets two lines per spec.
    """
    width = max(console.width, 20)
    rows = [("OK" if o.met else "FAIL", o.spec.name, result_label(o.result),
             f"{o.result.stats.distinct:,}", seconds(o.result.stats.elapsed)) for o in outcomes]
    name_w = max([4] + [len(r[1]) for r in rows])
    longest_word = max([5] + [len(w) for r in rows for w in r[2].split()])
    result_natural = max([6] + [len(r[2]) for r in rows])
    number_cols = [("distinct", 3), ("time", 4)]
    widths = [max([len(h)] + [len(r[i]) for r in rows]) for h, i in number_cols]
    shown = list(range(len(number_cols)))
    fixed = 4 + 1 + name_w + 2
    while shown and fixed + longest_word + sum(widths[i] + 2 for i in shown) > width:
        shown.pop()  # drop time, then distinct, before cutting anything
    result_w = width - fixed - sum(widths[i] + 2 for i in shown)
    if result_w < longest_word:
        _print_narrow(console, rows)
    else:
        result_w = min(result_w, result_natural)
        title = "result (trace length)" if result_w >= 21 else "result"
        header = f"{'':4} {'spec':<{name_w}}  {title:<{result_w}}"
        header += "".join(f"  {number_cols[i][0]:>{widths[i]}}" for i in shown)
        console.print(Text(header.rstrip(), style="bold"))
        for status, name, result, distinct, elapsed in rows:
            numbers = {0: distinct, 1: elapsed}
            lines = textwrap.wrap(result, result_w, break_long_words=False,
                                  break_on_hyphens=False) or [""]
            line = Text.assemble((f"{status:<4} ", "bold green" if status == "OK" else "bold red"),
                                 f"{name:<{name_w}}  {lines[0]:<{result_w}}")
            line.append("".join(f"  {numbers[i]:>{widths[i]}}" for i in shown))
            line.rstrip()
            console.print(line, soft_wrap=True)
            for more in lines[1:]:
                console.print(" " * fixed + more, soft_wrap=True)
    for o in outcomes:
        if not o.met:
            # soft_wrap: one line per failure, so grep and CI logs see the whole reason
            console.print(Text.assemble(("FAIL ", "bold red"), (o.spec.name, "bold"), f": {o.message}"),
                          soft_wrap=True)
    failed = sum(not o.met for o in outcomes)
    total_states = sum(o.result.stats.distinct for o in outcomes)
    total_time = sum(o.result.stats.elapsed for o in outcomes)
    summary = (f"{len(outcomes) - failed} of {len(outcomes)} spec(s) met their expected verdict; "
               f"{total_states:,} distinct states in {seconds(total_time)}")
    console.print(Text(summary, style="bold green" if not failed else "bold red"))


def _print_narrow(console: Console, rows: list) -> None:
    """Too narrow for one row per spec: the name on its own line, so it is never cut."""
    for status, name, result, distinct, elapsed in rows:
        console.print(Text.assemble((f"{status:<5}", "bold green" if status == "OK" else "bold red"),
                                    (name, "bold")), soft_wrap=True)
        console.print(f"     {result}; {distinct} distinct, {elapsed}", soft_wrap=True,
                      highlight=False)


# ------------------------------------------------------------------------------ JSON summary


def _violation_json(v: Violation, files: list[Path]) -> dict[str, Any]:
    return {"property": v.property, "kind": v.kind, "length": v.length,
            "found_length": v.found_length, "shortened_by": v.shortened_by,
            "counterexample": [str(p) for p in files]}


def _with_cut(actions: Sequence[str], s: Stats) -> list[str]:
    """``actions`` and, after them, any action the list leaves out whose steps the constraint cut (a
    machine may not list an action that only ever leaves the bounds, e.g. Rejoin past its budget)."""
    return list(actions) + [a for a, c in s.coverage.items() if c.outside and a not in actions]


def stats_json(s: Stats, actions: Sequence[str]) -> dict[str, Any]:
    names = _with_cut(actions or sorted(s.coverage), s)
    return {
        "distinct": s.distinct, "generated": s.generated, "depth": s.depth, "queue": s.queue,
        "elapsed_seconds": round(s.elapsed, 6),
        "states_per_second": round(s.states_per_second, 3),
        "generated_per_second": round(s.generated_per_second, 3),
        "collision_probability": s.collision_probability,
        "observed_collision_probability": s.observed_collision,
        "coverage": {a: {"generated": s.coverage[a].generated if a in s.coverage else 0,
                         "distinct": s.coverage[a].distinct if a in s.coverage else 0,
                         "outside": s.coverage[a].outside if a in s.coverage else 0}
                     for a in names},
        "never_fired": s.never_fired(names),
        # generated successors the state constraint (the bounds) cut: a "holds" says nothing of them
        "outside_constraint": s.outside,
    }


def _stats_json(o: Outcome) -> dict[str, Any]:
    out = stats_json(o.result.stats, o.actions)
    out["never_fired"] = o.never_fired()
    out["disabled"] = sorted(o.disabled)
    return out


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
            "stats": _stats_json(o),
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
    write_output(path, json.dumps(summary(outcomes), indent=2) + "\n")


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
                   (f"strategy {o.strategy}: {s.distinct} distinct, {s.generated} generated, "
                    f"depth {s.depth}")]
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
    root = junit(outcomes).getroot()
    assert root is not None
    text = ET.tostring(root, encoding="unicode", xml_declaration=False)
    write_output(path, '<?xml version="1.0" encoding="UTF-8"?>\n' + text + "\n")
