"""``eoscheck prove SPEC...``: discharge the ``[prove]`` obligations of specs with Z3.

A proof spec is an ordinary spec (validated by ``checker.spec``) with a ``[prove]`` table::

    model = "eoscheck.model.obligations:PROOF_MODEL"
    [prove]
    obligations = ["InitPidEpochInRange", ...]   # default: every obligation of the proof set
    mutation = "threshold-at-max"                # optional: a deliberately broken rule set
    timeout = 60                                 # optional: seconds per obligation
    max_k = 4                                    # optional: bound for unrolling / k-induction
    source = "package.module:PROOFS"             # optional: the ProofSet; by default the
                                                 # ``PROOFS`` next to the spec's "module:ATTR" model
    [expect]
    verdict = "holds"                            # every obligation proved
    # verdict = "violates", property = "X"       # obligation X refuted (length = its states)

Exit codes as for ``check``: 0 every spec met its expectation, 1 some did not, 2 bad input (one
line on stderr). A timeout is "unknown", which never meets "holds".
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
import time
import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import z3

from ..counterexample import CexStep, Counterexample, CounterexampleError, write_counterexample
from ..outfile import OutputError
from ..spec import Spec, SpecError, collect_spec_paths, load_spec
from .obligations import Obligation, ProofSet
from .runner import CexTrace, ObligationResult, prove

EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT = 0, 1, 2
PROVE_KEYS = ("obligations", "mutation", "timeout", "max_k", "source")
DEFAULT_TIMEOUT = 60.0
#: Z3 takes its timeout as an unsigned 32-bit count of milliseconds (about 49 days)
MAX_TIMEOUT = 4_000_000
SUMMARY_FORMAT = "eoscheck-proof-summary"
SUMMARY_VERSION = 1


class ProveInputError(ValueError):
    """A proof spec or flag is wrong; one line, path first."""


@dataclass
class ProofRun:
    """What ``[prove]`` asks for, validated."""

    spec: Spec
    proofs: ProofSet
    source: str
    names: list[str]
    mutation: str | None
    timeout: float
    max_k: int | None


@dataclass
class ProofOutcome:
    run: ProofRun
    results: list[ObligationResult]
    met: bool = False
    message: str = ""
    #: obligation -> counterexample files (json, itf)
    files: dict[str, list[Path]] = field(default_factory=dict)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("specs", nargs="+", metavar="SPEC|DIR",
                        help="proof specs (a directory means its *.toml files)")
    parser.add_argument("--obligation", action="append", metavar="NAME",
                        help="only this obligation (repeatable; must be listed in the spec)")
    parser.add_argument("--timeout", type=float, metavar="S",
                        help=f"seconds per obligation (default: the spec's, else {DEFAULT_TIMEOUT:g})")
    parser.add_argument("--out", default="counterexamples", metavar="DIR",
                        help="directory for counterexample files (default ./counterexamples)")
    parser.add_argument("--json", metavar="FILE", help="write a JSON summary")
    parser.add_argument("--junit", metavar="FILE", help="write JUnit XML (one test case per obligation)")
    parser.add_argument("--verbose", "-v", action="store_true",
                        help="also show how each problem of an obligation was decided")


# --- spec validation ------------------------------------------------------------------------------

def _default_source(spec: Spec) -> str | None:
    if ":" in spec.model:
        return spec.model.partition(":")[0] + ":PROOFS"
    return None


def load_proofs(source: str, where: str) -> ProofSet:
    module_name, _, attr = source.partition(":")
    if not module_name or not attr:
        raise ProveInputError(f"{where}: prove.source {source!r} must be 'module:ATTR'")
    try:
        obj = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError) as exc:
        raise ProveInputError(f"{where}: cannot import proof set {source!r}: {exc}") from None
    if not isinstance(obj, ProofSet):
        raise ProveInputError(f"{where}: {source!r} is not a ProofSet")
    return obj


def proof_run(spec: Spec, only: Sequence[str] | None = None, timeout: float | None = None) -> ProofRun:
    """Validate a spec's ``[prove]`` table (and the CLI's narrowing) into a ``ProofRun``."""
    where = str(spec.path)
    table: Mapping[str, Any] | None = spec.prove
    if table is None:
        raise ProveInputError(f"{where}: no [prove] table; eoscheck prove needs one (see eoscheck prove --help)")
    unknown = [k for k in table if k not in PROVE_KEYS]
    if unknown:
        raise ProveInputError(f"{where}: unknown key '{unknown[0]}' in [prove]; valid keys: "
                              f"{', '.join(sorted(PROVE_KEYS))}")
    source = table.get("source", _default_source(spec))
    if not isinstance(source, str):
        raise ProveInputError(f"{where}: [prove] needs source = \"module:ATTR\" (the ProofSet) "
                              f"when the model is not given as 'module:ATTR'")
    proofs = load_proofs(source, where)

    names = table.get("obligations", list(proofs.obligations))
    if not isinstance(names, list) or not names or not all(isinstance(n, str) for n in names):
        raise ProveInputError(f"{where}: prove.obligations must be a non-empty list of obligation names")
    for n in names:
        if n not in proofs.obligations:
            raise ProveInputError(f"{where}: unknown obligation '{n}'; valid obligations: "
                                  f"{', '.join(sorted(proofs.obligations))}")
    names = list(dict.fromkeys(names))
    if only:
        for n in only:
            if n not in names:
                raise ProveInputError(f"{where}: --obligation {n} is not among this spec's obligations "
                                      f"({', '.join(names)})")
        names = [n for n in names if n in only]

    mutation = table.get("mutation")
    if mutation is not None and (not isinstance(mutation, str) or mutation not in proofs.mutations):
        raise ProveInputError(f"{where}: unknown mutation {mutation!r}; valid mutations: "
                              f"{', '.join(sorted(proofs.mutations))}")

    spec_timeout = table.get("timeout", DEFAULT_TIMEOUT)
    if (isinstance(spec_timeout, bool) or not isinstance(spec_timeout, (int, float))
            or not 0 < spec_timeout <= MAX_TIMEOUT):
        raise ProveInputError(f"{where}: prove.timeout must be a positive number of seconds, at most "
                              f"{MAX_TIMEOUT:,}")
    max_k = table.get("max_k")
    if max_k is not None and (isinstance(max_k, bool) or not isinstance(max_k, int) or max_k < 1):
        raise ProveInputError(f"{where}: prove.max_k must be a positive integer")

    exp = spec.expect
    if exp.verdict == "violates" and exp.property not in names:
        raise ProveInputError(f"{where}: expect.property '{exp.property}' is not among the obligations "
                              f"proved here ({', '.join(names)})")
    return ProofRun(spec, proofs, source, names, mutation, float(timeout or spec_timeout), max_k)


# --- running and judging ----------------------------------------------------------------------------

def run_proofs(run: ProofRun) -> list[ObligationResult]:
    obligations: Mapping[str, Obligation] = run.proofs.build(run.mutation)
    results = []
    for name in run.names:
        ob = obligations[name]
        if run.max_k is not None:
            ob = Obligation(ob.name, ob.doc, ob.kind, ob.problems, run.max_k)
        results.append(prove(ob, run.timeout))
    return results


def judge(run: ProofRun, results: Sequence[ObligationResult]) -> tuple[bool, str]:
    exp = run.spec.expect
    if exp.verdict == "holds":
        bad = [r for r in results if r.status != "proved"]
        if not bad:
            return True, ("the obligation is proved" if len(results) == 1
                          else f"all {len(results)} obligations proved")
        r = bad[0]
        if r.status == "counterexample":
            return False, f"expected every obligation proved, but {r.name} has a counterexample"
        return False, f"expected every obligation proved, but {r.name} is unknown; holds is not proven"
    target = next(r for r in results if r.name == exp.property)
    if target.status != "counterexample":
        return False, f"expected a counterexample to {exp.property}, but it is {target.status}"
    assert target.counterexample is not None
    length = len(target.counterexample.steps)
    if exp.length is not None and length != exp.length:
        return False, f"{exp.property} is refuted, but with {length} states instead of {exp.length}"
    return True, f"{exp.property} refuted as expected ({length} states, {target.method})"


def counterexample_of(run: ProofRun, result: ObligationResult) -> Counterexample:
    trace: CexTrace | None = result.counterexample
    assert trace is not None
    steps = [CexStep(s["index"], s["action"], s["label"], dict(s["params"]), dict(s["state"]))
             for s in trace.steps]
    engine = {"name": "z3", "version": z3.get_version_string(), "strategy": f"z3 {trace.method}",
              "method": trace.method, "problem": trace.problem,
              "replayed_concretely": trace.replay_error == ""}  # no times: reruns write identical files
    if trace.method.startswith("bounded"):
        shortened = "shortest: bounded unrolling deepens one step at a time"
    else:
        shortened = "values pinned to small or boundary numbers where the claim still fails"
    return Counterexample(
        spec=run.spec.name, model=run.spec.model, variant=run.spec.variant,
        switches={"mutation": run.mutation} if run.mutation else {}, bounds={},
        property=result.name, property_doc=result.doc, kind=trace.kind, engine=engine,
        found_length=len(steps), shortened_by=shortened, steps=steps)


# --- output -----------------------------------------------------------------------------------------

def _line(r: ObligationResult) -> str:
    return f"  {r.name:30s} {r.status:15s} {r.seconds:7.2f} s (cpu {r.cpu_seconds:6.2f} s)  {r.method}"


def summary(outcomes: Sequence[ProofOutcome]) -> dict[str, Any]:
    specs = []
    for o in outcomes:
        e = o.run.spec.expect
        specs.append({
            "spec": o.run.spec.name, "path": str(o.run.spec.path), "model": o.run.spec.model,
            "source": o.run.source, "mutation": o.run.mutation, "timeout_seconds": o.run.timeout,
            "expected": {"verdict": e.verdict, "property": e.property, "length": e.length},
            "met": o.met, "message": o.message,
            "obligations": [{
                "name": r.name, "doc": r.doc, "kind": r.kind, "status": r.status, "method": r.method,
                "seconds": round(r.seconds, 6), "cpu_seconds": round(r.cpu_seconds, 6),
                "details": list(r.details),
                "counterexample": [str(p) for p in o.files.get(r.name, [])],
            } for r in o.results],
        })
    all_results = [r for o in outcomes for r in o.results]
    failed = sum(not o.met for o in outcomes)
    return {
        "format": SUMMARY_FORMAT, "version": SUMMARY_VERSION, "ok": failed == 0,
        "totals": {"specs": len(outcomes), "met": len(outcomes) - failed, "failed": failed,
                   "obligations": len(all_results),
                   "proved": sum(r.status == "proved" for r in all_results),
                   "counterexample": sum(r.status == "counterexample" for r in all_results),
                   "unknown": sum(r.status == "unknown" for r in all_results),
                   "elapsed_seconds": round(sum(r.seconds for r in all_results), 6)},
        "specs": specs,
    }


def junit(outcomes: Sequence[ProofOutcome]) -> ET.ElementTree[ET.Element]:
    """One test case per (spec, obligation); it fails when it contradicts the spec's expectation:
    under "holds" anything but proved, under "violates" the named obligation not refuted."""
    cases = []
    for o in outcomes:
        exp = o.run.spec.expect
        for r in o.results:
            if exp.verdict == "holds":
                bad = r.status != "proved"
            else:
                bad = r.name == exp.property and not o.met
            cases.append((o, r, bad))
    failures = sum(bad for _, _, bad in cases)
    total = f"{sum(r.seconds for _, r, _ in cases):.3f}"
    root = ET.Element("testsuites", name="eoscheck-prove", tests=str(len(cases)), failures=str(failures),
                      errors="0", time=total)
    suite = ET.SubElement(root, "testsuite", name="eoscheck-prove", tests=str(len(cases)),
                          failures=str(failures), errors="0", skipped="0", time=total)
    for o, r, bad in cases:
        case = ET.SubElement(suite, "testcase", classname=f"eoscheck.prove.{o.run.spec.name}", name=r.name,
                             file=str(o.run.spec.path), time=f"{r.seconds:.3f}")
        text = [f"{r.status} by {r.method} in {r.seconds:.3f} s", *r.details]
        for p in o.files.get(r.name, [])[:1]:
            text.append(f"counterexample: {p}  (eoscheck show {p})")
        if bad:
            failure = ET.SubElement(case, "failure", message=o.message or f"{r.name}: {r.status}",
                                    type="ExpectationNotMet")
            failure.text = "\n".join(text)
        out = ET.SubElement(case, "system-out")
        out.text = "\n".join(text)
    ET.indent(root)
    return ET.ElementTree(root)


def _write_text(path: str, text: str) -> None:
    from ..files import write_text_atomic  # atomic like check's reports
    write_text_atomic(path, text)


def _check_outputs(args: argparse.Namespace, runs: Sequence[ProofRun]) -> None:
    """Every file the run may write, checked as ``check`` checks its own before Z3 starts: a
    --json naming the spec, or a directory, used to fail (or overwrite the spec) after the
    proofs, with counterexamples already written."""
    from ..counterexample import counterexample_paths
    from ..preflight import PreflightError, check_output_set

    named: list[tuple[str, Path]] = []
    for flag, value in (("--json", args.json), ("--junit", args.junit)):
        if value is not None:
            named.append((flag, Path(value)))
    for pr in runs:
        for name in pr.names:
            named.extend((f"the counterexample of {pr.spec.name}", p)
                         for p in counterexample_paths(pr.spec.name, name, args.out))
    try:
        check_output_set(named, [pr.spec.path for pr in runs], args.out)
    except PreflightError as exc:
        raise ProveInputError(str(exc)) from None


# --- entry point ------------------------------------------------------------------------------------


def run(args: argparse.Namespace) -> int:
    try:
        if args.timeout is not None and not 0 < args.timeout <= MAX_TIMEOUT:
            raise ProveInputError(f"eoscheck prove: --timeout must be positive and at most {MAX_TIMEOUT:,} "
                                  "seconds")
        runs = [proof_run(load_spec(p), args.obligation, args.timeout) for p in collect_spec_paths(args.specs)]
        names = [r.spec.name for r in runs]
        dup = next((n for n in names if names.count(n) > 1), None)
        if dup is not None:
            raise ProveInputError(f"spec name {dup!r} is used twice (counterexample files would collide)")
        _check_outputs(args, runs)
    except (SpecError, ProveInputError, OutputError) as exc:
        print(f"eoscheck: error: {' '.join(str(exc).split())}", file=sys.stderr)
        return EXIT_BAD_INPUT

    outcomes: list[ProofOutcome] = []
    for pr in runs:
        mut = f", mutation {pr.mutation}" if pr.mutation else ""
        plural = "obligation" if len(pr.names) == 1 else "obligations"
        print(f"{pr.spec.name}: {len(pr.names)} {plural} (model {pr.spec.model}{mut}, "
              f"timeout {pr.timeout:g} s each)", flush=True)
        start = time.monotonic()
        results = []
        for name in pr.names:
            one = ProofRun(pr.spec, pr.proofs, pr.source, [name], pr.mutation, pr.timeout, pr.max_k)
            r = run_proofs(one)[0]
            results.append(r)
            print(_line(r), flush=True)
            if args.verbose:
                for d in r.details:
                    print(f"      {d}")
        outcome = ProofOutcome(pr, results)
        outcome.met, outcome.message = judge(pr, results)
        for r in results:
            if r.counterexample is not None:
                try:
                    files = write_counterexample(counterexample_of(pr, r), args.out)
                except CounterexampleError as exc:
                    print(f"eoscheck: error: {exc}", file=sys.stderr)
                    return EXIT_BAD_INPUT
                outcome.files[r.name] = files
                print(f"  counterexample for {r.name}: {files[0]}  (view it: eoscheck show {files[0]})")
        verdict = "met" if outcome.met else "NOT MET"
        print(f"  => {verdict}: {outcome.message} [{time.monotonic() - start:.2f} s]\n", flush=True)
        outcomes.append(outcome)

    try:
        if args.json:
            _write_text(args.json, json.dumps(summary(outcomes), indent=2) + "\n")
        if args.junit:
            tree = junit(outcomes)
            _write_text(args.junit, '<?xml version="1.0" encoding="UTF-8"?>\n'
                        + ET.tostring(tree.getroot(), encoding="unicode") + "\n")
    except OSError as exc:
        print(f"eoscheck: error: cannot write report: {exc.filename}: {exc.strerror}", file=sys.stderr)
        return EXIT_BAD_INPUT
    return EXIT_OK if all(o.met for o in outcomes) else EXIT_FAILED
