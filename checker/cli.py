"""The ``eoscheck`` command: check, list, show, prove.

A thin shell over functions the tests call directly (spec, explore, report, counterexample, view).
Exit codes: 0 every spec met its expected verdict; 1 some did not; 2 bad input or an output that
cannot be written (one line on stderr, never a traceback); 130 interrupted (Ctrl-C); 128 + N
ended by signal N (143 for SIGTERM), after the engines have cleaned up.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, NoReturn

from .adhoc import resolve_specs, sweep_of
from .counterexample import (
    CounterexampleError,
    counterexample_from_violation,
    load_counterexample,
    write_counterexample,
)
from .explore.options import MAX_WORKERS, STRATEGIES
from .outfile import OutputError
from .preflight import PreflightError, check_options, check_outputs, graph_paths
from .signals import Terminated, handle_termination
from .spec import (
    DEADLOCK,
    Spec,
    SpecError,
    build_machine,
    collect_spec_paths,
    load_spec,
    spec_to_options,
)
from .sweep import print_sweep

EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT, EXIT_INTERRUPTED = 0, 1, 2, 130
ENGINES = tuple(STRATEGIES)
MAX_WIDTH = 10_000  # show --width: wider than any terminal, small enough to allocate


class UsageError(Exception):
    """Bad command-line input; printed as one line, exit 2."""


class _Parser(argparse.ArgumentParser):
    # argparse prints the whole usage block before its error; CI logs and people want one line.
    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{self.prog}: error: {message} (see {self.prog} --help)")


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text} must be at least 1")
    return value


def _workers(text: str) -> int:
    value = _positive_int(text)
    if value > MAX_WORKERS:
        raise argparse.ArgumentTypeError(f"{text} is more than {MAX_WORKERS} worker processes")
    return value


def _non_negative_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text} must not be negative")
    return value


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"{text} must be positive")
    return value


def _non_negative_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not value >= 0:
        raise argparse.ArgumentTypeError(f"{text} must not be negative")
    return value


def add_adhoc_arguments(parser: argparse.ArgumentParser, with_model: bool = False) -> None:
    what = parser.add_argument_group("what if (no file needed; validated like a spec's tables)")
    if with_model:
        what.add_argument("--model", metavar="MODEL",
                          help="run MODEL with its defaults, without a spec file")
        what.add_argument("--variant", metavar="NAME", help="run this variant of the model")
    what.add_argument("--set", action="append", metavar="SWITCH=VALUE",
                      help="override one switch (repeatable)")
    what.add_argument("--bound", action="append", metavar="NAME=VALUE",
                      help="set one bound (repeatable)" + ("; NAME=LO..HI runs once per value "
                                                            "and shows how the counts grow"
                                                            if with_model else ""))


def build_parser() -> argparse.ArgumentParser:
    from eoscheck import __version__

    parser = _Parser(prog="eoscheck", description="Explicit-state model checker for Kafka's "
                     "idempotent and transactional producer protocol.")
    parser.add_argument("--version", action="version", version=f"eoscheck {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True,
                                parser_class=_Parser)

    check = sub.add_parser("check", help="run specs and compare with their expected verdicts",
                           description="Run specs (a directory means its *.toml files) and print a "
                           "verdict table. Exit 0 when every spec meets its expected verdict, 1 "
                           "when one does not, 2 for bad input. An ad hoc run (--model, --variant, "
                           "--set, --bound) expects every property to hold and is named after its "
                           "configuration (SPEC+variant+key=value): its counterexample files never "
                           "overwrite the spec's.")
    check.add_argument("paths", nargs="*", metavar="SPEC|DIR",
                       help="spec files, or directories of *.toml specs (not recursive)")
    add_adhoc_arguments(check, with_model=True)
    eng = check.add_argument_group("engine (override the spec's [check] table)")
    eng.add_argument("--engine", choices=ENGINES, help="exploration strategy")
    eng.add_argument("--continue", dest="continue_", action="store_true",
                     help="keep going after a violation; report every violated property")
    eng.add_argument("--max-states", type=_positive_int, metavar="N",
                     help="stop after N distinct states (the verdict is then incomplete)")
    eng.add_argument("--max-depth", type=_positive_int, metavar="N",
                     help="stop at depth N (dfs: the depth bound)")
    eng.add_argument("--max-seconds", type=_positive_float, metavar="S",
                     help="stop after S seconds of wall time")
    eng.add_argument("--walks", type=_positive_int, metavar="N", help="simulate: number of walks")
    eng.add_argument("--walk-depth", type=_positive_int, metavar="N", help="simulate: walk depth")
    eng.add_argument("--seed", type=_non_negative_int, metavar="N", help="simulate: random seed")
    eng.add_argument("--no-deadlock", action="store_true", help="do not report deadlocks")
    eng.add_argument("--no-symmetry", action="store_true", help="do not reduce by symmetry")
    eng.add_argument("--view", metavar="NAME",
                     help="deduplicate on this view of the model (TLC's VIEW; 'none': no view, "
                          "even the model's default); independent of --no-symmetry")
    eng.add_argument("--check-symmetry", action="store_true",
                     help="also run without symmetry reduction and compare verdicts, shortest trace "
                          "lengths and (where computable) orbit sizes; a mismatch fails the spec")
    eng.add_argument("--workers", type=_workers, metavar="N", help="parallel: processes")
    eng.add_argument("--master", metavar="URL",
                     help="spark: master URL (default: [check.spark] master, SPARK_MASTER, "
                          "spark.master in spark-defaults.conf, local[*])")
    eng.add_argument("--checkpoint", metavar="DIR",
                     help="spark: checkpoint directory or URI (file://, hdfs://, s3a://)")
    eng.add_argument("--partitions", type=_positive_int, metavar="N",
                     help="spark: partitions of the state space (default: one per executor core)")
    eng.add_argument("--executor-memory", metavar="SIZE", help="spark: spark.executor.memory, e.g. 4g")
    eng.add_argument("--executor-timeout", type=_non_negative_float, metavar="S",
                     help="spark: seconds without a live executor before the run stops with exit 2 "
                          "(0: wait for ever; default 120)")
    out = check.add_argument_group("output")
    out.add_argument("--out", default="counterexamples", metavar="DIR",
                     help="directory for counterexample files (default ./counterexamples)")
    out.add_argument("--json", metavar="FILE", help="write a JSON summary")
    out.add_argument("--junit", metavar="FILE", help="write JUnit XML (one test case per spec)")
    out.add_argument("--graph", metavar="FILE",
                     help="write the explored state graph (.graphml or .dot; small runs only)")
    out.add_argument("--report", metavar="FILE.md|FILE.html",
                     help="write a self-contained review report: configuration, command line, "
                          "verdicts, counterexamples as message sequence charts")
    out.add_argument("-v", "--verbose", action="store_true",
                     help="statistics and coverage for every spec (failures always get them)")
    out.add_argument("--quiet", action="store_true",
                     help="only the verdict table and failures; no progress")
    out.add_argument("--no-progress", action="store_true", help="no progress display on stderr")
    check.set_defaults(func=cmd_check)

    from .cli_compare import add_compare_parser, cmd_compare
    add_compare_parser(sub, cmd_compare, _positive_int, _positive_float)

    lst = sub.add_parser("list", help="list models (variants, switches, bounds, properties) and specs")
    lst.add_argument("model", nargs="?", help="show only this model")
    lst.add_argument("--specs", default=None, metavar="DIR",
                     help="where to look for specs (default ./specs, recursively, when it exists)")
    lst.set_defaults(func=cmd_list)

    show = sub.add_parser("show", help="render a counterexample file step by step")
    show.add_argument("file", metavar="FILE", help="a counterexample .json (or .itf.json)")
    show.add_argument("--full", action="store_true", help="every field at every step")
    show.add_argument("--actor", metavar="PREFIX",
                      help="only fields whose name starts with PREFIX, e.g. client[0] or broker")
    show.add_argument("--width", type=_positive_int, metavar="N", help="output width in columns")
    show.add_argument("--chart", action="store_true",
                      help="draw the trace as a message sequence chart (lanes = actors, arrows = "
                           "messages; within 80 columns unless --width says otherwise)")
    show.set_defaults(func=cmd_show)

    prove = sub.add_parser("prove", help="discharge a spec's [prove] obligations with Z3",
                           add_help=False)
    prove.add_argument("rest", nargs=argparse.REMAINDER)
    prove.set_defaults(func=cmd_prove)
    # listed for --help only: main() hands "conform ..." to checker.cli_conform before parsing
    sub.add_parser("conform", help="run Kafka unit-test vectors against the model's rules", add_help=False)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        with handle_termination():
            jvm_before = _gateway_jvm()
            try:
                return _run(argv)
            finally:
                if jvm_before is None:
                    _no_jvm_left()
    except KeyboardInterrupt:
        print(f"eoscheck: interrupted{_where_interrupted()}", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Terminated as exc:
        print(f"eoscheck: terminated by {exc.name}{_where_interrupted()}", file=sys.stderr)
        return exc.exit_code
    except UsageError as exc:
        print(_one_line(exc), file=sys.stderr)
        return EXIT_BAD_INPUT
    except (SpecError, CounterexampleError, BadInput, PreflightError, OutputError) as exc:
        print(f"eoscheck: error: {_one_line(exc)}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except SystemExit as exc:  # --help / --version, or a signal Spark's session turned into an exit
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
        if code > 128:
            print(f"eoscheck: terminated by {_signal_name(code - 128)}{_where_interrupted()}",
                  file=sys.stderr)
        return code
    except BrokenPipeError:
        # `eoscheck show x.json | head`: the reader left; nothing to report.
        _silence_stdout()
        return EXIT_OK
    except OSError as exc:
        # The last resort for a file-system failure no check foresaw (a disk filling up, a
        # directory removed mid-run): still one line and exit 2, not a traceback.
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"eoscheck: error: {where}{exc.strerror or _one_line(exc)}", file=sys.stderr)
        return EXIT_BAD_INPUT


def _run(argv: list[str]) -> int:
    if argv[:1] == ["prove"]:
        # The prover declares its own arguments; argparse's REMAINDER cannot pass "--x" on.
        return run_prove(argv[1:])
    if argv[:1] == ["conform"]:
        from .cli_conform import run_conform
        return run_conform(argv[1:], _Parser, BadInput)
    parser = build_parser()
    args = parser.parse_args(argv)
    args.argv = argv  # the command line, for outputs that say how to reproduce them
    return int(args.func(args))


def _signal_name(signum: int) -> str:
    import signal

    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


def _gateway_jvm() -> Any:
    """The JVM process PySpark runs for this process, if any (None before the first session)."""
    context = getattr(sys.modules.get("pyspark"), "SparkContext", None)
    return getattr(getattr(context, "_gateway", None), "proc", None)


def _no_jvm_left() -> None:
    """A run that started Spark ends its JVM before the CLI exits (else it outlives the run). A JVM
    that was running before (a caller's session, as the tests share one) is left alone."""
    if _gateway_jvm() is None:
        return
    from .explore.spark_session import shutdown_jvm

    shutdown_jvm()


def _where_interrupted() -> str:
    """The partial counts of the exploration a signal cut short, with no verdict (never a
    "holds" for a run that did not finish)."""
    from .progress import interrupted_at

    at = interrupted_at()
    return f" {_one_line(Exception(at))}; no verdict" if at else ""


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())


