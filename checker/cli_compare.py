"""``eoscheck compare SPEC --variants A,B[,C]``: one spec under several configurations.

Columns: each variant of ``--variants`` (default: the spec's own), crossed with each value of
``--switch NAME=V1,V2`` when given. ``--set`` and ``--bound`` apply to every column. Exit codes as
``check``: the column that is the spec's own configuration (its variant, nothing changed) is judged
against the spec's ``[expect]``; 0 when it meets it (or no column is the spec's own), 1 when it
does not, 2 for bad input.
"""

from __future__ import annotations

import argparse
import shlex
from dataclasses import replace
from typing import Any

from .adhoc import _label, bound_values, check_variant, switch_overrides
from .compare import Column, Comparison, Divergence, divergences, properties_of, to_json
from .registry import find_model
from .spec import Spec, SpecError, build_machine, load_spec, spec_to_options

DESCRIPTION = __doc__.split("\n\n", 1)[1].replace("\n", " ").replace("``", "") if __doc__ else ""
#: fields of a "differs" divergence shown before "... and N more"
DIFF_SHOWN = 12


def add_compare_parser(sub: Any, func: Any, positive_int: Any, positive_float: Any) -> None:
    cmp = sub.add_parser("compare", help="one spec under several variants side by side, and the "
                         "step where they part ways", description=DESCRIPTION)
    cmp.add_argument("spec", metavar="SPEC", help="a spec file (model, bounds, properties)")
    cmp.add_argument("--variants", metavar="A,B[,C]",
                     help="the variants to compare (default: the spec's own)")
    cmp.add_argument("--switch", metavar="NAME=V1,V2",
                     help="also compare these values of one switch (crossed with --variants)")
    cmp.add_argument("--set", action="append", metavar="SWITCH=VALUE",
                     help="override one switch in every column (repeatable)")
    cmp.add_argument("--bound", action="append", metavar="NAME=VALUE",
                     help="set one bound in every column (repeatable)")
    cmp.add_argument("--max-states", type=positive_int, metavar="N",
                     help="stop each run after N distinct states (its verdicts are then incomplete)")
    cmp.add_argument("--max-seconds", type=positive_float, metavar="S",
                     help="stop each run after S seconds")
    cmp.add_argument("--no-symmetry", action="store_true", help="do not reduce by symmetry")
    cmp.add_argument("--json", metavar="FILE", help="write the comparison as JSON")
    cmp.add_argument("--report", metavar="FILE.md|FILE.html",
                     help="write a self-contained review report: configuration, command line, the "
                          "table, the diverging step, counterexamples as message sequence charts")
    cmp.add_argument("--out", metavar="DIR",
                     help="also write the counterexamples of the properties whose verdicts differ "
                          "(named SPEC+column.PROPERTY.json) into DIR")
    cmp.add_argument("--no-progress", action="store_true", help="no progress display on stderr")
    cmp.set_defaults(func=func)


def _split(text: str, flag: str) -> list[str]:
    items = [t.strip() for t in text.split(",")]
    if any(not t for t in items):
        raise SpecError(f"{flag} {text!r}: expected a comma-separated list with no empty item")
    if len(set(items)) != len(items):
        raise SpecError(f"{flag} {text!r}: an item is named twice")
    return items


def build_columns(args: argparse.Namespace, spec: Spec) -> list[tuple[str, Spec, bool]]:
    """(label, configured spec, whether it is the spec's own configuration) for every column."""
    md = find_model(spec.model)
    variants = ([check_variant(md, v) for v in _split(args.variants, "--variants")]
                if args.variants else [spec.variant])
    common = switch_overrides(md, args.set or [])
    bounds = {**spec.bounds, **bound_values(md, args.bound or [])}
    unchanged = not common and bounds == dict(spec.bounds)
    alternatives: list[dict[str, Any]] = [{}]
    if args.switch:
        name, eq, values = args.switch.partition("=")
        if not eq or not name.strip():
            raise SpecError(f"--switch {args.switch!r}: expected NAME=V1,V2")
        alternatives = [switch_overrides(md, [f"{name.strip()}={v}"])
                        for v in _split(values, "--switch")]
    columns: list[tuple[str, Spec, bool]] = []
    for variant in variants:
        for alt in alternatives:
            overrides = {**spec.switch_overrides, **common, **alt}
            switches = md.resolve_switches(variant, overrides)
            label = "+".join([variant, *(f"{k}={_label(v)}" for k, v in alt.items())])
            own = unchanged and variant == spec.variant and switches == dict(spec.switches)
            columns.append((label, replace(spec, variant=variant, switches=switches,
                                           switch_overrides=overrides, bounds=bounds), own))
    if len(columns) < 2:
        raise SpecError("compare needs at least two configurations: --variants A,B or "
                        "--switch NAME=V1,V2")
    return columns


