"""``eoscheck show``: a counterexample rendered for a terminal, a pipe or a CI log.

One block per step: its index and action, then only the fields that changed; the initial state is
shown whole. A changed scalar reads ``old -> new``. A changed list reads as an element diff, one
line per element, so a step tells what happened rather than repeating two whole lists::

    leader.log         + 2: client0/r1 (pid 0, epoch 1, seq 1)
    network.requests   - Produce(client0/r1, pid 0, epoch 1, seq 1, conn 1)
    client[0].batches  ~  r1 to-retry (pid 0, epoch 1, seq 1, reset, created 0)
                       -> r1 in-flight (pid 0, epoch 1, seq 1, reset, created 0)

(``+`` added, ``-`` removed, ``~`` changed in place; a dict diffs by key the same way.) ``full``
shows every field at every step, lists whole (a changed one followed by its element diff);
``actor`` keeps the fields whose name starts with a prefix (``client[0]``, ``broker``).

The text is laid out here, not by rich: wrapped lines keep a hanging indent under their element
and never pass the console width (80 columns in a pipe unless COLUMNS says otherwise). Colour only
when stdout is a terminal (rich decides, and honours NO_COLOR); the text is the same either way,
so a piped trace reads the same as an interactive one.
"""

from __future__ import annotations

import difflib
import json
import re
import sys
from typing import Any, TextIO

from rich.console import Console
from rich.text import Text

from .counterexample import Counterexample

ABSENT = object()

# Below this many columns for values, a step's names go on their own lines (narrow terminals).
MIN_VALUE_COLUMNS = 28
# Within a block of replaced elements of unequal sizes, an old and a new element this similar are
# shown as one element changed in place (~) rather than a removal and an addition.
SAME_ELEMENT_RATIO = 0.5

OLD = "red"
NEW = "green"
NAME = "magenta"

# One logical output line and the indent of its continuation lines when it wraps.
Entry = tuple[Text, int]


class ViewError(ValueError):
    """The viewer was asked for something the trace does not hold (one line)."""


def fmt(value: Any) -> str:
    """A field value as compact JSON (strings quoted, so "1" and 1 differ visibly)."""
    if value is ABSENT:
        return "(absent)"
    return json.dumps(value, ensure_ascii=False)


def fmt_element(value: Any) -> str:
    """A list element: strings bare, since models use them as one-line descriptions.

    A string with a newline or tab stays JSON-escaped so it cannot break the layout.
    """
    return value if isinstance(value, str) and value.isprintable() else fmt(value)


def actors(cex: Counterexample) -> list[str]:
    """The actor prefixes in the trace (each field name's part before the first dot)."""
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


# ------------------------------------------------------------------------------------ rendering


def render(cex: Counterexample, console: Console, full: bool = False,
           actor: str | None = None) -> None:
    if actor is not None and not any(n.startswith(actor) for s in cex.steps for n in s.state):
        raise ViewError(f"no field starts with {actor!r}; actors in this trace: "
                        f"{', '.join(actors(cex)) or '(none)'}")
    width = max(console.width, 20)
    _header(cex, console, width, full, actor)
    previous: dict[str, Any] = {}
    last = len(cex.steps) - 1
    stutter = is_stutter(cex)
    for position, step in enumerate(cex.steps):
        initial = position == 0
        head = f"Step {step.index}  "
        title = Text.assemble((head, "bold"), (step.label, "bold cyan"))
        console.print()
        if cex.loop is not None and position == cex.loop and not stutter:
            _emit(console, wrap(Text(f"=== loop starts here: steps {cex.loop}..{last} repeat forever ===",
                                     style="bold yellow"), width, 4))
        if position == last:
            verdict = ("deadlock: no step enabled" if cex.kind == "deadlock"
                       else f"violates {cex.property}")
            if cex.loop is not None:
                verdict = (f"stays here forever (stutters); {verdict}" if stutter else
                           f"same state as step {cex.loop - 1}, back to step {cex.loop}; {verdict}")
            verdict_text = Text(f"<- {verdict}", style="bold red")
            if len(title) + 2 + len(verdict_text) <= width:
                title.append("  ").append_text(verdict_text)
            else:  # the verdict whole on its own line rather than split by the wrap
                _emit(console, wrap(title, width, len(head)))
                title = Text(" " * len(head)).append_text(verdict_text)
        _emit(console, wrap(title, width, len(head)))
        names = [n for n in step.state if actor is None or n.startswith(actor)]
        if not initial:
            # Fields that disappeared are changes too; keep their order after the present ones.
            names += [n for n in previous
                      if n not in step.state and (actor is None or n.startswith(actor))]
        rows: list[tuple[str, Any, Any, bool]] = []
        for name in names:
            new = step.state.get(name, ABSENT)
            old = ABSENT if initial else previous.get(name, ABSENT)
            changed = not initial and old != new
            if initial or full or changed:
                rows.append((name, old, new, changed))
        if rows:
            _rows(console, rows, width, full)
        else:
            scope = f" to {actor}*" if actor else ""
            console.print(Text(f"  (no change{scope})", style="dim"))
        previous = step.state


