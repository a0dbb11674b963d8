"""``eoscheck conform VECTORS.json``: the command's arguments and its run (found by the engine's
CLI through the ``eoscheck.conformance`` entry point; exit 0 nothing disagrees, 1 something
does, 2 bad input)."""

from __future__ import annotations

import argparse
import sys

from eoscheck.checker.outfile import OutputError, check_output, same_file, write_output

from ..api.protocol import PROFILES
from .harness import DISAGREE, dumps, run_file
from .report import render
from .vectors import VectorFileError, load_vectors


class ConformInputError(ValueError):
    """Bad input: printed as one line, exit 2."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("vectors", metavar="VECTORS.json", help="a vector file (the format of "
                        "kafka-unit-test-vectors.sample.json; see docs/conformance.md, 'Adding vectors')")
    parser.add_argument("--variant", choices=sorted(PROFILES), metavar="NAME",
                        help="the Kafka version to answer as (default: the one matching the file's "
                             f"source commit); one of {', '.join(PROFILES)}")
    parser.add_argument("--json", metavar="FILE", help="also write the result as JSON")
    parser.add_argument("--verbose", action="store_true", help="list every field the model does not keep")


def run(args: argparse.Namespace) -> int:
    try:
        vf = load_vectors(args.vectors)
    except VectorFileError as exc:
        raise ConformInputError(str(exc)) from None
    if args.json is not None:
        # Before the run, as check does: --json naming the vector file used to replace it.
        if same_file(args.json, args.vectors):
            raise ConformInputError(f"{args.json}: --json would overwrite the vector file")
        try:
            check_output(args.json, "--json")
        except OutputError as exc:
            raise ConformInputError(str(exc)) from None
    result = run_file(vf, args.variant)
    print(render(result, verbose=args.verbose))
    if args.json:
        try:
            write_output(args.json, dumps(result) + "\n")
        except OutputError as exc:
            raise ConformInputError(str(exc)) from None
    sys.stdout.flush()
    return 1 if any(v.outcome == DISAGREE for v in result.vectors) else 0


#: what the engine's CLI loads through the entry point
COMMAND = (add_arguments, run, (ConformInputError,))
