"""Memo lookups of generated code as subscripts: ``v = memo[key]`` in a ``try`` whose ``except
KeyError`` computes ``v``, in place of ``v = memo.get(key)`` and ``if v is None:``.

Used on the machine's fused successors (``_Plan.dedup_successors``) and fused transition checks,
whose rule, group and gate memos are looked up once or more per state and rarely miss. A subscript
is one specialised instruction (``BINARY_SUBSCR_DICT``) where ``get`` is a method call (about 80
instructions less per hit), and a ``try`` costs nothing until it catches; a miss then pays for the
``KeyError`` (about 1,400 instructions: the exception, its traceback entry, the match), so a lookup
that misses more than about one time in eighteen is better left as it is. Left as they are: the fused
invariants (``_Fused.invariants``) and an outcome's caches (``a[3].get(x)``), which miss more
(perf27a: kafka.eos's yardstick and idempotent preset).

Sound where ``None`` is no value a memo holds (every generated memo holds outcomes, groups, plans,
booleans or ids) and nothing but the memo's subscript can raise ``KeyError`` in the ``try``: the key
is a plain name or a tuple display of plain names. A key read through tables in a ``try`` of its
own (``F17[s4]``, else ``P17[s4]``: the plain dict of a projection first) keeps its fallback: a
``KeyError`` of the first key, the table's or the memo's, takes the second key's ``get``, which
misses too where the first key was built (the two keys are equal where both are).
"""

from __future__ import annotations

import re

#: ``v = memo.get(key)``, the memo a global's name (not ``a[3]``: an outcome's cache of a send's or
#: projection write's folded contents, new with each outcome and empty until its first states, misses
#: one lookup in five on the idempotent preset: 25,954 of 125,561 over 60,000 states, perf27a), the key
#: a plain name or a tuple display of plain names
_GET = re.compile(r"^(\s*)(\w+) = (\w+)\.get\((\w+|\((?:\w+, )*\w*\))\)$")
#: ``v = memo.get(key)`` with any key (the first line of a two-key ``try``)
_ANY_GET = re.compile(r"^(\s*)(\w+) = (\w+)\.get\((.+)\)$")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _block(lines: list[str], start: int, indent: int) -> int:
    """The end of the block of lines from ``start`` indented deeper than ``indent`` (at least one
    line; ``start`` itself when there is none)."""
    end = start
    while end < len(lines) and lines[end].strip() and _indent(lines[end]) > indent:
        end += 1
    return end


def _alone(lines: list[str], end: int, ind: str) -> bool:
    """No ``else`` / ``elif`` continues the ``if`` whose block ends at ``end``."""
    return end == len(lines) or not (lines[end].startswith(f"{ind}else") or lines[end].startswith(f"{ind}elif"))


def _rewrite(lines: list[str], i: int) -> tuple[list[str], int, int] | None:
    """The rewrite of the lookup whose ``get`` is on line ``i``: the lines that replace
    ``lines[start:end]``, start and end; None where it is not one of the two forms."""
    line = lines[i]
    m = _GET.match(line)
    if m is not None and i + 1 < len(lines):
        ind, var = m.group(1), m.group(2)
        end = _block(lines, i + 2, len(ind))
        if lines[i + 1] == f"{ind}if {var} is None:" and end > i + 2 and _alone(lines, end, ind):
            return [f"{ind}try:", f"{ind}    {var} = {m.group(3)}[{m.group(4)}]", f"{ind}except KeyError:",
                    *lines[i + 2:end]], i, end
    # try: v = memo.get(k1) / except KeyError: v = memo.get(k2) / if v is None: block
    if i < 1 or i + 4 >= len(lines) or not lines[i - 1].endswith("try:"):
        return None
    ind = lines[i - 1][:-4]
    first, second = _ANY_GET.match(line), _ANY_GET.match(lines[i + 2])
    if (not ind.strip() and first is not None and second is not None
            and first.group(1) == second.group(1) == ind + "    "
            and first.group(2) == second.group(2) and first.group(3) == second.group(3)
            and lines[i + 1] == f"{ind}except KeyError:" and lines[i + 3] == f"{ind}if {first.group(2)} is None:"):
        end = _block(lines, i + 4, len(ind))
        if end > i + 4 and _alone(lines, end, ind):
            var, memo = first.group(2), first.group(3)
            return [lines[i - 1], f"{ind}    {var} = {memo}[{first.group(4)}]", lines[i + 1], lines[i + 2],
                    f"{ind}    if {var} is None:", *("    " + x for x in lines[i + 4:end])], i - 1, end
    return None


def subscripted(source: str) -> str:
    """``source`` with its memo lookups rewritten (the module's docstring); the rest unchanged."""
    if ".get(" not in source:
        return source
    lines = source.split("\n")
    out: list[str] = []
    done = 0  # lines[:done] are in ``out``
    # only the lines with a ``get`` are looked at (a Python loop over every line of a machine's
    # successors cost about 1,000 instructions per line at start-up)
    for i in [i for i, line in enumerate(lines) if ".get(" in line]:
        if i < done:
            continue
        got = _rewrite(lines, i)
        if got is None:
            continue
        new, start, end = got
        if start < done:
            continue
        out += lines[done:start]
        out += new
        done = end
    out += lines[done:]
    return "\n".join(out)


__all__ = ["subscripted"]