def is_stutter(cex: Counterexample) -> bool:
    """A lasso whose last state is followed by itself without a step (``Counterexample.loop``)."""
    loop, steps = cex.loop, cex.steps
    if loop is None or loop != len(steps) - 1:
        return False
    return loop == 0 or steps[loop - 1].state != steps[loop].state


def _rows(console: Console, rows: list[tuple[str, Any, Any, bool]], width: int,
          full: bool) -> None:
    """Names in a column, values beside them; names above values when the column is too wide."""
    name_width = max(len(name) for name, *_ in rows)
    stacked = width - 2 - name_width - 2 < MIN_VALUE_COLUMNS
    value_at = 4 if stacked else 2 + name_width + 2
    avail = width - value_at
    for name, old, new, changed in rows:
        lines: list[Text] = []
        for text, hang in value_entries(old, new, changed, full, avail):
            lines.extend(wrap(text, avail, hang))
        label = Text.assemble(("  " + name, NAME))  # the style stays on the name, not the padding
        if stacked:
            _emit(console, wrap(label, width, 4))
            _emit(console, [Text(" " * value_at) + line for line in lines])
            continue
        label.append(" " * (value_at - len(label)))
        _emit(console, [(label if i == 0 else Text(" " * value_at)) + line
                        for i, line in enumerate(lines)])


def _emit(console: Console, lines: list[Text]) -> None:
    for line in lines:
        # The lines already fit: rich must neither re-wrap nor pad them.
        console.print(line, soft_wrap=True)


# -------------------------------------------------------------------------------- value entries


def value_entries(old: Any, new: Any, changed: bool, full: bool, avail: int) -> list[Entry]:
    """The lines that show one field: its value, or what changed in it."""
    if not changed:
        return [(Text(fmt(new)), 1)]
    diff: list[Entry] = []
    if isinstance(old, list) and isinstance(new, list):
        diff = list_diff(old, new, avail)
    elif isinstance(old, dict) and isinstance(new, dict):
        diff = dict_diff(old, new, avail)
    if not diff:
        return change_pair(False, "", fmt(old), fmt(new), avail)
    if full:
        return [(Text(fmt(new), style=f"bold {NEW}"), 1), *diff]
    return diff


