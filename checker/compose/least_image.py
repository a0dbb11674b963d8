"""The canonical form of a composed machine with a small symmetry group, as generated code: the
least image over the whole group (TLC's way, so one state per orbit whatever the scalarsets'
renamings do to each other's sort keys), found without building every image.

Images are ordered by a short *key* first (each active scalarset's first actor part, as the
image holds it), then by the whole tuple. That is a total order on images, so its least one is a
function of the orbit. One generated function computes every image's key straight from the state
(each renamed value through one memo per part and combination of permutations, shared by the
images that need it; an actor slot that only moves is a plain read), keeps the least key, and
builds the one image that has it: none when it is the state itself. Only when several images
share the least key (a state with a nontrivial stabiliser, or actors equal in their first part)
are those images built and compared whole.

``_Plan.canonical`` used to take the least over the other scalarsets' permutations of the last
scalarset's sorted form: two or three whole images per state with two producers and two
partitions, a dozen with three partitions (``bench/bench_partition_symmetry.py``): 2.6 -> 1.15 us and
16 -> 2.0 us per call (``tests/test_compose_least_image.py`` checks the form against the orbit)."""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .code_cache import run as run_code

if TYPE_CHECKING:
    from .machine import _Plan

#: the least image is used for a symmetry group of at most this many elements (the product of the
#: active scalarsets' permutations): one key per element and state
LEAST_IMAGE = 120

#: up to this many elements, the winner's image is built inline (one branch per element)
INLINE = 12

#: how many states' forms the generated canonical form keeps (the memo is emptied when full)
RECENT = 1 << 13

Chain = tuple[tuple[str, tuple[int, ...]], ...]


def applies(plan: _Plan) -> bool:
    """Whether ``plan``'s canonical form is the generated least image: two or more scalarsets of
    two or more identities, or one whose actors mention its identities (no rename-invariant sort
    key), with at most ``LEAST_IMAGE`` permutations in all. One scalarset that sorts exactly
    keeps its sort (one comparison for two identities; n log n, not n!)."""
    active = [ss for ss, n in plan.scalarset_sizes.items() if n > 1]
    if not active or math.prod(math.factorial(plan.scalarset_sizes[ss]) for ss in active) > LEAST_IMAGE:
        return False
    return len(active) > 1 or plan.self_renaming(active[0])