def _silence_stdout() -> None:
    import os
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


class BadInput(ValueError):
    """Bad input found by the CLI itself (a missing path, an empty directory, ...)."""


# -------------------------------------------------------------------------------------- check


def load_specs(paths: Sequence[str]) -> list[Spec]:
    specs = [load_spec(p) for p in collect_spec_paths(paths)]
    by_name: dict[str, Spec] = {}
    for spec in specs:
        if spec.name in by_name:
            raise BadInput(f"{spec.path}: spec name {spec.name!r} is also used by "
                           f"{by_name[spec.name].path} (counterexample files would collide)")
        by_name[spec.name] = spec
    return specs


def cli_overrides(args: argparse.Namespace) -> dict[str, Any]:
    """ExploreOptions fields set by flags; None means "not given, the spec decides"."""
    return {
        "strategy": args.engine,
        "stop_at_first": False if args.continue_ else None,
        "max_states": args.max_states,
        "max_depth": args.max_depth,
        "max_seconds": args.max_seconds,
        "walks": args.walks,
        "walk_depth": args.walk_depth,
        "seed": args.seed,
        "check_deadlock": False if args.no_deadlock else None,
        "symmetry": False if args.no_symmetry else None,
        "view": args.view,
        "workers": args.workers,
        "spark_master": args.master,
        "checkpoint_dir": args.checkpoint,
        "spark_partitions": args.partitions,
        "spark_executor_memory": args.executor_memory,
        "spark_executor_timeout": args.executor_timeout,
        "record_graph": True if args.graph else None,
    }


