"""``eoscheck conform``: the command comes from a model package, found through the
``eoscheck.conformance`` entry point group (as models are through ``eoscheck.models``), so the
engine never imports a model by name. An entry point names a ``COMMAND`` tuple
``(add_arguments(parser), run(args) -> exit code, (exception types meaning bad input, ...))``.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from importlib.metadata import entry_points
from typing import Any


def find_command() -> tuple[Any, Any, tuple[type[BaseException], ...]] | None:
    for ep in sorted(entry_points(group="eoscheck.conformance"), key=lambda e: e.name):
        return ep.load()
    return None


def run_conform(argv: Sequence[str], parser_class: type[argparse.ArgumentParser], bad_input: type[Exception]) -> int:
    command = find_command()
    if command is None:
        raise bad_input("conform is not available: no package publishes an 'eoscheck.conformance' entry point")
    add_arguments, run, input_errors = command
    parser = parser_class(prog="eoscheck conform",
                          description="Run Kafka unit-test vectors against the model's rules; print a table per "
                                      "mechanism (agree / disagree / not expressible) and every difference. "
                                      "Exit 0 when nothing disagrees, 1 when something does, 2 for bad input.")
    add_arguments(parser)
    args = parser.parse_args(list(argv))
    try:
        return int(run(args))
    except input_errors as exc:
        raise bad_input(str(exc)) from None