def list_diff(old: list[Any], new: list[Any], avail: int) -> list[Entry]:
    """Element lines in list order: ``+ added``, ``- removed``, ``~ old -> new`` (same place)."""
    # Compare JSON forms so 1 and "1" differ; show the bare forms.
    old_keys, new_keys = [fmt(v) for v in old], [fmt(v) for v in new]
    out: list[Entry] = []
    matcher = difflib.SequenceMatcher(None, old_keys, new_keys, autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            continue
        olds = [fmt_element(v) for v in old[i1:i2]]
        news = [fmt_element(v) for v in new[j1:j2]]
        for a, b in _pair_up(olds, news):
            if a is not None and b is not None:
                shown_old, shown_new = olds[a], news[b]
                if shown_old == shown_new:  # same bare form, different type: JSON tells them apart
                    shown_old, shown_new = old_keys[i1 + a], new_keys[j1 + b]
                out.extend(change_pair(True, "", shown_old, shown_new, avail))
            elif a is not None:
                out.append((Text.assemble(("- ", f"bold {OLD}"), (olds[a], OLD)), 2))
            elif b is not None:
                out.append((Text.assemble(("+ ", f"bold {NEW}"), (news[b], NEW)), 2))
    return out


def _pair_up(olds: list[str], news: list[str]) -> list[tuple[int | None, int | None]]:
    """Which elements of a replaced block (by index) are the same element changed in place.

    Equal-sized blocks pair by position (a batch changing state keeps its place in the list);
    otherwise an old element pairs with the next sufficiently similar new one, in order, and the
    rest are removals (old, None) and additions (None, new).
    """
    if len(olds) == len(news):
        return [(i, i) for i in range(len(olds))]
    pairs: list[tuple[int | None, int | None]] = []
    j = 0
    for i, a in enumerate(olds):
        match = next((k for k in range(j, len(news))
                      if difflib.SequenceMatcher(None, a, news[k]).ratio() >= SAME_ELEMENT_RATIO),
                     None)
        if match is None:
            pairs.append((i, None))
            continue
        pairs.extend((None, k) for k in range(j, match))
        pairs.append((i, match))
        j = match + 1
    pairs.extend((None, k) for k in range(j, len(news)))
    return pairs


def dict_diff(old: dict[str, Any], new: dict[str, Any], avail: int) -> list[Entry]:
    """Key lines in key order: ``+ key: value``, ``- key: value``, ``~ key: old -> new``."""
    out: list[Entry] = []
    for key in [*old, *(k for k in new if k not in old)]:
        if key not in new:
            out.append((Text.assemble(("- ", f"bold {OLD}"), (f"{key}: {fmt(old[key])}", OLD)), 2))
        elif key not in old:
            out.append((Text.assemble(("+ ", f"bold {NEW}"), (f"{key}: {fmt(new[key])}", NEW)), 2))
        elif old[key] != new[key]:
            out.extend(change_pair(True, f"{key}: ", fmt(old[key]), fmt(new[key]), avail))
    return out


def change_pair(in_place: bool, label: str, old: str, new: str, avail: int) -> list[Entry]:
    """``~ label old -> new`` on one line if it fits, else ``-> label new`` under the old line.

    On two lines old and new start in the same column, so the words that differ line up even
    without colour. A scalar field (``in_place`` False) has no ``~``: ``old -> new``.
    """
    old_text, new_text = _word_diff(old, new)
    marker = Text("~ " if in_place else "", style="bold yellow")
    if len(marker) + len(label) + len(old) + 4 + len(new) <= avail:
        return [(Text.assemble(marker, label, old_text, " -> ", new_text), len(marker))]
    if in_place:
        marker.append(" ")
    return [(Text.assemble(marker, label, old_text), len(marker)),
            (Text.assemble(("-> ", "bold"), label, new_text), 3)]


_TOKEN = re.compile(r"\w+|\s+|[^\w\s]")


def _word_diff(old: str, new: str) -> tuple[Text, Text]:
    """old and new with the words that differ emphasised (visible only on a terminal)."""
    a, b = _TOKEN.findall(old), _TOKEN.findall(new)
    opcodes = difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes()
    if not any(op == "equal" for op, *_ in opcodes):  # nothing in common: 0 -> 1, false -> true
        return Text(old, style=OLD), Text(new, style=f"bold {NEW}")
    old_text, new_text = Text(), Text()
    for op, i1, i2, j1, j2 in opcodes:
        same = op == "equal"
        old_text.append("".join(a[i1:i2]), style=OLD if same else f"bold {OLD} underline")
        new_text.append("".join(b[j1:j2]), style=NEW if same else f"bold {NEW} underline")
    return old_text, new_text


# ------------------------------------------------------------------------------------- wrapping


def wrap(text: Text, width: int, hang: int) -> list[Text]:
    """``text`` in lines of at most ``width`` columns; lines after the first indented by ``hang``.

    Breaks at spaces, and inside a word only when the word alone is longer than a line.
    """
    hang = min(hang, max(width - 10, 0))
    plain = text.plain
    lines: list[Text] = []
    start, limit = 0, width
    while len(plain) - start > limit:
        cut = plain.rfind(" ", start + 1, start + limit + 1)
        if cut <= start:
            cut, resume = start + limit, start + limit
        else:
            resume = cut + 1
            while resume < len(plain) and plain[resume] == " ":
                resume += 1
        lines.append(text[start:cut])
        start, limit = resume, width - hang
    lines.append(text[start:])
    out = [lines[0]] + [Text(" " * hang) + line for line in lines[1:]]
    for line in out:
        line.rstrip()
    return out


# --------------------------------------------------------------------------------------- header


def _header(cex: Counterexample, console: Console, width: int, full: bool,
            actor: str | None) -> None:
    kind = f" ({cex.kind})" if cex.kind and cex.kind != "?" else ""
    title = Text.assemble(("Counterexample: ", "bold"), (cex.spec, "bold"),
                          (f" violates {cex.property}{kind}", "bold red"))
    _emit(console, wrap(title, width, 2))
    if cex.property_doc:
        _emit(console, wrap(Text(f"  {cex.property_doc}", style="italic"), width, 2))
    _emit(console, wrap(Text(f"  model {cex.model}, variant {cex.variant}"), width, 4))
    # Long bound and switch lists wrap under their first item, not at column 0.
    if cex.bounds:
        items = ", ".join(f"{k}={v}" for k, v in cex.bounds.items())
        _emit(console, wrap(Text("  bounds " + items), width, len("  bounds ")))
    if cex.switches:
        items = ", ".join(f"{k}={fmt(v)}" for k, v in cex.switches.items())
        _emit(console, wrap(Text("  switches " + items), width, len("  switches ")))
    length = f"  length {cex.length} states"
    if cex.found_length != cex.length:
        length += f", found with {cex.found_length}"
    if cex.shortened_by:
        length += f"; {cex.shortened_by}"
    engine = cex.engine
    if engine:
        length += f"; engine {engine.get('strategy', '?')}"
        if isinstance(engine.get("distinct"), int):
            length += f", {engine['distinct']:,} distinct states"
    _emit(console, wrap(Text(length), width, 4))
    if cex.loop is not None:
        last = len(cex.steps) - 1
        shape = (f"stem of {last} steps, then the last state forever (stuttering)" if is_stutter(cex)
                 else f"stem of {cex.loop - 1} steps, then a loop of {last - cex.loop + 1} steps "
                      f"(steps {cex.loop}..{last}) repeated forever")
        _emit(console, wrap(Text(f"  lasso: {shape}"), width, 4))
    mode = "every field at each step" if full else "fields that changed at each step"
    if actor:
        mode += f", only {actor}*"
    _emit(console, wrap(Text(f"  showing {mode} (+ added, - removed, ~ changed)", style="dim"),
                        width, 4))