def cmd_check(args: argparse.Namespace) -> int:
    # Validate every spec, option and output path before importing the engine or running anything.
    specs = resolve_specs(args, load_specs)
    check_options(args, specs)
    check_outputs(args, specs)

    from rich.console import Console

    from .explore import explore
    from .graph import write_graph
    from .progress import make_progress
    from .report import (
        make_outcome,
        print_stats,
        print_table,
        print_warnings,
        write_junit,
        write_summary,
    )

    overrides = cli_overrides(args)
    console = Console(highlight=False)
    outcomes: list[Any] = []
    machines: list[Any] = []
    with _one_spark_session(specs, overrides):
        _check_specs(args, specs, overrides, console, outcomes, machines, explore, write_graph,
                     make_progress, make_outcome, print_stats, print_warnings)
    print_table(console, outcomes)
    sweep = sweep_of(args)
    if sweep is not None:
        print_sweep(console, sweep, outcomes)
    traces = sum(len(o.counterexamples) for o in outcomes)
    if traces and not args.quiet and not args.verbose:
        # the shortest path as the example: a path cannot wrap, and 80 columns should hold it
        example = min((files[0] for o in outcomes for files in o.counterexamples.values()),
                      key=lambda p: len(str(p)))
        console.print(f"{traces} counterexample(s) in {args.out}/ (.json and .itf.json); view one:")
        console.print(f"  eoscheck show {example}", soft_wrap=True)
    if args.json:
        write_summary(args.json, outcomes)
    if args.junit:
        write_junit(args.junit, outcomes)
    if args.report:
        from .review import review_of_check, write_review
        write_review(args.report, review_of_check(outcomes, machines, getattr(args, "argv", None)))
    return EXIT_OK if all(o.met for o in outcomes) else EXIT_FAILED


