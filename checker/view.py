"""``eoscheck show``: a counterexample rendered for a terminal, a pipe or a CI log.

One block per step: its index and action, then only the fields that changed (old -> new); the
initial state is shown whole. ``full`` shows every field at every step; ``actor`` keeps the fields
whose name starts with a prefix (``client[0]``, ``broker``). Colour only when stdout is a terminal
(rich decides, and honours NO_COLOR); the text is the same either way, so a piped trace reads the
same as an interactive one.
"""

from __future__ import annotations

import json
import sys
from typing import Any, TextIO

from rich.console import Console
from rich.table import Table
from rich.text import Text

from .counterexample import Counterexample

ABSENT = object()


class ViewError(ValueError):
    """The viewer was asked for something the trace does not hold (one line)."""


def fmt(value: Any) -> str:
    """A field value as compact JSON (strings quoted, so "1" and 1 differ visibly)."""
    if value is ABSENT:
        return "(absent)"
    return json.dumps(value, ensure_ascii=False)


def actors(cex: Counterexample) -> list[str]:
    """The actor prefixes present in the trace (the part of each field name before the first dot)."""
    seen: dict[str, None] = {}
    for step in cex.steps:
        for name in step.state:
            seen[name.split(".", 1)[0]] = None
    return list(seen)


class _PagerFriendlyConsole(Console):
    """`eoscheck show x.json | head` is normal use: a closed pipe is not an error.

    rich turns a broken pipe into SystemExit(1); the CLI maps BrokenPipeError to exit 0 instead.
    """

    def on_broken_pipe(self) -> None:
        raise BrokenPipeError


def make_console(file: TextIO | None = None, width: int | None = None) -> Console:
    out = file if file is not None else sys.stdout
    # force_terminal=None lets rich decide from isatty (and NO_COLOR / TERM=dumb), so pipes and
    # CI logs get plain text; highlight=False keeps rich from colouring numbers in our values.
    return _PagerFriendlyConsole(file=out, width=width, highlight=False, soft_wrap=False,
                                 emoji=False)


def render(cex: Counterexample, console: Console, full: bool = False,
           actor: str | None = None) -> None:
    if actor is not None and not any(n.startswith(actor) for s in cex.steps for n in s.state):
        raise ViewError(f"no field starts with {actor!r}; actors in this trace: "
                        f"{', '.join(actors(cex)) or '(none)'}")
    _header(cex, console, full, actor)
    previous: dict[str, Any] = {}
    last = len(cex.steps) - 1
    for step in cex.steps:
        title = Text.assemble((f"Step {step.index}", "bold"), "  ", (step.label, "bold cyan"))
        if step.index == last:
            verdict = "deadlock: no step enabled" if cex.kind == "deadlock" else f"violates {cex.property}"
            title.append(f"  <- {verdict}", style="bold red")
        console.print()
        console.print(title)
        names = [n for n in step.state if actor is None or n.startswith(actor)]
        if step.index != 0:
            # Fields that disappeared are changes too; keep their order after the present ones.
            names += [n for n in previous if n not in step.state and (actor is None or n.startswith(actor))]
        grid = Table.grid(padding=(0, 1))
        grid.add_column(style="magenta", no_wrap=False, max_width=36)
        grid.add_column(overflow="fold")
        shown = 0
        for name in names:
            new = step.state.get(name, ABSENT)
            old = previous.get(name, ABSENT) if step.index != 0 else ABSENT
            changed = step.index != 0 and old != new
            if step.index == 0 or full or changed:
                grid.add_row("  " + name, _value(old, new, changed))
                shown += 1
        if shown:
            console.print(grid)
        else:
            scope = f" to {actor}*" if actor else ""
            console.print(Text(f"  (no change{scope})", style="dim"))
        previous = step.state


def _value(old: Any, new: Any, changed: bool) -> Text:
    if not changed:
        return Text(fmt(new))
    return Text.assemble((fmt(old), "red"), " -> ", (fmt(new), "bold green"))


def _header(cex: Counterexample, console: Console, full: bool, actor: str | None) -> None:
    kind = f" ({cex.kind})" if cex.kind and cex.kind != "?" else ""
    console.print(Text.assemble(("Counterexample: ", "bold"), (cex.spec, "bold"),
                                (f" violates {cex.property}{kind}", "bold red")))
    if cex.property_doc:
        console.print(Text(f"  {cex.property_doc}", style="italic"))
    console.print(Text(f"  model {cex.model}, variant {cex.variant}"))
    if cex.bounds:
        console.print(Text("  bounds " + ", ".join(f"{k}={v}" for k, v in cex.bounds.items())))
    if cex.switches:
        console.print(Text("  switches " + ", ".join(f"{k}={fmt(v)}" for k, v in cex.switches.items())))
    length = f"  length {cex.length} states"
    if cex.found_length != cex.length:
        length += f", found with {cex.found_length}"
    if cex.shortened_by:
        length += f"; {cex.shortened_by}"
    console.print(Text(length))
    engine = cex.engine
    if engine:
        parts = [f"engine {engine.get('strategy', '?')}"]
        if isinstance(engine.get("distinct"), int):
            parts.append(f"{engine['distinct']:,} distinct states")
        console.print(Text("  " + ", ".join(parts)))
    mode = "every field at each step" if full else "fields that changed at each step"
    if actor:
        mode += f", only {actor}*"
    console.print(Text(f"  showing {mode}", style="dim"))