def least_image(plan: _Plan) -> tuple[Callable[[tuple], tuple], list[dict[Any, Any]]]:
    """The generated canonical form and its renaming memos (for ``_Plan.clear``)."""
    active = [ss for ss, n in plan.scalarset_sizes.items() if n > 1]
    # the order ``Symmetry.apply`` renames in (``Composed.symmetry``): an image is exactly its result
    elements = list(itertools.product(*(itertools.permutations(range(plan.scalarset_sizes[ss])) for ss in active)))
    moves: dict[str, list[tuple[int, int]]] = {ss: [plan.slots[n] for n in plan.scalarsets[ss]] for ss in active}
    # slot -> [(scalarset, decl, fn)] in ``active`` order
    renamers: dict[int, list[tuple[str, Any, Any]]] = {}
    for ss in active:
        for slots, decl, fn in plan.renames.get(ss, ()):
            for k in slots:
                renamers.setdefault(k, []).append((ss, decl, fn))
    # (a constant slot is the same in every image: ``_Plan.constants`` keeps only fixed points)
    key_slots = [k for ss in active for k in range(plan.slots[plan.scalarsets[ss][0]][0],
                                                   sum(plan.slots[plan.scalarsets[ss][0]])) if k not in plan.consts]
    pos, live = plan.pos, plan.live
    env: dict[str, Any] = {}
    memos: dict[tuple[str, Chain], str] = {}
    memo_dicts: list[dict[Any, Any]] = []
    memoize = plan.memoize

    def memo_for(decl: Any, chain: list[tuple[str, Any, tuple[int, ...]]]) -> str:
        ck = (decl.name, tuple((ss, perm) for ss, _, perm in chain))
        name = memos.get(ck)
        if name is None:
            name = memos[ck] = f"m{len(memos)}"
            memo: dict[Any, Any] = {}
            memo_dicts.append(memo)
            values = plan.tables[decl.name].values if decl.interned else None
            steps = [(fn, perm) for _, fn, perm in chain]

            def miss(x: Any, memo: dict[Any, Any] = memo, steps: list[Any] = steps, values: Any = values) -> Any:
                v = x
                for fn, perm in steps:
                    v = plan.encode(decl, fn(v if values is None else values[v], perm))
                if memoize:
                    memo[x] = v
                return v
            env[name], env["f" + name], env["g" + name] = memo, miss, memo.get
        return name

    def image(g: tuple[tuple[int, ...], ...]) -> list[tuple[int, str | None]]:
        """Per slot of ``g``'s image: the slot of the state it comes from, and the memo renaming it."""
        perms = dict(zip(active, g))
        source = list(range(plan.width))
        for ss in active:
            perm = perms[ss]
            for base, count in moves[ss]:
                for i in range(count):
                    source[base + perm[i]] = base + i
        out: list[tuple[int, str | None]] = []
        for k in range(plan.width):
            chain = [(ss, fn, perms[ss]) for ss, _, fn in renamers.get(k, ())
                     if perms[ss] != tuple(range(len(perms[ss])))]
            decl = renamers[k][0][1] if k in renamers else None
            out.append((source[k], memo_for(decl, chain) if chain else None))
        return out

    images = [image(g) for g in elements]

    def value(lines: list[str], done: dict[tuple[int, str], str], src: int, memo: str | None,
              indent: str = "    ") -> str:
        if memo is None:
            return f"s[{pos[src]}]"
        var = done.get((src, memo))
        if var is None:
            var = done[(src, memo)] = f"v{len(done)}"
            lines += [f"{indent}{var} = g{memo}(s[{pos[src]}])", f"{indent}if {var} is None:",
                      f"{indent}    {var} = f{memo}(s[{pos[src]}])"]
        return var

    def build(lines: list[str], done: dict[tuple[int, str], str], img: list[tuple[int, str | None]],
              indent: str) -> str:
        """The image's tuple expression: runs of slots the image leaves alone as slices of ``s``
        (over the slots a state holds: ``live``)."""
        pieces: list[str] = []
        items: list[str] = []
        j = 0
        width = len(live)
        while j < width:
            end = j
            while end < width and img[live[end]] == (live[end], None):
                end += 1
            if end - j >= 3:
                if items:
                    pieces.append(f"({', '.join(items)},)")
                    items = []
                pieces.append(f"s[{j}:{end}]")
                j = end
            else:
                items.append(value(lines, done, *img[live[j]], indent=indent))
                j += 1
        if items:
            pieces.append(f"({', '.join(items)},)")
        return " + ".join(pieces)

    # the same successor comes again from a sibling soon after (six times in ten on kafka.eos's
    # symmetric rows, nearly as often with a few thousand entries as with all): its form is kept
    # a while, in a memo emptied when full
    lines = ["def canonical(s):"]
    if memoize:
        lines += ["    c = recent_get(s)", "    if c is not None:", "        return c",
                  f"    if len(recent) >= {RECENT}:", "        recent.clear()"]

    def ret(expr: str, indent: str) -> list[str]:
        if not memoize:
            return [f"{indent}return {expr}"]
        return [f"{indent}c = recent[s] = {expr}", f"{indent}return c"]

    done: dict[tuple[int, str], str] = {}
    for e, img in enumerate(images):
        items = [value(lines, done, *img[k]) for k in key_slots]
        lines.append(f"    k{e} = ({', '.join(items)},)" if items else f"    k{e} = ()")
    lines += ["    b = k0", "    w = 0", "    tie = False"]
    for e in range(1, len(images)):
        lines += [f"    if k{e} < b:", f"        b = k{e}", f"        w = {e}", "        tie = False",
                  f"    elif k{e} == b:", "        tie = True"]
    keys = ", ".join(f"k{e}" for e in range(len(images)))
    lines += ["    if tie:", *ret(f"min(build[e](s) for e, k in enumerate(({keys},)) if k == b)", "        "),
              "    if w == 0:", *ret("s", "        ")]
    # the winner's image, reusing the renamed values its key already read (a branch per image while
    # that is cheap to dispatch; beyond, one call through a table)
    inline = len(images) <= INLINE
    for e, img in enumerate(images[1:], 1):
        if inline:
            branch: list[str] = []
            expr = build(branch, dict(done), img, "        ")
            lines += [f"    if w == {e}:", *branch, *ret(expr, "        ")]
    if not inline:
        lines += ret("build[w](s)", "    ")
    builders = ["def identity(s):", "    return s"]
    for e, img in enumerate(images[1:], 1):
        body: list[str] = []
        expr = build(body, {}, img, "    ")
        builders += [f"def image{e}(s):", *body, f"    return {expr}"]
    recent: dict[tuple, tuple] = {}
    env["recent"], env["recent_get"] = recent, recent.get
    memo_dicts.append(recent)
    source = "\n".join(builders + lines)
    env["__source__"] = source  # for reading profiles
    run_code(source, f"<compose {type(plan.machine).__name__} least image>", env)
    env["build"] = (env["identity"], *(env[f"image{e}"] for e in range(1, len(images))))
    form: Callable[[tuple], tuple] = env["canonical"]
    return form, memo_dicts