def _one_spark_session(specs: Sequence[Spec], overrides: dict[str, Any]) -> Any:
    """One Spark session for every spec of the run that uses the Spark engine (started by the
    first, stopped after the last); the specs must agree on the session's settings."""
    import contextlib

    from .explore.spark_config import SparkConfigError
    spark_runs = [(spec, spec_to_options(spec, overrides)) for spec in specs]
    spark_runs = [(spec, o) for spec, o in spark_runs if o.strategy == "spark"]
    if not spark_runs:
        return contextlib.nullcontext()
    from .explore.spark_session import SessionSettings, one_session_for_all
    try:
        wanted = {spec.path: SessionSettings.of(o) for spec, o in spark_runs}
    except SparkConfigError as exc:
        raise BadInput(_one_line(exc)) from None
    first_path, first = next(iter(wanted.items()))
    for path, settings in wanted.items():
        if (settings.master, settings.conf) != (first.master, first.conf):
            raise BadInput(f"{path}: its Spark session ({settings.master}, {dict(settings.conf)}) "
                           f"differs from {first_path}'s ({first.master}, {dict(first.conf)}); one "
                           "Spark session serves a whole run: run them separately or give --master")

    return one_session_for_all()


def _check_specs(args: argparse.Namespace, specs: Sequence[Spec], overrides: dict[str, Any],
                 console: Any, outcomes: list[Any], machines: list[Any], explore: Any, write_graph: Any, make_progress: Any,
                 make_outcome: Any, print_stats: Any, print_warnings: Any) -> None:
    for spec in specs:
        options = spec_to_options(spec, overrides)
        if args.checkpoint and len(specs) > 1:
            # one checkpoint per spec: a directory holds one run
            options = replace(options, checkpoint_dir=f"{args.checkpoint.rstrip('/')}/{spec.name}")
        machine = build_machine(spec)
        machines.append(machine)
        progress = make_progress(enabled=not (args.no_progress or args.quiet), subject=spec.name)
        result = _explore(explore, spec, machine, options, progress)
        outcome = make_outcome(spec, result, list(machine.actions), machine.disabled_actions())
        if args.check_symmetry:
            _check_symmetry(console, machine, options, outcome)
        for violation in result.violations:
            cex = counterexample_from_violation(machine, spec, violation, result)
            outcome.counterexamples[violation.property] = write_counterexample(cex, args.out)
        detailed = args.verbose or not outcome.met
        if detailed:
            print_stats(console, outcome)
            for prop, files in outcome.counterexamples.items():
                console.print(f"  counterexample for {prop}: {files[0]} (ITF: {files[1]})",
                              soft_wrap=True)
                console.print(f"  view it: eoscheck show {files[0]}", soft_wrap=True)
        elif not args.quiet:
            print_warnings(console, outcome, with_name=True)
        if args.graph:
            _write_graph(console, args.graph, spec, result, specs, write_graph)
        if detailed:
            console.print()
        outcomes.append(outcome)