def cmd_compare(args: argparse.Namespace) -> int:
    from .cli import EXIT_FAILED, EXIT_OK, _explore
    from .outfile import OutputError, check_directory, check_output, same_file
    from .preflight import PreflightError, refuse_path_models_on_spark

    spec = load_spec(args.spec)
    configured = build_columns(args, spec)
    try:
        refuse_path_models_on_spark([spec], None)
    except PreflightError as exc:
        raise SpecError(str(exc)) from None
    try:
        if args.report is not None:
            from .preflight import check_report
            check_report(args.report)
            others = [(f, p) for f, p in (("--json", args.json), ("the spec", args.spec)) if p]
            for flag, other in others:
                if same_file(args.report, other):
                    raise OutputError(f"{args.report}: named for --report and {flag}; give each "
                                      "its own file")
        if args.json is not None:
            check_output(args.json, "--json")
        if args.out is not None:
            check_directory(args.out, "--out")
    except OutputError as exc:
        raise SpecError(str(exc)) from None

    from rich.console import Console

    from .explore import explore
    from .progress import make_progress
    from .report import judge

    overrides = {"stop_at_first": False,  # every property gets its own verdict
                 "max_states": args.max_states, "max_seconds": args.max_seconds,
                 "symmetry": False if args.no_symmetry else None}
    columns: list[Column] = []
    for label, cspec, own in configured:
        machine = build_machine(cspec)
        progress = make_progress(enabled=not args.no_progress, subject=f"{spec.name} [{label}]")
        result = _explore(explore, cspec, machine, spec_to_options(cspec, overrides), progress)
        column = Column(label, cspec, machine, result)
        if own:
            column.met, column.message = judge(spec, result)
        columns.append(column)
    props = properties_of(spec, columns[0].machine, columns)
    comparison = Comparison(spec, columns, props, divergences(columns, props))
    console = Console(highlight=False)
    render(console, comparison)
    if args.out is not None:
        write_counterexamples(console, comparison, args.out)
    if args.json is not None:
        import json

        from .outfile import write_output

        command = "eoscheck " + shlex.join(getattr(args, "argv", None) or ["compare", args.spec])
        write_output(args.json, json.dumps(to_json(comparison, command), indent=2,
                                           ensure_ascii=False, default=str) + "\n")
    if args.report is not None:
        from .review import review_of_compare, write_review
        write_review(args.report, review_of_compare(comparison, getattr(args, "argv", None)))
    return EXIT_OK if comparison.met else EXIT_FAILED


def write_counterexamples(console: Any, comparison: Comparison, directory: str) -> None:
    """The failing columns' traces of the differing properties, for ``eoscheck show``."""
    from .counterexample import counterexample_from_violation, write_counterexample

    differing = set(comparison.differing())
    for c in comparison.columns:
        named = replace(c.spec, name=f"{comparison.spec.name}+{c.label}")
        for v in c.result.violations:
            if v.property in differing:
                cex = counterexample_from_violation(c.machine, named, v, c.result)
                path = write_counterexample(cex, directory)[0]
                # unwrapped: a path cut over two lines cannot be pasted
                console.print()
                console.print(f"counterexample of {v.property} under {c.label}: {path}",
                              soft_wrap=True, highlight=False)
                console.print(f"  view it: eoscheck show {path}", soft_wrap=True, highlight=False)


# ------------------------------------------------------------------------------ terminal output


