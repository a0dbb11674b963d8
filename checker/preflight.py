"""``eoscheck check`` refuses bad options and bad output paths before anything runs.

A contradiction (``--master`` for a BFS run, one file named for two outputs) or an output that
cannot be written (a directory, a read-only file, a foreign file where a counterexample would go)
used to surface after the exploration, or silently lose one output. Here every such problem is a
``PreflightError``: one line, exit 2, nothing run and nothing written.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from .counterexample import counterexample_paths, is_ours
from .outfile import OutputError, check_directory, check_output, same_file
from .pathmodel import is_path_model
from .spec import DEADLOCK, Spec, model_of

GRAPH_SUFFIXES = (".graphml", ".dot", ".gv")

# flag -> (attribute on the parsed arguments, the engine it belongs to)
ENGINE_FLAGS = {
    "--master": ("master", "spark"),
    "--checkpoint": ("checkpoint", "spark"),
    "--partitions": ("partitions", "spark"),
    "--executor-memory": ("executor_memory", "spark"),
    "--executor-timeout": ("executor_timeout", "spark"),
    "--workers": ("workers", "parallel"),
    "--walks": ("walks", "simulate"),
    "--walk-depth": ("walk_depth", "simulate"),
    "--seed": ("seed", "simulate"),
}


class PreflightError(ValueError):
    """A contradictory option or an unwritable output; one line."""


def check_options(args: argparse.Namespace, specs: Sequence[Spec]) -> None:
    """Options that contradict each other or the engine that will run."""
    for flag, (attr, engine) in ENGINE_FLAGS.items():
        if getattr(args, attr, None) is None:
            continue
        if args.engine is not None and args.engine != engine:
            raise PreflightError(f"{flag} applies only to the {engine} engine, not --engine "
                                 f"{args.engine}")
        if args.engine is None:
            other = next((s for s in specs if s.check.strategy != engine), None)
            if other is not None:
                raise PreflightError(f"{flag} applies only to the {engine} engine, but "
                                     f"{other.path} runs {other.check.strategy} (add --engine "
                                     f"{engine})")
    from .explore.spark_config import SparkConfigError, check_master, check_memory
    try:
        if getattr(args, "master", None) is not None:
            check_master(args.master, "--master")
        if getattr(args, "executor_memory", None) is not None:
            check_memory(args.executor_memory, "--executor-memory")
    except SparkConfigError as exc:
        raise PreflightError(str(exc)) from None
    refuse_path_models_on_spark(specs, args.engine)
    if args.quiet and getattr(args, "verbose", False):
        raise PreflightError("--quiet and --verbose contradict each other; choose one")


def refuse_path_models_on_spark(specs: Sequence[Spec], engine: str | None) -> None:
    """Spark executors import a model by its module name on other machines, where a model file
    given by path is not; such a run is refused before anything starts."""
    for spec in specs:
        if is_path_model(spec.model) and (engine or spec.check.strategy) == "spark":
            raise PreflightError(f"{spec.path}: model {spec.model} is loaded from a file, which Spark "
                                 "executors cannot import; run it with --engine bfs or parallel")


def graph_paths(target: str, specs: Sequence[Spec]) -> list[Path]:
    """Where --graph writes: the file itself for one spec, one file per spec for several."""
    path = Path(target)
    if len(specs) <= 1:
        return [path]
    return [path.with_name(f"{path.stem}.{s.name}{path.suffix}") for s in specs]


def candidate_properties(spec: Spec) -> list[str]:
    """The properties a run of ``spec`` may report violated (each gets counterexample files)."""
    names = list(spec.check.properties) if spec.check.properties else list(model_of(spec).properties)
    return names + [DEADLOCK]


def check_outputs(args: argparse.Namespace, specs: Sequence[Spec]) -> None:
    """Every file the run may write is writable, and no two outputs are the same file."""
    try:
        _check_outputs(args, specs)
    except OutputError as exc:
        raise PreflightError(str(exc)) from None


def _check_outputs(args: argparse.Namespace, specs: Sequence[Spec]) -> None:
    spec_files = [s.path for s in specs]
    named: list[tuple[str, Path]] = []  # (what, path) for every output file
    if args.graph and Path(args.graph).suffix.lower() not in GRAPH_SUFFIXES:
        raise PreflightError(f"{args.graph}: --graph writes .graphml or .dot files")
    report = getattr(args, "report", None)
    if report is not None:
        check_report(report)
    for flag, value in (("--json", args.json), ("--junit", args.junit), ("--graph", args.graph)):
        if value == "":
            raise PreflightError(f"{flag}: the file name is empty")
    for flag, value in (("--json", args.json), ("--junit", args.junit), ("--report", report)):
        if value is not None:
            named.append((flag, Path(value)))
    if args.graph:
        named.extend(("--graph", p) for p in graph_paths(args.graph, specs))
    for spec in specs:
        for prop in candidate_properties(spec):
            for path in counterexample_paths(spec.name, prop, args.out):
                named.append((f"the counterexample of {spec.name}", path))
    check_output_set(named, spec_files, args.out)


def check_output_set(named: Sequence[tuple[str, Path]], spec_files: Sequence[Path],
                     out_dir: str) -> None:
    """The files one run may write (``what`` names each; counterexamples' start "the
    counterexample"): none is an input spec, no two are the same file, each is writable, and no
    counterexample would replace a file eoscheck did not write. Raises PreflightError or
    OutputError."""
    check_directory(out_dir, "--out")
    for what, path in named:
        if any(same_file(path, s) for s in spec_files):
            raise PreflightError(f"{path}: {what} would overwrite a spec file")
    for i, (what, path) in enumerate(named):
        for other_what, other in named[:i]:
            if same_file(path, other):
                raise PreflightError(f"{path}: named for two outputs ({other_what} and {what}); "
                                     "give each its own file")
    for what, path in named:
        check_output(path, what)
        if what.startswith("the counterexample"):
            refuse_foreign(path)


def check_report(path: str) -> None:
    """--report: a .md or .html file that can be written."""
    from .review import ReportPathError, check_report_path

    try:
        check_report_path(path)
    except ReportPathError as exc:
        raise PreflightError(str(exc)) from None


def refuse_foreign(path: Path) -> None:
    if path.exists() and not is_ours(path):
        raise PreflightError(f"{path}: exists and is not an eoscheck counterexample; not "
                             "overwriting it (move it or choose another --out)")