def _explore(explore: Any, spec: Spec, machine: Any, options: Any, progress: Any) -> Any:
    """Run one spec; engine failures that are the input's fault become one-line BadInput."""
    from .explore.errors import EngineSetupError
    from .explore.parallel import WorkerError
    from .fingerprint import UnstableStateError
    from .liveness import LivenessError
    from .state_view import UnknownViewError

    try:
        return explore(machine, options, progress)
    except UnstableStateError as exc:
        raise BadInput(f"{spec.path}: model {spec.model} builds an unstable state: {exc}") from None
    except EngineSetupError as exc:
        raise BadInput(f"{spec.path}: {options.strategy} engine: {_one_line(exc)}") from None
    except LivenessError as exc:
        raise BadInput(f"{spec.path}: liveness: {_one_line(exc)}") from None
    except UnknownViewError as exc:
        raise BadInput(f"{spec.path}: model {spec.model}: {exc}") from None
    except WorkerError as exc:
        # The worker's traceback ends with the exception itself: the line a user can act on.
        lines = [line for line in str(exc).splitlines() if line.strip()]
        raise BadInput(f"{spec.path}: parallel engine: {lines[-1].strip()}") from None


def _check_symmetry(console: Any, machine: Any, options: Any, outcome: Any) -> None:
    """--check-symmetry: the reduced run must agree with the full one, or the spec fails."""
    from .symmetry import check_symmetry

    report = check_symmetry(machine, options)
    console.print(f"  symmetry check: {report.summary()}", soft_wrap=True, highlight=False)
    for note in report.notes:
        console.print(f"  symmetry note: {note}", soft_wrap=True, highlight=False)
    if not report.ok:
        outcome.met = False
        outcome.message = f"symmetry check failed: {report.summary()}"


def _write_graph(console: Any, target: str, spec: Spec, result: Any, specs: Sequence[Spec],
                 write_graph: Any) -> None:
    graph = getattr(result, "graph", None)
    if graph is None:
        console.print(f"  no state graph recorded for {spec.name} (too large, or the "
                      f"{result.strategy} engine does not record one)")
        return
    # one file per spec when several run: graph.graphml -> graph.<spec>.graphml
    path = graph_paths(target, specs)[list(specs).index(spec)]
    write_graph(graph, path)
    console.print(f"  state graph: {path} ({graph.number_of_nodes():,} states, "
                  f"{graph.number_of_edges():,} transitions)", soft_wrap=True)


# -------------------------------------------------------------------------------------- list


def cmd_list(args: argparse.Namespace) -> int:
    from rich.console import Console

    from .registry import UnknownModelError, find_model, installed_models

    root = Path(args.specs if args.specs is not None else "specs")
    if args.specs is not None and not root.is_dir():
        # a directory the user named and that is not there is a typo, not an empty list
        raise BadInput(f"--specs {args.specs}: " + ("not a directory" if root.exists() else "no such directory"))
    console = Console(highlight=False)
    try:
        models = {args.model: find_model(args.model)} if args.model else installed_models()
    except UnknownModelError as exc:
        raise BadInput(str(exc)) from None
    except Exception as exc:  # noqa: BLE001 - a broken model package, named in one line
        raise BadInput(f"loading models failed ({type(exc).__name__}: {exc})") from None
    say = _Hanging(console)
    if not models:
        say("No models installed.")
    for name, md in models.items():
        say(f"model {name}: {md.doc}", hang=6, style="bold")
        say("variants:", indent=2)
        for vname, variant in md.variants.items():
            mark = " (default)" if vname == md.default_variant else ""
            sets = ", ".join(f"{k}={_toml(v)}" for k, v in variant.switches.items())
            say(f"{vname}{mark}: {variant.doc}" + (f" [{sets}]" if sets else ""), indent=4)
        if md.switches:
            say("switches:", indent=2)
            for sname, sw in md.switches.items():
                choices = f" (one of {', '.join(_toml(c) for c in sw.choices)})" if sw.choices else ""
                say(f"{sname} = {_toml(sw.default)}{choices}: {sw.doc}", indent=4)
        if md.bounds:
            say("bounds:", indent=2)
            for bname, b in md.bounds.items():
                say(f"{bname} = {b.default} (range {b.min}..{b.max}): {b.doc}", indent=4)
        say("properties:", indent=2)
        for pname, doc in md.properties.items():
            say(f"{pname}: {doc}", indent=4)
        if md.temporal:
            say("temporal properties (checked when named in check.properties):", indent=2)
            for pname, doc in md.temporal.items():
                say(f"{pname}: {doc}", indent=4)
        say("")
    if root.is_dir():
        files = sorted(root.rglob("*.toml"))
        say(f"specs under {root}:", style="bold")
        if not files:
            say("(none)", indent=2)
        for path in files:
            try:
                spec = load_spec(path)
            except SpecError as exc:
                say(f"{path}: invalid: {_one_line(exc)}", indent=2, style="red")
                continue
            if args.model and spec.model != args.model:
                continue
            expect = "holds" if spec.expect.verdict == "holds" else f"violates {spec.expect.property}"
            say(f"{path}: {spec.name} ({spec.model}/{spec.variant}) expects {expect}", indent=2)
    return EXIT_OK