def render(console: Any, comparison: Comparison) -> None:
    say = _printer(console)
    spec = comparison.spec
    defaults = {n: b.default for n, b in find_model(spec.model).bounds.items()}
    # the bounds the spec sets; the rest are the model's defaults (eoscheck list MODEL)
    bounds = ", ".join(f"{k}={v}" for k, v in comparison.columns[0].spec.bounds.items()
                       if defaults.get(k) != v)
    bounds = f"bounds {bounds}, others default" if bounds else "default bounds"
    say(f"compare {spec.name} ({spec.model}; {bounds})", style="bold")
    say("")
    header = ["property", *(c.label for c in comparison.columns)]
    natural = sum(max(len(h), 15) + 2 for h in header)
    if natural > max(console.width, 40):
        # long labels (switch settings): letters in the table, a legend above it
        header = ["property", *(chr(ord("A") + i) for i in range(len(comparison.columns)))]
        for letter, c in zip(header[1:], comparison.columns):
            say(f"{letter} = {c.label}", indent=2)
        say("")
    rows = [[p, *(c.cell(p).label() for c in comparison.columns)] for p in comparison.properties]
    rows.append(["states explored", *(f"{c.result.stats.distinct:,}"
                                      for c in comparison.columns)])
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    line = "  ".join
    say(line(h.ljust(w) for h, w in zip(header, widths)).rstrip(), style="bold")
    for row in rows:
        mark = row[0] in comparison.differing()
        say(line(v.ljust(w) for v, w in zip(row, widths)).rstrip(), style="yellow" if mark else None)
    incomplete = [c for c in comparison.columns if c.result.limit_hit]
    for c in incomplete:
        say(f"{c.label}: stopped at the {c.result.limit_hit} limit; its 'holds' are not proven")
    differing = comparison.differing()
    if not differing:
        say("")
        say("every property has the same verdict in every column"
            + (" (an incomplete run proves nothing)" if incomplete else ""))
    for d in comparison.divergences:
        say("")
        _render_divergence(say, comparison, d)
    for c in comparison.columns:
        if c.met is not None:
            say("")
            status = "OK" if c.met else "FAIL"
            say(f"{status} {c.label} is the spec's own configuration: {c.message}",
                style=None if c.met else "red")


def _render_divergence(say: Any, comparison: Comparison, d: Divergence) -> None:
    failing = next(c for c in comparison.columns if c.label == d.failing)
    say(f"{d.property}: violated under {d.failing} (trace of {d.trace_length} states), holds "
        f"under {d.passing}.", style="bold")
    say(f"Replaying {failing.label}'s shortest counterexample under {d.passing}:", indent=2)
    for i, label in enumerate(d.prefix, start=1):
        say(f"{i:>3}. {label}", indent=2)
    if d.kind == "none":
        say(d.summary(), indent=2)
        return
    say(f"{d.index:>3}. {d.label}" if d.index else "  0. Initial state", indent=2, style="bold")
    say(f"<- {d.summary()}: that step is the fix", indent=7, style="bold green")
    if d.kind == "refused":
        if d.alternatives:
            say(f"{d.passing} enables instead: {'; '.join(d.alternatives)}", indent=7)
        else:
            say(f"{d.passing} enables no step here", indent=7)
    width = max(len(d.failing), len(d.passing)) + 1
    for name, (a, b) in list(d.diff.items())[:DIFF_SHOWN]:
        say(f"{name}:", indent=7)
        say(f"{(d.failing + ':').ljust(width)} {_value(a)}", indent=9)
        say(f"{(d.passing + ':').ljust(width)} {_value(b)}", indent=9)
    if len(d.diff) > DIFF_SHOWN:
        say(f"... and {len(d.diff) - DIFF_SHOWN} more fields differ", indent=7)
    if d.kind == "differs":
        if d.later_refusal is None:
            say(f"From its own state {d.passing} goes on to take every later step of the trace.",
                indent=7)
        else:
            index, label = d.later_refusal
            say(f"From its own state {d.passing} goes on until step {index}, which it refuses: "
                f"{label}", indent=7)


def _value(value: Any) -> str:
    return "(absent)" if value is None else str(value)


def _printer(console: Any) -> Any:
    import textwrap

    from rich.text import Text

    def say(text: str, indent: int = 0, style: str | None = None) -> None:
        width = max(console.width, 40)
        lines = textwrap.wrap(text, width, initial_indent=" " * indent,
                              subsequent_indent=" " * (indent + 4), break_long_words=False,
                              break_on_hyphens=False, drop_whitespace=False) or [""]
        for chunk in lines:
            console.print(Text(chunk.rstrip(), style=style or ""), soft_wrap=True)
    return say