class _Hanging:
    """Prints an entry wrapped at the console width, its continuation lines indented under it
    (rich would wrap them at column 0, where they read as new entries)."""

    def __init__(self, console: Any) -> None:
        self.console = console

    def __call__(self, text: str, indent: int = 0, hang: int = 4, style: str | None = None) -> None:
        import textwrap

        from rich.text import Text

        width = max(self.console.width, 40)
        lines = textwrap.wrap(text, width, initial_indent=" " * indent,
                              subsequent_indent=" " * (indent + hang), break_long_words=False,
                              break_on_hyphens=False) or [""]
        for line in lines:
            self.console.print(Text(line, style=style or ""), soft_wrap=True)


def _toml(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"'
    return str(value)


# -------------------------------------------------------------------------------------- show


def cmd_show(args: argparse.Namespace) -> int:
    from .view import ViewError, make_console, render

    if args.width is not None and args.width > MAX_WIDTH:
        # the chart allocates a canvas row per column: --width 999999999 took gigabytes
        raise BadInput(f"--width {args.width}: at most {MAX_WIDTH:,} columns")
    if args.chart and (args.full or args.actor):
        raise BadInput("--chart draws every actor at every step; --full and --actor apply to the "
                       "step-by-step view")
    cex = load_counterexample(args.file)
    if args.chart:
        return _show_chart(cex, args.width)
    console = make_console(width=args.width)
    try:
        render(cex, console, full=args.full, actor=args.actor)
    except ViewError as exc:
        raise BadInput(f"{args.file}: {exc}") from None
    except RecursionError:
        raise BadInput(f"{args.file}: a value is nested too deeply to show") from None
    return EXIT_OK


def _show_chart(cex: Any, width: int | None) -> int:
    from rich.text import Text

    from .chart import chart_of_counterexample
    from .chart_text import lines_styled
    from .view import make_console

    width = width or 80
    if width < 40:
        raise BadInput(f"--width {width}: a chart needs at least 40 columns")
    console = make_console(width=max(width, 40))
    for line, style in lines_styled(chart_of_counterexample(cex), width):
        console.print(Text(line, style=style or ""), soft_wrap=True)
    return EXIT_OK


# -------------------------------------------------------------------------------------- prove


def cmd_prove(args: argparse.Namespace) -> int:
    return run_prove(args.rest)


def run_prove(argv: Sequence[str]) -> int:
    import importlib

    try:
        cli_prove = importlib.import_module(f"{__package__}.smt.cli_prove")
    except ModuleNotFoundError as exc:
        if exc.name not in (f"{__package__}.smt.cli_prove", f"{__package__}.smt"):
            raise  # the prover exists but one of its imports is missing: show the real cause
        raise BadInput("prove is not available yet") from None
    parser = _Parser(prog="eoscheck prove",
                     description="Discharge the [prove] obligations of specs with Z3.")
    cli_prove.add_arguments(parser)
    # The prover names its own arguments; make sure SPEC... is there whatever it declares.
    if not any(not a.option_strings for a in parser._actions):
        parser.add_argument("specs", nargs="+", metavar="SPEC")
    prove_args = parser.parse_args(list(argv))
    return int(cli_prove.run(prove_args))


__all__ = [
    "DEADLOCK",
    "EXIT_BAD_INPUT",
    "EXIT_FAILED",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "build_parser",
    "cli_overrides",
    "collect_spec_paths",
    "load_specs",
    "main",
]


if __name__ == "__main__":  # python -m eoscheck.checker.cli (the tests' subprocesses)
    sys.exit(main())
