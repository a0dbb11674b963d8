"""Compiled rules: a declared ``@rule`` as bindings (one per parameter combination, or per message)
with memoised outcomes, and the generated ``expand`` that applies them to a flat state; and the
rules generated from a channel's network semantics (loss, duplication)."""

from __future__ import annotations

import inspect
import itertools
import re
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from operator import itemgetter
from types import CodeType, FunctionType
from typing import TYPE_CHECKING, Any

from ..machine import Step
from .code_cache import run as run_code
from .declare import OUTSIDE, ComposeError, RuleSpec
from .network import ChannelOps
from .parts import Actors, Channel

if TYPE_CHECKING:
    from .machine import _Plan

_NO_MSG = object()


class _Unread:
    """What an effect or guard receives for a read that ``read_if`` leaves out of its binding: any
    use raises, so an effect cannot depend on a part its memo key does not hold."""

    __slots__ = ("what",)

    def __init__(self, what: str) -> None:
        self.what = what

    def _refuse(self, *args: Any) -> Any:
        raise ComposeError(self.what)

    __getattr__ = __getitem__ = __iter__ = __len__ = __bool__ = __eq__ = __hash__ = __contains__ = _refuse
    __lt__ = __le__ = __gt__ = __ge__ = __int__ = __index__ = __add__ = __radd__ = _refuse
#: how many values written to interned parts (and messages sent) are type-checked per machine
CHECKED = 2000
_REF = re.compile(r"^(?:([A-Za-z_]\w*)=)?([A-Za-z_]\w*)(?:\[([A-Za-z_]\w*)\])?(?::([A-Za-z_]\w*))?$")

#: how a part is read: (keyword name, slots, what a slot's content decodes to: its table's values,
#: a projection's values (``_Projection.values``), or None for a scalar read whole; all actors?)
ReadSlots = tuple[str, list[int], "Mapping[Any, Any] | None", bool]


class _ProjectionValues(dict[Any, Any]):
    """Slot content (an interned id, or a scalar's value) -> the projected value, computed on first sight."""

    __slots__ = ("projection",)
    projection: _Projection

    def __missing__(self, key: Any) -> Any:
        self.projection.see(key)
        return self[key]


class _ProjectionIds(dict[Any, int]):
    """Slot content -> the projection's id of its projected value (equal projections, one id):
    what memo keys hold in place of the slot content. ``plain`` holds the same entries in a plain
    dict, for the generated successors' hits (``plain_projections``)."""

    __slots__ = ("plain", "projection")
    projection: _Projection
    plain: dict[Any, int]

    def __missing__(self, key: Any) -> int:
        return self.projection.see(key)


class _Projection:
    """A part's named projection (``parts.Decl.projections``) in one compiled machine: both maps
    are filled on first sight of a slot content, and emptied with the memos keyed by its ids."""

    __slots__ = ("by_value", "fn", "ids", "label", "name", "put", "puts", "shared", "source", "values")

    def __init__(self, name: str, fn: Callable[[Any], Hashable], source: Mapping[int, Any] | None,
                 put: Callable[[Any, Any], Any] | None = None, label: str = "P0") -> None:
        #: ``"part:projection"``, for messages
        self.name, self.fn, self.source = name, fn, source
        #: the name generated code gives its ids map, ``P<n>`` (n: its place in the machine's
        #: projections), so equal code is equal text (``code_cache``)
        self.label = label
        #: ``put(value, projected) -> value`` (``parts.Projection``), or None: read only
        self.put = put
        #: projected value written -> (slot content -> slot content after the write), filled on use
        self.puts: dict[Hashable, dict[Any, Any]] = {}
        self.ids = _ProjectionIds()
        self.ids.projection = self
        self.ids.plain = {}
        self.values = _ProjectionValues()
        self.values.projection = self
        #: projected value -> its id (ids are small ints, in order of first sight)
        self.by_value: dict[Hashable, int] = {}
        #: id -> the projected value first seen with it
        self.shared: list[Hashable] = []

    def __repr__(self) -> str:
        return f"<projection {self.name}>"

    def see(self, key: Any) -> int:
        try:
            value = key if self.source is None else self.source[key]
        except KeyError as exc:
            raise _unknown_part(exc) from None
        projected = self.fn(value)
        try:
            pid = self.by_value.get(projected)
        except TypeError:
            raise ComposeError(f"projection {self.name} returned an unhashable "
                               f"{type(projected).__name__}: {projected!r}") from None
        if pid is None:
            pid = self.by_value[projected] = len(self.by_value)
            self.shared.append(projected)
        else:
            # the first equal value: one object per projected value, however many slot contents
            # project to it (a part of many values, few projections, keeps few alive)
            projected = self.shared[pid]
        self.ids[key] = self.ids.plain[key] = pid
        self.values[key] = projected
        return pid

    def clear(self) -> None:
        self.ids.clear()
        self.ids.plain.clear()
        self.values.clear()
        self.by_value.clear()
        self.shared.clear()
        self.puts.clear()

    def writer(self, projected: Hashable, encode: Callable[[Any], Any]) -> tuple[dict[Any, Any], Callable[[Any], Any]]:
        """Writing ``projected`` as (cache, fold): the slot content after the write, by the content
        before it, and the function that computes and caches it (the ``sends`` form of an outcome,
        applied per state by the generated code: the written value depends on the part's other fields)."""
        try:
            cache = self.puts.get(projected)
        except TypeError:
            raise ComposeError(f"a write of projection {self.name} is an unhashable "
                               f"{type(projected).__name__}: {projected!r}") from None
        if cache is None:
            cache = self.puts[projected] = {}
        put, source = self.put, self.source
        assert put is not None

        def fold(i: Any) -> Any:
            try:
                value = i if source is None else source[i]
            except KeyError as exc:
                raise _unknown_part(exc) from None
            new = cache[i] = encode(put(value, projected))
            return new

        return cache, fold


#: one component of a memo key: a slot (its content as it is), or a slot and a projection (the
#: projection's id of its content)
Term = int | tuple[int, _Projection]
#: one outcome of a binding: (step, build, args, checks): ``build(s, args)`` (a receive rule's:
#: ``build(s, args, rest)``) is the successor of state ``s``, ``args`` the values written and, per
#: send, ``ChannelOps.sender``'s (id -> id after the sends, the function that fills it) (``_builder``);
#: ``checks`` indexes the set of transition properties the step may fail (``_Plan.check_index``)
Outcome = tuple[Step, Callable[..., tuple], tuple[Any, ...], int]
#: an outcome before the state is consulted (``_Rule._made``): step, builder, its arguments, the
#: (name, type) of the result's values whose type the outcome keeps (``_Rule.typed``), the fixed watched
#: writes as (place, content written) (``_fixed_at``), the shape ``_Plan.check_index`` takes, and the
#: outcome itself (no fixed write) or the outcomes by content before the step (``_Rule._outcome``)
_Made = tuple[Step, Callable[..., tuple], tuple[Any, ...], tuple[tuple[str, type], ...],
              tuple[tuple[int, Any], ...], tuple[int, ...], Any]

#: the most shapes a receive rule's successors are built in place for beside the message taken
#: alone (``_Rule._receive_shapes``): each costs a test of the builder per successor that is not it
RECEIVE_SHAPES = 8

#: generated successor builders, by (width, written places, sent places, receive place, budget place)
#: (and the ``passed`` writes' places, when there are any)
_BUILDERS: dict[tuple[Any, ...], Callable[..., tuple]] = {}
#: the builders of outcomes marked ``OUTSIDE`` (``outside_builder``), by the same key
_OUTSIDE_BUILDERS: dict[tuple[Any, ...], Callable[..., tuple]] = {}
#: those builders (functions hash by identity): the fused duplicate test (``machine._dedup_source``)
#: asks ``build in OUTSIDE_BUILT`` of an outcome whose successor is not built in place
OUTSIDE_BUILT: set[Callable[..., tuple]] = set()


def _builder_lines(width: int, written: tuple[int, ...], sent: tuple[int, ...], receive: int = -1,
                   budget: int = -1, derived: tuple[tuple[int, ...], ...] = ()) -> tuple[list[str], str]:
    """The body of a builder of this shape (``_builder``) as (statements, the successor's tuple
    display), reading ``s``, ``a`` and ``rest``: ``_Rule.body`` pastes it into the generated
    successors for the shape a binding's outcomes usually take (no call per successor)."""
    exprs = [f"s[{k}]" for k in range(width)]
    if receive >= 0:
        exprs[receive] = "rest"
    for i, k in enumerate(written):
        exprs[k] = f"a[{i}]"
    lines: list[str] = []
    for j, k in enumerate(sent):
        cache, fold = len(written) + 2 * j, len(written) + 2 * j + 1
        lines += [f"x = {exprs[k]}", f"v{j} = a[{cache}].get(x)", f"if v{j} is None:", f"    v{j} = a[{fold}](x)"]
        exprs[k] = f"v{j}"
    # a ``passed`` write: the places' new contents by their contents before the step, through the
    # binding's cache and fold (``_Binding.derive``), after the sends' pairs
    at = len(written) + 2 * len(sent)
    for j, places in enumerate(derived):
        lines += [f"x = ({''.join(f's[{k}], ' for k in places)})", f"w{j} = a[{at + 2 * j}].get(x)",
                  f"if w{j} is None:", f"    w{j} = a[{at + 2 * j + 1}](x)"]
        for i, k in enumerate(places):
            exprs[k] = f"w{j}[{i}]"
    if budget >= 0:
        exprs[budget] = f"{exprs[budget]} + 1"
    return lines, f"({''.join(e + ', ' for e in exprs)})"


def _builder(width: int, written: tuple[int, ...], sent: tuple[int, ...], receive: int = -1,
             budget: int = -1, derived: tuple[tuple[int, ...], ...] = ()) -> Callable[..., tuple]:
    """The successor of ``s`` after an outcome, as one generated function of ``(s, args[, rest])``
    per shape of outcome (a tuple display: no list copy and no loop over the writes per successor):
    the receive place holds ``rest``, written places ``args[i]`` (the last write of a place wins),
    each send folds its place's content so far through ``args``' cache and fold (in order), and
    the budget's place counts one more. ``derived``: the places of each ``passed`` write (``rule``),
    set from their contents before the step through ``args``' cache and fold after the sends'.

    Compiled on its first call (``_lazy_build``): most builders are made only to be told apart
    (``_Rule._apply_shapes``: a successor of that shape is built in place, never by the call), and
    at start-up for layouts ``_Plan.relayout`` replaces (kafka.init_producer_id: three), where
    compiling them was about 1.3M instructions each."""
    # (no star-unpacking: it builds a list per call, and rules without ``passed`` call this per made miss)
    key = (width, written, sent, receive, budget, derived) if derived else (width, written, sent, receive, budget)
    build = _BUILDERS.get(key)
    if build is not None:
        return build
    body, display = _builder_lines(width, written, sent, receive, budget, derived)
    lines = [f"def build(s, a{', rest' if receive >= 0 else ''}):", *("    " + x for x in body), f"    return {display}"]
    env: dict[str, Any] = {"_compile": _compile_build, "_source": "\n".join(lines)}
    build = _BUILDERS[key] = FunctionType(_STUB_RECEIVE if receive >= 0 else _STUB, env, "build")
    env["build"] = build
    return build


#: a generated function's code until its first call: compile its own and run it (``_compile_build``,
#: ``_compile_decode``)
def _stub(name: str, args: str, source: str, filename: str) -> CodeType:
    module = compile(f"def {name}({args}):\n    return _compile({name}, {source})({args})", filename, "exec")
    return next(c for c in module.co_consts if isinstance(c, CodeType))


_STUB = _stub("build", "s, a", "_source", "<compose successor>")
_STUB_RECEIVE = _stub("build", "s, a, rest", "_source", "<compose successor>")


def _compile_build(build: FunctionType, source: str) -> FunctionType:
    """The builder ``build`` with its generated code in place of the stub's (the same function
    object: ``_apply_shapes``' identity tests and the memoised outcomes holding it stay valid)."""
    env: dict[str, Any] = {}
    run_code(source, "<compose successor>", env)
    build.__code__ = env["build"].__code__
    return build


def outside_builder(width: int, written: tuple[int, ...], sent: tuple[int, ...], receive: int = -1,
                    budget: int = -1, derived: tuple[tuple[int, ...], ...] = ()) -> Callable[..., tuple]:
    """``_builder``'s function for an outcome marked ``OUTSIDE``: the same successor, from a function
    object of its own (listed in ``OUTSIDE_BUILT``), which no step line builds in place: the fused
    duplicate test recognises it and counts its successor as cut without building it."""
    # (no star-unpacking: it builds a list per call, and rules without ``passed`` call this per made miss)
    key = (width, written, sent, receive, budget, derived) if derived else (width, written, sent, receive, budget)
    build = _OUTSIDE_BUILDERS.get(key)
    if build is None:
        body, display = _builder_lines(width, written, sent, receive, budget, derived)
        lines = [f"def build(s, a{', rest' if receive >= 0 else ''}):", *("    " + x for x in body),
                 f"    return {display}"]
        env: dict[str, Any] = {}
        run_code("\n".join(lines), "<compose successor>", env)
        build = _OUTSIDE_BUILDERS[key] = env["build"]
        OUTSIDE_BUILT.add(build)
    return build


class _NoMemo(dict[Any, Any]):
    """A memo that keeps nothing (``memoize=False``): every lookup misses."""

    def get(self, key: Any, default: Any = None) -> Any:
        return default

    def __setitem__(self, key: Any, value: Any) -> None:
        pass


def _accepts(fn: Callable[..., Any], available: Iterable[str], what: str, skip: int = 1) -> tuple[str, ...] | None:
    """The keyword arguments ``fn`` takes out of ``available`` (None: all, it has ``**kwargs``)."""
    available = set(available)
    params = list(inspect.signature(fn).parameters.values())[skip:]
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
        return None
    names = tuple(p.name for p in params if p.kind is not inspect.Parameter.VAR_POSITIONAL)
    unknown = [n for n in names if n not in available]
    if unknown:
        raise ComposeError(f"{what} takes {', '.join(unknown)}, which it does not declare "
                           f"(it may take: {', '.join(sorted(available)) or 'nothing'})")
    return names


def _pick(names: tuple[str, ...] | None, kwargs: dict[str, Any]) -> dict[str, Any]:
    return kwargs if names is None else {n: kwargs[n] for n in names}


def _plain(fn: Callable[..., Any], names: tuple[str, ...]) -> bool:
    """``fn`` is a plain function whose own parameters after the first are exactly ``names``, in
    order: it may be called positionally with them."""
    code = getattr(fn, "__code__", None)
    return (inspect.isfunction(fn) and not hasattr(fn, "__wrapped__") and code is not None
            and not code.co_kwonlyargcount and not code.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS)
            and code.co_varnames[1:code.co_argcount] == names)


def _caller(fn: Callable[..., Any], names: tuple[str, ...] | None) -> Callable[[Any, dict[str, Any]], Any]:
    """``call(machine, kwargs)``: ``fn(machine, **{n: kwargs[n] for n in names})`` (all of
    ``kwargs`` when ``names`` is None), as a positional call where ``fn`` is a plain function
    whose own parameters are exactly ``names`` in order: a memo miss builds no second dict."""
    if names is None:
        return lambda machine, kwargs: fn(machine, **kwargs)
    if not _plain(fn, names):
        return lambda machine, kwargs: fn(machine, **{n: kwargs[n] for n in names})
    if not names:
        return lambda machine, kwargs: fn(machine)
    if len(names) == 1:
        (only,) = names
        return lambda machine, kwargs: fn(machine, kwargs[only])
    get = itemgetter(*names)
    return lambda machine, kwargs: fn(machine, *get(kwargs))


def _decoder(reads: Iterable[ReadSlots], pos: Sequence[int | None] | None = None,
             consts: Mapping[int, Any] | None = None,
             given: Mapping[str, Any] | None = None) -> Callable[[tuple, dict[str, Any]], dict[str, Any]]:
    """``read_parts`` for these reads, with each read's kind settled once: ``decode(s, into)``. With
    a layout (``pos``, ``consts``: ``_Plan``'s), ``s`` is a state that leaves the constants out.
    ``given``: values passed as they are (a binding's unread parts, ``_Unread``)."""
    reads = list(reads)
    # the reads of constant slots through a table that never changes: decoded once
    known: dict[str, Any] = dict(given) if given else {}
    fixed: tuple[Any, ...] = ()
    if pos is not None and consts:
        constant = [r for r in reads if all(k in consts for k in r[1])
                    and (r[2] is None or not isinstance(r[2], _ProjectionValues))]
        for name, slots, values, whole in constant:
            got = [consts[k] if values is None else values[consts[k]] for k in slots]
            known[name] = tuple(got) if whole else got[0]
        # the others that read a constant: a projection's map (emptied by ``clear``), or a mix
        fixed = tuple((name, tuple(consts.get(k) for k in slots), tuple(pos[k] for k in slots), values, whole)
                      for name, slots, values, whole in reads
                      if name not in known and any(k in consts for k in slots))
        reads = [r for r in reads if not any(k in consts for k in r[1])]

    def place(k: int) -> int:
        j = k if pos is None else pos[k]
        assert j is not None  # the reads of constant slots are ``fixed``
        return j

    plain = tuple((name, place(slots[0])) for name, slots, values, whole in reads if not whole and values is None)
    tabled = tuple((name, place(slots[0]), values) for name, slots, values, whole in reads
                   if not whole and values is not None)
    wholes = tuple((name, tuple(map(place, slots)), values) for name, slots, values, whole in reads if whole)

    if not fixed:
        return _decoder_code(known, plain, tabled, wholes)

    def decode(s: tuple, into: dict[str, Any]) -> dict[str, Any]:
        if known:
            into.update(known)
        try:
            for name, k in plain:
                into[name] = s[k]
            for name, k, table in tabled:
                into[name] = table[s[k]]
            # (no comprehension over ``s``: it would make ``s`` a cell of every call, paid per memo miss)
            get = s.__getitem__
            for name, slots, values in wholes:
                into[name] = tuple(map(get, slots)) if values is None else tuple(map(values.__getitem__, map(get, slots)))
            for name, cs, js, values, whole in fixed:  # reads of constant slots (a projection's map may be new)
                contents = []
                for c, j in zip(cs, js):
                    contents.append(s[j] if j is not None else c)
                got = contents if values is None else list(map(values.__getitem__, contents))
                into[name] = tuple(got) if whole else got[0]
        except KeyError as exc:
            raise _unknown_part(exc) from None
        return into

    return decode


def _decoder_code(known: dict[str, Any], plain: tuple[tuple[str, int], ...],
                  tabled: tuple[tuple[str, int, Any], ...],
                  wholes: tuple[tuple[str, tuple[int, ...], Any], ...]) -> Callable[[tuple, dict[str, Any]], dict[str, Any]]:
    """``_decoder``'s ``decode`` without reads of constant slots, as generated straight-line code (a
    memo miss or gate miss decodes: the loops over the kinds of reads cost more than the reads).

    Generated and compiled on its first call (``_compile_decode``), as ``_builder``'s builders are:
    every binding of every layout gets a decoder at start-up, including layouts ``_Plan.relayout``
    replaces and bindings that never miss, where building and compiling them all cost 24M-62M
    instructions per spec (bench/results/perf25a.md)."""
    env: dict[str, Any] = {"_compile": _compile_decode, "_parts": (known, plain, tabled, wholes)}
    decode = env["decode"] = FunctionType(_DECODE_STUB, env, "decode")
    return decode


_DECODE_STUB = _stub("decode", "s, into", "_parts", "<compose decode>")


def _compile_decode(decode: FunctionType, parts: tuple[dict[str, Any], tuple[tuple[str, int], ...],
                                                       tuple[tuple[str, int, Any], ...],
                                                       tuple[tuple[str, tuple[int, ...], Any], ...]]) -> FunctionType:
    """The decoder ``decode`` with its generated code in place of the stub's (the same function
    object, in the stub's globals, which gain the tables the code names)."""
    known, plain, tabled, wholes = parts
    env = decode.__globals__
    env["known"] = known
    env["_unknown_part"] = _unknown_part
    body: list[str] = []
    for name, k in plain:
        body.append(f"into[{name!r}] = s[{k}]")
    for i, (name, k, table) in enumerate(tabled):
        env[f"T{i}"] = table
        body.append(f"into[{name!r}] = T{i}[s[{k}]]")
    for i, (name, slots, values) in enumerate(wholes):
        if values is not None:
            env[f"W{i}"] = values
        items = [f"s[{k}]" if values is None else f"W{i}[s[{k}]]" for k in slots]
        body.append(f"into[{name!r}] = ({', '.join(items)},)" if items else f"into[{name!r}] = ()")
    lines = ["def decode(s, into):"]
    if known:
        lines.append("    into.update(known)")
    if body:
        lines += ["    try:", *("        " + x for x in body), "    except KeyError as exc:",
                  "        raise _unknown_part(exc) from None"]
    lines.append("    return into")
    made: dict[str, Any] = {}
    run_code("\n".join(lines), "<compose decode>", made)
    decode.__code__ = made["decode"].__code__
    return decode


def _getter(slots: list[Term], pos: Sequence[int | None] | None = None) -> Callable[[tuple], Hashable]:
    """The memo key of these terms on a state (the same key as ``_key_source``'s code; ``pos``:
    the layout, none of the terms a constant)."""
    if not slots:
        return lambda s: ()
    if all(type(k) is int for k in slots):
        return itemgetter(*(slots if pos is None else [pos[k] for k in slots]))  # type: ignore[index]
    env: dict[str, Any] = {}
    src = _key_source(slots, "s", env, pos)
    return eval(f"lambda s: {src}", env)


def _unknown_part(exc: KeyError) -> ComposeError:
    return ComposeError(f"a state holds part id {exc.args[0]} that this process never interned: states of a "
                        "composed machine cross processes only through export_states/import_states (the parallel "
                        "engine does; the Spark engine pickles states and cannot run composed machines)")


def read_parts(s: tuple, reads: Iterable[ReadSlots], into: dict[str, Any]) -> dict[str, Any]:
    """Decode the parts a rule or property reads from the flat state ``s`` into ``into`` (by
    name): a scalar slot as it is, an interned slot through its table, a whole actor kind as a
    tuple."""
    try:
        for name, slots, values, whole in reads:
            if whole:
                into[name] = tuple([s[k] for k in slots] if values is None else [values[s[k]] for k in slots])
            else:
                into[name] = s[slots[0]] if values is None else values[s[slots[0]]]
    except KeyError as exc:
        raise _unknown_part(exc) from None
    return into


def _term_source(k: Term, var: str, env: dict[str, Any] | None, pos: Sequence[int | None] | None = None) -> str:
    if type(k) is int:
        return f"{var}[{k if pos is None else pos[k]}]"
    slot, proj = k  # type: ignore[misc]
    if env is None:
        raise ValueError("a projected key term needs the generated code's globals")
    name = proj.label
    env[name] = proj.ids
    return f"{name}[{var}[{slot if pos is None else pos[slot]}]]"


def _key_source(slots: list[Term], var: str = "s", env: dict[str, Any] | None = None,
                pos: Sequence[int | None] | None = None) -> str:
    """Python source for ``_getter(slots, pos)(var)``, to inline in generated code (the same key); a
    projected term's map is put into ``env``, the code's globals. ``pos``: the layout (``_Plan.pos``)."""
    if not slots:
        return "()"
    if len(slots) == 1:
        return _term_source(slots[0], var, env, pos)
    return "(" + ", ".join(_term_source(k, var, env, pos) for k in slots) + ")"


def term_slot(k: Term) -> int:
    """The slot a key term reads."""
    return k if type(k) is int else k[0]  # type: ignore[index]


def _live_terms(terms: list[Term], consts: Mapping[int, Any]) -> list[Term]:
    """``terms`` without those of constant slots: the same in every state, they tell no key apart."""
    return [k for k in terms if term_slot(k) not in consts] if consts else terms


def _implied(terms: list[Term]) -> list[Term]:
    """``terms`` without a projection of a slot the key also holds whole (the slot decides it): a
    rule may read a part whole for its effect and a projection of it for a gate."""
    whole = {k for k in terms if type(k) is int}
    return [k for k in terms if type(k) is int or k[0] not in whole]  # type: ignore[index]


_PROJECTED = re.compile(r"\bP\d+\[s\[\d+\]\]")
#: a projected term of the state before or after a step (a transition check reads both, ``s`` and ``t``)
_PROJECTED_ST = re.compile(r"\bP\d+\[[st]\[\d+\]\]")
#: a budgeted rule's test (``_Rule.body``): its block runs on most states
_BUDGET_TEST = re.compile(r"^if s\[\d+\] < \d+:$")


#: a generated assignment whose value may read projected terms: (indent, target, value)
_ASSIGN = re.compile(r"^(\s*)([A-Za-z_]\w*) = (.+)$")
#: what a value must not hold to be evaluated twice (the second time only after a KeyError): a test
#: that would skip a term, or a nested function
_LAZY = re.compile(r"\b(?:if|and|or|lambda|for)\b")
#: a value that is one memo's ``get`` of a key (the key alone is evaluated again), and a call
_GET = re.compile(r"^[A-Za-z_]\w*\.get\((.*)\)$")
_CALL = re.compile(r"\w\(")


def plain_projections(lines: list[str], env: dict[str, Any]) -> list[str]:
    """``lines`` (a generated function's) with each assignment whose value reads projected terms
    (``P<id>[s[k]]``, or ``P<id>[t[k]]`` in a transition check) made first on the projections' plain dicts (``_ProjectionIds.plain``): a
    subscript of a dict subclass goes through the type's generic slot (``dict`` declares
    ``__getitem__`` as a method, so a subclass never inherits the C subscript), about 50 ns more
    per hit. A content seen for the first time raises KeyError, and the value is evaluated again
    as before, on the maps that compute the missing id: the terms before it are hits the second
    time (pure), and the miss happens where it did, in the same order. Only values that read every
    term unconditionally and call nothing before their last term (a memo's ``get`` of the key) are
    rewritten; ``env`` receives the plain dicts (``F<id>``)."""
    out: list[str] = []
    for line in lines:
        m = _ASSIGN.match(line)
        terms = _PROJECTED_ST.findall(line)
        key = _GET.match(m.group(3)) if m is not None else None
        if (m is None or not terms or _LAZY.search(m.group(3))
                or _CALL.search(key.group(1) if key is not None else m.group(3))):
            out.append(line)
            continue
        indent, target, value = m.groups()
        for term in terms:
            name = term[:term.index("[")]
            env["F" + name[1:]] = env[name].plain
        fast = _PROJECTED_ST.sub(lambda t: "F" + t.group(0)[1:], value)
        out += [f"{indent}try:", f"{indent}    {target} = {fast}", f"{indent}except KeyError:",
                f"{indent}    {target} = {value}"]
    return out


def hoist_projections(lines: list[str], at: int, lazy: bool = False) -> list[str]:
    """``lines`` (a generated function reading state ``s``) with each projected key term that occurs
    more than once (``P<id>[s[k]]``: several rules or properties reading one projection of one slot)
    computed once, in a local assigned before line ``at``: one dict lookup per state instead of one
    per reader. A projection is a pure function of the slot, so computing it where a reader would
    not (a spent budget's rule) changes nothing but the cost. ``lazy``: only a term some line reads
    on every state (outside any block but a budget's test) is hoisted; one read only under a gate
    or where a memo missed stays where it is read (kafka.eos's pipeline shape: two of seven)."""
    counts: dict[str, int] = {}
    every: set[str] = set()
    blocks: list[tuple[int, bool]] = []  # the open blocks: (indent, read on every state)
    for line in lines:
        indent = len(line) - len(line.lstrip(" "))
        while blocks and indent <= blocks[-1][0]:
            blocks.pop()
        always = all(kept for _, kept in blocks)
        for term in _PROJECTED.findall(line):
            counts[term] = counts.get(term, 0) + 1
            if always:
                every.add(term)
        if line.rstrip().endswith(":") and indent > 0:
            blocks.append((indent, bool(_BUDGET_TEST.match(line.strip()))))
    shared = [term for term, n in counts.items() if n > 1 and (not lazy or term in every)]
    if not shared:
        return lines
    names = {term: f"q{i}" for i, term in enumerate(shared)}
    pattern = re.compile("|".join(re.escape(term) for term in shared))
    body = [pattern.sub(lambda m: names[m.group(0)], line) for line in lines[at:]]
    return [*lines[:at], *(f"    {name} = {term}" for term, name in names.items()), *body]


def _term_order(k: Term) -> tuple[int, str]:
    """A sort key for a union of terms (a slot first, then its projections by name)."""
    return (k, "") if type(k) is int else (k[0], k[1].name)  # type: ignore[index]


class _Ref:
    """A part as a rule names it: ``name`` (one slot, or all of an actor kind) or ``name[param]``,
    optionally under an alias, ``alias=name[param]`` (to read two actors of one kind), and
    optionally through one of the part's projections, ``name[param]:projection`` (read only)."""

    __slots__ = ("base", "count", "decl", "key", "name", "param", "projection", "text", "values")

    def __init__(self, text: str, plan: _Plan, where: str, params: Iterable[str], write: bool = False) -> None:
        m = _REF.match(text)
        if not m:
            raise ComposeError(f"{where}: {text!r} is not a part name, name[param] or alias=name[param], "
                               "optionally followed by :projection")
        self.text, self.name, self.param = text, m.group(2), m.group(3)
        #: the keyword argument (and returned key) the rule uses for it
        self.key = m.group(1) or self.name
        if self.name not in plan.decls:
            raise ComposeError(f"{where}: no part named {self.name!r} (parts: {', '.join(plan.decls)})")
        self.decl = plan.decls[self.name]
        self.base, self.count = plan.slots[self.name]
        #: the part's table's values (id -> value), or None for a scalar part
        self.values: Mapping[Any, Any] | None = plan.tables[self.name].values if self.name in plan.tables else None
        #: the projection read instead of the value (its values replace the table's)
        self.projection: _Projection | None = None
        if m.group(4) is not None:
            self.projection = plan.projection(self.name, m.group(4), where)
            if write and self.projection.put is None:
                raise ComposeError(f"{where}: writes {text!r}; projection {self.projection.name} is read only "
                                   "(write the part, or declare it a Projection(get, put))")
            self.values = self.projection.values
        if self.param is not None:
            if not isinstance(self.decl, Actors):
                raise ComposeError(f"{where}: {self.name!r} is not an Actors part and cannot be indexed")
            if self.param not in params:
                raise ComposeError(f"{where}: {text!r} indexes by {self.param!r}, which is not a parameter")

    def slots(self, params: Mapping[str, Any]) -> list[int]:
        if self.param is not None:
            i = params[self.param]
            if not 0 <= i < self.count:
                raise ComposeError(f"{self.text}: index {i} out of range 0..{self.count - 1}")
            return [self.base + i]
        return list(range(self.base, self.base + self.count))

    def terms(self, params: Mapping[str, Any]) -> list[Term]:
        """The memo key's terms for this read: its slots, or each slot through the projection."""
        slots = self.slots(params)
        proj = self.projection
        return list(slots) if proj is None else [(k, proj) for k in slots]

    @property
    def whole(self) -> bool:
        """All the actors of a kind, as a tuple."""
        return isinstance(self.decl, Actors) and self.param is None


class _Binding:
    """One rule at one combination of parameter values: the slots it reads, its memo."""

    __slots__ = ("decode", "derive", "derive_args", "gate_getter", "gate_memo", "gate_slots", "getter", "held", "key_slots",
                 "logical_writes", "made", "memo", "params", "prefix", "puts", "reads", "writes")

    def __init__(self, rule: _Rule, params: dict[str, Any]) -> None:
        self.params = params
        self.reads: list[ReadSlots] = []
        key_slots: list[Term] = []
        terms: dict[str, list[Term]] = {}
        unread = rule.unread(params)
        # the ``passed`` reads this binding makes: neither in the key nor decoded, written per state
        passed = [(ref, fn, names) for ref in rule.reads for key, fn, names in rule.passed
                  if key == ref.key and key not in unread] if rule.passed else []
        given: dict[str, Any] = dict(unread) if passed else unread
        for ref, _, _ in passed:
            given[ref.key] = _Unread(f"{rule.where} uses {ref.key!r}, which it declares passed (computed apart "
                                     "from the effect)")
        for ref in rule.reads:
            if ref.key in given:
                continue  # not in the key, nor decoded: the effect receives ``given[ref.key]``
            slots = ref.slots(params)
            key_slots.extend(terms.setdefault(ref.key, ref.terms(params)))
            self.reads.append((ref.key, slots, ref.values, ref.whole))
        plan = rule.plan
        pos, consts = plan.pos, plan.consts
        #: the memo key's terms: slots, or (slot, projection), without the constant slots (a test
        #: drops one to show the memo-equivalence check catches it)
        self.key_slots = key_slots = _live_terms(_implied(key_slots), consts)
        #: the key on a state (its places: ``_Plan.pos``)
        self.getter = _getter(key_slots, pos)
        self.decode = _decoder(self.reads, pos, consts, given)
        self.logical_writes = {ref.key: (ref.slots(params), ref.whole, plan.encoder(ref.decl)) for ref in rule.writes}
        #: what an outcome writes, at the written slots' places in a state (none is a constant)
        self.writes = {key: ([plan.placed(k) for k in slots], whole, encode)
                       for key, (slots, whole, encode) in self.logical_writes.items()}
        #: the writes through a projection (``parts.Projection``): key -> its projection
        self.puts = {ref.key: ref.projection for ref in rule.writes if ref.projection is not None}
        #: per ``passed`` write: its places (in slot order), and the (cache, fold) every outcome's
        #: arguments end with (``_builder``'s ``derived``)
        self.derive: tuple[tuple[int, ...], ...] = ()
        self.derive_args: tuple[Any, ...] = ()
        for ref, fn, names in passed:
            slots = ref.slots(params)
            self.derive += (tuple(plan.placed(k) for k in slots),)
            self.derive_args += _deriver(rule.where, ref, fn, {n: params[n] for n in names}, plan.encoder(ref.decl))
        self.prefix = (rule.action, *(params[p] for p in rule.param_names))
        self.memo: dict[Hashable, tuple[Outcome, ...]] = {} if rule.plan.memoize and rule.spec.memo else _NoMemo()
        #: an effect's result (its items and their types) -> what ``_Rule._outcome`` makes of it before
        #: the state is consulted: many memo keys of a rule share one result (kafka.init_producer_id's
        #: HandleInitProducerId: 2,737 misses, 330 distinct results over 60,000 states)
        self.made: dict[Hashable, _Made] = {} if rule.plan.memoize and rule.spec.memo else _NoMemo()
        #: the rule's narrow preconditions (``_Rule.gate_reads``) memoised on the fewer slots they read:
        #: a state where they fail costs one small-key lookup, not a miss of the full key
        self.gate_slots: list[Term] = []
        if rule.gate_reads and rule.receive is None and rule.plan.memoize and rule.spec.memo:
            self.gate_slots = _live_terms([k for key, ks in terms.items() if key in rule.gate_reads for k in ks],
                                          consts)
            if rule.gate_only:
                # the outcomes are looked up only where the gate holds, and nothing else takes these
                # reads: they tell no outcomes apart, and left in they would only split the key
                self.key_slots = key_slots = _live_terms(_implied([k for key, ks in terms.items()
                                                                   if key not in rule.gate_only for k in ks]), consts)
                self.getter = _getter(key_slots, pos)
        self.gate_getter = _getter(self.gate_slots, pos) if self.gate_slots else None
        self.gate_memo: dict[Hashable, bool] = {}
        #: the places of ``_Plan.watched`` the key holds whole (set on the first outcome:
        #: ``_Plan.watched`` is made after the bindings)
        self.held: tuple[int, ...] | None = None


def _deriver(where: str, ref: _Ref, fn: Callable[..., Any], kwargs: dict[str, Any],
             encode: Callable[[Any], Any]) -> tuple[dict[tuple, tuple], Callable[[tuple], tuple]]:
    """A ``passed`` write at one binding as (cache, fold): the new contents of ``ref``'s places by
    their contents before the step, and the function that computes and caches them (``fn`` on the
    value read there, written back as the rule's writes are: through the projection's ``put``)."""
    cache: dict[tuple, tuple] = {}
    values, whole, proj = ref.values, ref.whole, ref.projection

    def fold(x: tuple) -> tuple:
        try:
            got = list(x) if values is None else [values[c] for c in x]
        except KeyError as exc:
            raise _unknown_part(exc) from None
        new = fn(tuple(got) if whole else got[0], **kwargs)
        if not whole:
            new = (new,)
        elif not isinstance(new, tuple) or len(new) != len(x):
            raise ComposeError(f"{where}: passed {ref.key} is {len(x)} actors; its function returns a tuple of that length")
        out: list[Any] = []
        for c, v in zip(x, new):
            if proj is None:
                out.append(encode(v))
            else:
                written, put = proj.writer(v, encode)
                n = written.get(c)
                out.append(put(c) if n is None else n)
        made = cache[x] = tuple(out)
        return made

    return cache, fold


def _hosted_lookup(var: str, lookup: list[str], place: tuple[str, int] | None) -> list[str]:
    """``lookup`` (source lines that set ``var``, never to None), answered by a host's place when the
    lookup has one (``_Plan._groups``): made only while the place is None, which it then fills."""
    if place is None:
        return lookup
    host, i = place
    return [f"{var} = {host}[{i}]", f"if {var} is None:", *("    " + x for x in lookup), f"    {host}[{i}] = {var}"]


class _Rule:
    """A compiled ``@rule``: its bindings and how to expand them on a state."""

    def __init__(self, plan: _Plan, fn: Callable[..., Any], spec: RuleSpec, guards: list[Callable[..., bool]]) -> None:
        self.plan, self.fn, self.spec, self.action = plan, fn, spec, spec.action
        where = f"rule {spec.action} ({getattr(fn, '__qualname__', fn)})"
        self.where = where
        #: the prefix of this rule's names in generated code: its place among the machine's rules
        #: (the plan appends each rule as it is made), not ``id()``, so equal code is equal text
        self.tag = f"r{len(plan.rules)}_"
        self.receive: ChannelOps | None = None
        self.receive_slot = -1
        from_msg = [p for p, d in spec.params.items() if d is None]
        if spec.receive is not None:
            if spec.receive not in plan.channels:
                raise ComposeError(f"{where}: receives from {spec.receive!r}, which is not a Channel")
            self.receive = plan.channels[spec.receive]
            self.receive_slot = plan.slots[spec.receive][0]
        elif from_msg or spec.match is not None:
            raise ComposeError(f"{where}: parameters without a domain ({', '.join(from_msg)}) or match= "
                               "need receive= (only a receive rule reads its message)")
        self.from_msg = tuple(from_msg)
        self.param_names = tuple(spec.params)
        self.static = {p: plan.domain(d, f"{where}, parameter {p}") for p, d in spec.params.items() if d is not None}
        self.reads = [_Ref(r, plan, where, spec.params) for r in spec.reads]
        self.writes = [_Ref(w, plan, where, spec.params, write=True) for w in spec.writes]
        #: the keyword under which a receive rule reads its own channel (None: it does not), and
        #: what the channel's id after delivery decodes to (its values, or its projection's)
        own = next((r for r in self.reads if r.name == spec.receive), None)
        self.channel_key = own.key if own is not None else None
        self.channel_values: Mapping[Any, Any] | None = own.values if own is not None else None
        for ch in spec.sends:
            if ch not in plan.channels:
                raise ComposeError(f"{where}: sends to {ch!r}, which is not a Channel")
        self.sends = {ch: (plan.slots[ch][0], plan.channels[ch]) for ch in spec.sends}
        self.budget_slot, self.budget_bound = -1, 0
        if spec.spends is not None:
            if spec.spends not in plan.budgets:
                raise ComposeError(f"{where}: spends {spec.spends!r}, which is not a Budget")
            self.budget_slot, self.budget_bound = plan.budgets[spec.spends]
        names = [*spec.params, *(r.key for r in self.reads)] + (["msg"] if self.receive else [])
        #: (read key, predicate, the parameters it takes): ``read_if``, decided per binding (``unread``)
        self.read_if: tuple[tuple[str, Callable[..., bool], tuple[str, ...]], ...] = ()
        for key, pred in spec.read_if.items():
            if key not in {r.key for r in self.reads}:
                raise ComposeError(f"{where}: read_if names {key!r}, which it does not read")
            if key == self.channel_key:
                raise ComposeError(f"{where}: read_if names {key!r}, the channel it receives from "
                                   "(its content after the delivery is part of every outcome)")
            taken = _accepts(pred, spec.params, f"read_if {key!r} of {where}", skip=0)
            self.read_if += ((key, pred, tuple(spec.params) if taken is None else taken),)
        #: (read key, function, the parameters it takes): ``passed``, written per state apart from the effect
        self.passed: tuple[tuple[str, Callable[..., Any], tuple[str, ...]], ...] = ()
        for key, passer in spec.passed.items():
            read = next((r for r in self.reads if r.key == key), None)
            write = next((r for r in self.writes if r.key == key), None)
            if read is None or write is None or read.text != write.text:
                raise ComposeError(f"{where}: passed names {key!r}, which it does not both read and write as one term")
            if key == self.channel_key:
                raise ComposeError(f"{where}: passed names {key!r}, the channel it receives from")
            other = next((r.text for r in self.writes if r.name == write.name and r is not write), None)
            if other is not None:
                raise ComposeError(f"{where}: passed {key!r} and the write {other!r} name one part")
            taken = _accepts(passer, spec.params, f"passed {key!r} of {where}")
            self.passed += ((key, passer, tuple(spec.params) if taken is None else taken),)
        dupes = {n for n in names if names.count(n) > 1}
        if dupes:
            raise ComposeError(f"{where}: {', '.join(sorted(dupes))} named twice among parameters and reads")
        whole_writes = {r.name for r in self.writes if r.projection is None}
        both = sorted({r.name for r in self.writes if r.projection is not None} & whole_writes)
        if both:
            raise ComposeError(f"{where}: writes {', '.join(both)} both whole and through a projection")
        # (the effect returns no ``passed`` write: the successors make it)
        self.allowed = {r.key for r in self.writes if r.key not in spec.passed} | set(spec.sends) | set(spec.results)
        for shape in spec.shapes:
            unknown = [n for n in shape if n not in {r.key for r in self.writes} and n not in self.sends]
            if unknown:
                raise ComposeError(f"{where}: shapes names {', '.join(unknown)}, which it does not write or send")
            if self.receive is not None and any(r.param is not None for r in self.writes if r.key in shape):
                raise ComposeError(f"{where}: shapes names a write indexed by a parameter, whose places differ "
                                   "per message")
        #: the result's names whose value's type an outcome keeps (``_outcome`` compares them on a hit
        #: of ``_Binding.made``, keyed on the items alone): the results (a step shows ``1``, ``True``
        #: and an ``IntEnum`` member apart) and the writes of parts that hold the value itself (not
        #: interned); an interned part's id, a projection's and a channel's are the same for equal values
        self.typed = tuple(sorted(set(spec.results) | {r.key for r in self.writes
                                                       if r.projection is None and not r.decl.interned}))
        self.fn_args = _accepts(fn, names, where)
        self.guards = [(g, _accepts(g, names, f"precondition of {where}")) for g in guards]
        #: the effect and the guards as ``call(machine, kwargs)`` (``_caller``)
        self.fn_call = _caller(fn, self.fn_args)
        self.guard_calls = tuple(_caller(g, names) for g, names in self.guards)
        #: the reads of the preconditions that take only some of the rule's reads (and no message):
        #: they are checked first, memoised on those reads alone (``_Binding.gate_slots``)
        read_keys = {r.key for r in self.reads}
        narrow = [(call, set(ns)) for call, (_, ns) in zip(self.guard_calls, self.guards)
                  if ns is not None and "msg" not in ns and read_keys & set(ns) and not read_keys <= set(ns)]
        self.gate_calls = tuple(call for call, _ in narrow)
        self.gate_reads: frozenset[str] = frozenset().union(*(ns & read_keys for _, ns in narrow)) if narrow else frozenset()
        #: the gate's reads that neither the effect nor a wider precondition takes: a memoised gate
        #: decides them, so the outcomes' key leaves them out (``_Binding.key_slots``)
        takers = read_keys if self.fn_args is None else set(self.fn_args)
        for call, (_, ns) in zip(self.guard_calls, self.guards):
            if call not in self.gate_calls:
                takers = takers | (read_keys if ns is None else set(ns))
        self.gate_only: frozenset[str] = self.gate_reads - takers
        combos = [dict(zip(self.static, values)) for values in itertools.product(*self.static.values())]
        self.combos = combos
        self.bindings: list[_Binding] = []
        self.by_msg: dict[Any, list[_Binding]] = {}
        self.clear()

    def __repr__(self) -> str:
        return f"<rule {self.action}>"

    def unread(self, params: Mapping[str, Any]) -> dict[str, _Unread]:
        """The reads ``read_if`` leaves out of the binding at ``params``, each with its stand-in."""
        out: dict[str, _Unread] = {}
        for key, pred, names in self.read_if:
            if not pred(**{n: params[n] for n in names}):
                out[key] = _Unread(f"{self.where} uses {key!r} at {dict(params)}, where its read_if leaves it unread")
        return out

    def clear(self) -> None:
        if self.receive is None:
            self.bindings = [_Binding(self, combo) for combo in self.combos]
        self.by_msg = {}
        #: channel id -> ((msg, rest id, ((binding, getter, memo), ...)), ...) for the messages this
        #: rule handles
        self.per_channel: dict[int, tuple[tuple[Any, int, tuple[Any, ...]], ...]] = (
            {} if self.plan.memoize else _NoMemo())
        #: (channel id, the shared key) -> every step of the rule there, as ((step, build, args,
        #: check index, rest id), ...) (``shared_key``; filled by ``receive_all``)
        self.flat: dict[Hashable, tuple[tuple[Step, Callable[..., tuple], tuple[Any, ...], int, int], ...]] = {}
        self.compile()

    def _msg_bindings(self, msg: Any) -> list[_Binding]:
        bindings = self.by_msg.get(msg)
        if bindings is None:
            match = self.spec.match
            if match is not None and not match(msg):
                bindings = self.by_msg[msg] = []
                return bindings
            if len(self.from_msg) == 1 and not hasattr(msg, self.from_msg[0]):
                values = {self.from_msg[0]: msg}  # a message that is not a record: the value itself
            else:
                try:
                    values = {p: getattr(msg, p) for p in self.from_msg}
                except AttributeError as exc:
                    raise ComposeError(f"{self.where}: message {msg!r} has no field {exc.name!r}") from None
            bindings = self.by_msg[msg] = [_Binding(self, {**values, **combo}) for combo in self.combos]
        return bindings

    def channel_plan(self, ident: int) -> tuple[tuple[Any, int, tuple[Any, ...]], ...]:
        """What this rule can receive from the channel with id ``ident`` (memoised on it)."""
        assert self.receive is not None
        plan = []
        for msg, rest in self.receive.deliverable(ident):
            bindings = self._msg_bindings(msg)
            if bindings:
                plan.append((msg, rest, tuple((b, b.getter, b.memo) for b in bindings)))
        out = self.per_channel[ident] = tuple(plan)
        return out

    def shared_key(self) -> list[Term] | None:
        """The memo key's terms common to every binding of a receive rule, or None when they
        depend on the message or a parameter (a read indexed by one, ``"producer[client]"``).

        A rule whose bindings all share one key (TwoPhase's RMRcvCommitMsg reads nothing; its
        TMRcvPrepared reads the TM's two slots whatever the message) has, on a state, steps
        that are a function of (the channel's id, that key) alone: ``receive_all`` looks them
        up once per state, instead of one call of the key's getter and one lookup per
        deliverable message and binding."""
        if self.receive is None or not self.plan.memoize or not self.spec.memo:
            return None
        if any(ref.param is not None for ref in self.reads):
            return None
        terms = _live_terms(_implied([k for ref in self.reads if ref.key not in self.spec.passed
                                      for k in ref.terms({})]), self.plan.consts)
        return [k for k in terms if k != self.receive_slot]  # the channel's own id leads the key anyway

    def receive_all(self, s: tuple, key: Hashable) -> tuple[tuple[Step, Callable[..., tuple], tuple[Any, ...], int, int], ...]:
        """A miss of ``flat``: the per-message loop of the generated code (``body``), in its order,
        so misses, computations and the order in which part values are interned do not change;
        each outcome is kept with the id of the channel after its delivery."""
        ident = s[self.plan.placed(self.receive_slot)]
        plan = self.per_channel.get(ident)
        if plan is None:
            plan = self.channel_plan(ident)
        found: list[tuple[Step, Callable[..., tuple], tuple[Any, ...], int, int]] = []
        for msg, rest, bindings in plan:
            for b, getter, memo in bindings:
                outs = memo.get(getter(s))
                if outs is None:
                    outs = self.compute(b, s, msg, rest)
                for out in outs:  # (a loop: a generator over ``rest`` would make it a cell of every miss)
                    found.append((*out, rest))
        result = self.flat[key] = tuple(found)
        return result

    # ---- the hot path: generated per rule, with its slots and bindings as constants

    def compile(self) -> None:
        """(Re)generate ``inline``: this rule's body as (source lines, names) for ``_Plan.compile`` to
        paste into the machine's one ``successors`` function (no call per rule and state); ``expand``
        is compiled from it when first called."""
        self.inline: tuple[list[str], dict[str, Any]] = self.body(self.tag)
        self.__dict__.pop("expand", None)

    def expand(self, s: tuple, out: list[tuple[Step, tuple]]) -> None:
        """Append this rule's steps from state ``s`` to ``out``: the rule's body as a function of its
        own, generated on the first call after ``compile`` (the machine's ``successors`` pastes the
        body instead, so most machines never compile it: it was a third of their start-up parse)."""
        body, names = self.inline
        env = dict(names)
        lines = ["def expand(s, out):", "    append = out.append", *("    " + x for x in body), "    return"]
        run_code("\n".join(lines), f"<compose rule {self.action}>", env)
        self.expand = env["expand"]  # type: ignore[method-assign]
        self.expand(s, out)

    def body(self, tag: str, grouped: Mapping[int, tuple[str, int]] | None = None,
             gated: Mapping[int, tuple[str, int]] | None = None,
             hosted: Mapping[int, Mapping[str, tuple[str, int]]] | None = None) -> tuple[list[str], dict[str, Any]]:
        """The statements of ``expand`` (reading ``s``, appending to ``out``, not returning) and the
        names they use, each prefixed with ``tag``. ``grouped`` maps a binding's index to (the
        variable holding its group's outcomes, its place in the group): ``_Plan.compile`` looks
        up bindings that share their key slots once per state, for all of them. ``gated`` does the
        same for the gates of gated bindings that share their gate slots (the variable holds
        every member's gate). ``hosted`` maps a binding's index to the host places of its outcomes'
        and gate's lookups (``"outs"``, ``"gate"``: (host variable, place)): the place answers,
        and is filled by the lookup the first time it is None."""
        env: dict[str, Any] = {f"{tag}compute": self.compute, f"{tag}NO": _NO_MSG}
        if self.receive is None and not self.bindings:
            return ["pass"], env  # a rule without bindings (zero actors) has no body
        placed, pos = self.plan.placed, self.plan.pos
        bslot = placed(self.budget_slot) if self.budget_slot >= 0 else -1
        rslot = placed(self.receive_slot) if self.receive is not None else -1
        # the outcome's builder makes the successor (``_builder``: the receive place, budget and
        # writes are part of its shape)
        apply = ["append((step, build(s, a, rest)))" if self.receive is not None else "append((step, build(s, a)))"]
        # (``_Plan.checked_successors`` rewrites this line to check the step's transition properties)
        if self.receive is not None:
            # a message taken and nothing else written or sent (an answer to an older attempt
            # dropped: 40% of kafka.init_producer_id's HandleInitProducerIdResponse steps), and
            # the shapes ``_receive_shapes`` names, are built in place, as a binding's full shape
            # is (``_apply``); the others stay calls of their builder
            shapes = (self._declared_shapes(rslot, bslot) if self.spec.shapes
                      else [((), (), rslot, bslot), *self._receive_shapes(rslot, bslot)])
            apply = self._apply_shapes(env, shapes, f"{tag}R", apply[0])
        lines: list[str] = []
        if self.receive is None:
            for n, b in enumerate(self.bindings):
                apply = self._apply(b, env, f"{tag}B{n}")
                if grouped and n in grouped:
                    var, i = grouped[n]
                    lines.append(f"for step, build, a, ci in {var}[{i}]:")
                    lines += [" " * 4 + x for x in apply]
                    continue
                env[f"{tag}b{n}"], env[f"{tag}m{n}"] = b, b.memo
                places = hosted.get(n, {}) if hosted else {}
                lookup = _hosted_lookup("outs", [f"outs = {tag}m{n}.get({_key_source(b.key_slots, 's', env, pos)})",
                                                 "if outs is None:",
                                                 f"    outs = {tag}compute({tag}b{n}, s, {tag}NO, 0)"],
                                        places.get("outs"))
                inner = [*lookup, "for step, build, a, ci in outs:", *(" " * 4 + x for x in apply)]
                if b.gate_slots and gated and n in gated:
                    var, i = gated[n]
                    lines += [f"if {var}[{i}]:", *("    " + x for x in inner)]
                elif b.gate_slots:
                    env[f"{tag}gm{n}"], env[f"{tag}gate"] = b.gate_memo, self.gate
                    lines += [*_hosted_lookup("g", [f"g = {tag}gm{n}.get({_key_source(b.gate_slots, 's', env, pos)})",
                                                    "if g is None:",
                                                    f"    g = {tag}gate({tag}b{n}, s)"], places.get("gate")),
                              "if g:", *("    " + x for x in inner)]
                else:
                    lines += inner
        elif (shared := self.shared_key()) is not None:
            env[f"{tag}flat"], env[f"{tag}receive_all"] = self.flat, self.receive_all
            key = f"s[{rslot}]" if not shared else f"(s[{rslot}], {', '.join(_term_source(k, 's', env, pos) for k in shared)})"
            lines += [f"k = {key}",
                      f"outs = {tag}flat.get(k)",
                      "if outs is None:",
                      f"    outs = {tag}receive_all(s, k)",
                      "for step, build, a, ci, rest in outs:"]
            lines += [" " * 4 + x for x in apply]
        else:
            env[f"{tag}per_channel"] = self.per_channel
            env[f"{tag}channel_plan"] = self.channel_plan
            lines += [f"plan = {tag}per_channel.get(s[{rslot}])",
                      "if plan is None:",
                      f"    plan = {tag}channel_plan(s[{rslot}])",
                      "for msg, rest, bindings in plan:",
                      "    for b, getter, memo in bindings:",
                      "        outs = memo.get(getter(s))",
                      "        if outs is None:",
                      f"            outs = {tag}compute(b, s, msg, rest)",
                      "        for step, build, a, ci in outs:"]
            lines += [" " * 12 + x for x in apply]
        if not lines:
            return ["pass"], env  # a rule without bindings (zero actors) has no body
        if self.receive is not None:
            # an empty channel delivers nothing: no key built, no lookup (kafka.init_producer_id's
            # init_requests is empty in two states in five). ``is``: a state holds the one int object
            # per id (``Interner.intern``); another object equal to it only costs the lookup
            env[f"{tag}EMPTY"] = self.receive.empty()
            lines = [f"if s[{rslot}] is not {tag}EMPTY:", *("    " + x for x in lines)]
        if bslot >= 0:
            lines = [f"if s[{bslot}] < {self.budget_bound}:", *("    " + x for x in lines)]
        return lines, env

    def _shape(self, b: _Binding, names: Iterable[str]) -> tuple[tuple[int, ...], tuple[int, ...], int, int]:
        """The builder shape (``_builder``'s written, sent, receive and budget places) of an
        outcome of ``b`` whose effect returned ``names`` (as ``_outcome`` builds it)."""
        written: list[int] = []
        sent: list[int] = []
        for name, (slots, whole, _) in b.writes.items():
            if name in names:
                (sent if b.puts.get(name) is not None else written).extend(slots if whole else slots[:1])
        sent += [self.plan.placed(slot) for ch, (slot, _) in self.sends.items() if ch in names]
        receive = self.plan.placed(self.receive_slot) if self.receive is not None else -1
        budget = self.plan.placed(self.budget_slot) if self.budget_slot >= 0 else -1
        if b.derive:  # every outcome of the binding makes its ``passed`` writes
            return tuple(written), tuple(sent), receive, budget, b.derive  # type: ignore[return-value]
        return tuple(written), tuple(sent), receive, budget

    def _apply(self, b: _Binding, env: dict[str, Any], name: str) -> list[str]:
        """The lines that append an outcome's step and successor: the successor built in place
        when the outcome has the shape of one that writes and sends everything ``b`` declares
        (most outcomes: no call per successor), or of one that writes everything and sends
        nothing (kafka.init_producer_id's AddPartitionsToTxn and EndTxn(COMMIT) succeeding: a
        builder call is about 800 instructions more than the tuple display), else by the
        outcome's builder. A rule's declared ``shapes`` replace these two."""
        if self.spec.shapes:
            shapes = [self._shape(b, names) for names in self.spec.shapes]
        else:
            shapes = [self._shape(b, self.allowed)]
            if self.sends and self.writes:
                shapes.append(self._shape(b, {r.key for r in self.writes}))
        return self._apply_shapes(env, shapes, name, "append((step, build(s, a)))")

    def _declared_shapes(self, rslot: int, bslot: int) -> list[tuple[tuple[int, ...], tuple[int, ...], int, int]]:
        """A receive rule's ``shapes`` (``rule``) as builder shapes, in their order: the places of
        the named writes (through a projection: folded, before the sends) and sends, as ``_made``
        lists an outcome's (its writes in declared order, then its channels)."""
        placed = self.plan.placed
        out: list[tuple[tuple[int, ...], tuple[int, ...], int, int]] = []
        for names in self.spec.shapes:
            written: list[int] = []
            sent: list[int] = []
            derived: list[tuple[int, ...]] = []
            for ref in self.writes:
                if ref.key in names and ref.key in self.spec.passed:
                    derived.append(tuple(placed(k) for k in ref.slots({})))
                elif ref.key in names:
                    slots = [placed(k) for k in ref.slots({})]
                    (sent if ref.projection is not None else written).extend(slots if ref.whole else slots[:1])
            sent += [placed(slot) for ch, (slot, _) in self.sends.items() if ch in names]
            # (a binding's ``passed`` writes in declared order, as ``_Binding.derive`` lists them)
            out.append((tuple(written), tuple(sent), rslot, bslot, *((tuple(derived),) if derived else ())))
        return out

    def _receive_shapes(self, rslot: int, bslot: int) -> list[tuple[tuple[int, ...], tuple[int, ...], int, int]]:
        """A receive rule's shapes built in place besides the message taken alone, up to
        ``RECEIVE_SHAPES``. Where its writes are one actor's, indexed by a field of the message (a
        client taking its answer: kafka.init_producer_id's HandleInitProducerIdResponse, the
        idempotent preset's HandleProduceResponse through the client's shape): the shapes of every
        write and every send, and of every write and no send, one pair per actor. Where its writes
        are all of fixed parts (the idempotent preset's HandleProduce: the leader's ``appendable``
        and the follower): each subset of the writes, the largest first, with every send and with
        none. None for other receive rules, whose outcomes' shapes their declarations leave open
        (the bindings differ per message). A rule's declared ``shapes`` replace these and the
        message taken alone (``_declared_shapes``)."""
        placed = self.plan.placed
        sent = tuple(placed(slot) for slot, _ in self.sends.values())
        out: list[tuple[tuple[int, ...], tuple[int, ...], int, int]] = []
        if len(self.writes) == 1 and self.writes[0].param in self.from_msg:
            ref = self.writes[0]
            if 2 * ref.count > RECEIVE_SHAPES:
                return []
            for i in range(ref.count):
                k = placed(ref.base + i)
                # a write through a projection folds the place per state: ``_outcome`` lists it
                # with the sends, before the channels'
                if ref.projection is None:
                    out += [((k,), sent, rslot, bslot), ((k,), (), rslot, bslot)]
                else:
                    out += [((), (k, *sent), rslot, bslot), ((), (k,), rslot, bslot)]
            return out
        if not self.writes or any(ref.param is not None for ref in self.writes):
            return []
        if 2 ** len(self.writes) * (2 if sent else 1) > RECEIVE_SHAPES:
            return []
        for n in range(len(self.writes), -1, -1):
            for subset in itertools.combinations(self.writes, n):
                written: list[int] = []
                puts: list[int] = []
                for ref in subset:  # in declared order, as ``_outcome`` lists an outcome's writes
                    slots = [placed(k) for k in ref.slots({})]
                    (puts if ref.projection is not None else written).extend(slots if ref.whole else slots[:1])
                out += [(tuple(written), (*puts, *x), rslot, bslot) for x in ((sent, ()) if sent else ((),))]
        return out

    def _apply_shapes(self, env: dict[str, Any], shapes: list[tuple[tuple[int, ...], tuple[int, ...], int, int]],
                      name: str, call: str) -> list[str]:
        """``if build is <shape's builder>:`` the successor built in place, per distinct shape in
        order (the builders named ``name``, ``name``_1, ...), ``else:`` the ``call`` line."""
        width = len(self.plan.live)
        lines: list[str] = []
        for i, shape in enumerate(dict.fromkeys(shapes)):
            var = name if i == 0 else f"{name}_{i}"
            env[var] = _builder(width, *shape)
            pre, display = _builder_lines(width, *shape)
            lines += [f"{'if' if i == 0 else 'elif'} build is {var}:", *("    " + x for x in pre),
                      f"    append((step, {display}))"]
        return [*lines, "else:", "    " + call]

    def gate(self, b: _Binding, s: tuple) -> bool:
        """A miss of the narrow preconditions' memo: are they all true here? (``compute`` checks
        them again with the others, so a state they pass is computed as before.)"""
        kwargs: dict[str, Any] = b.decode(s, dict(b.params))
        machine = self.plan.machine
        ok = True
        for call in self.gate_calls:  # (a loop: a generator would make ``machine`` and ``kwargs`` cells)
            if not call(machine, kwargs):
                ok = False
                break
        assert b.gate_getter is not None
        b.gate_memo[b.gate_getter(s)] = ok
        return ok

    # ---- a memo miss: run the guard and the effect over the readable parts

    def compute(self, b: _Binding, s: tuple, msg: Any, rest: int) -> tuple[Outcome, ...]:
        kwargs: dict[str, Any] = b.decode(s, dict(b.params))
        if msg is not _NO_MSG:
            kwargs["msg"] = msg
            if self.channel_key is not None and self.channel_values is not None:
                # a receive rule that reads its channel sees it without the message being delivered
                kwargs[self.channel_key] = self.channel_values[rest]
        machine = self.plan.machine
        outs: tuple[Outcome, ...] = ()
        for guard in self.guard_calls:
            if not guard(machine, kwargs):
                break
        else:
            result = self.fn_call(machine, kwargs)
            if result is not None:
                kind = type(result)
                if kind is dict or (kind is not list and isinstance(result, Mapping)):
                    outs = (self._outcome(b, result, s),)
                elif isinstance(result, list):
                    # (a loop: a generator over ``self``, ``b`` and ``s`` would make them cells of every miss)
                    made = []
                    for d in result:
                        made.append(self._outcome(b, d, s))
                    outs = tuple(made)
                else:
                    raise ComposeError(f"{self.where} returned a {type(result).__name__}; "
                                       "an effect returns None, a dict or a list of dicts")
                if self.spec.outside:
                    self._check_outside(s, outs, rest)
        b.memo[b.getter(s)] = outs
        return outs

    def _check_outside(self, s: tuple, outs: tuple[Outcome, ...], rest: int) -> None:
        """The model's ``OUTSIDE`` marks, checked on the state of the miss: each marked outcome's
        successor of ``s`` must be outside the machine's state constraint."""
        within = self.plan.machine.within_bounds
        for step, build, a, _ in outs:
            if build in OUTSIDE_BUILT and within(build(s, a, rest) if self.receive is not None else build(s, a)):
                raise ComposeError(f"{self.where}: the outcome {step} is marked OUTSIDE, but its successor "
                                   "is within the state constraint")

    def _outcome(self, b: _Binding, d: Mapping[str, Any], s: tuple) -> Outcome:
        # the result's items (built and hashed once; its values' types are compared only where the
        # outcome keeps them: ``typed``)
        key: Hashable = None
        made = None
        if type(d) is dict:
            key = tuple(d.items())
            try:
                made = b.made.get(key)
            except TypeError:  # an unhashable value: made afresh each time
                key = None
            if made is not None and made[3]:
                for name, kind in made[3]:
                    if type(d[name]) is not kind:
                        # an equal result of another type (``1`` and ``True``): its own outcome, made
                        # afresh each time (the key keeps the first type's)
                        made, key = None, None
                        break
        if made is None:
            made = self._made(b, d)
            if key is not None:
                b.made[key] = made
        fixed_at = made[4]
        if not fixed_at:
            return made[6]
        # the check index depends on the fixed places' contents before the step (the memo key's)
        before = s[fixed_at[0][0]] if len(fixed_at) == 1 else _before(s, fixed_at)
        outs = made[6]
        out: Outcome | None = outs.get(before)
        if out is None:
            step = made[0]
            out = outs[before] = (step, made[1], made[2], self.plan.check_index(step, made[5], _fixed(s, fixed_at)))
        return out

    def _made(self, b: _Binding, d: Mapping[str, Any]) -> _Made:
        """What ``_outcome`` makes of the effect's result ``d`` that does not depend on the state
        (``_Made``): the step, the builder, its arguments, the typed values, the fixed watched
        writes, the shape ``check_index`` takes, and the outcome (or an empty dict of them)."""
        outside = False
        if not self.allowed.issuperset(d):
            extra = set(d) - self.allowed
            if self.spec.outside and OUTSIDE in extra:
                extra.discard(OUTSIDE)
                outside = bool(d[OUTSIDE])
            if extra:
                raise ComposeError(f"{self.where} returned {', '.join(sorted(extra))}, which it does not declare "
                                   f"in writes, sends or results" + (" (OUTSIDE needs outside=True)"
                                                                     if OUTSIDE in extra else ""))
        try:
            step = b.prefix + tuple(map(d.__getitem__, self.spec.results)) if self.spec.results else b.prefix
        except KeyError as exc:
            raise ComposeError(f"{self.where} did not return its result {exc.args[0]!r}") from None
        # (plain loops and module-level helpers, no comprehension over this frame's variables: a
        # comprehension that reads ``s`` or ``sent`` makes them cells of every call, paid per miss)
        written: list[int] = []  # the places written whole, in order (a place written twice: the last wins)
        values: list[Any] = []  # their contents
        sent: list[int] = []  # the places folded through a cache (a projection's writer or a channel's sender)
        folds: list[Any] = []  # per ``sent`` place: its cache, its fold
        puts = b.puts
        for name, (slots, whole, encode) in b.writes.items():
            if name not in d:
                continue
            value = d[name]
            proj = puts.get(name) if puts else None
            if whole and (not isinstance(value, tuple) or len(value) != len(slots)):
                raise ComposeError(f"{self.where}: {name} is {len(slots)} actors; write a tuple of that length")
            if proj is not None:  # the new value depends on the fields the projection drops: per state
                if whole:
                    for k, v in zip(slots, value):
                        sent.append(k)
                        folds.extend(proj.writer(v, encode))
                else:
                    sent.append(slots[0])
                    folds.extend(proj.writer(value, encode))
                continue
            if whole:
                for k, v in zip(slots, value):
                    written.append(k)
                    values.append(encode(v))
            else:
                written.append(slots[0])
                values.append(encode(value))
        for ch, (slot, ops) in self.sends.items():
            msgs = d.get(ch)
            if msgs is not None:
                msgs = tuple(msgs) if isinstance(msgs, list) else (msgs,)
                folds.extend(ops.sender(self.plan.checked(msgs, ch)))
                sent.append(self.plan.placed(slot))
        receive = self.plan.placed(self.receive_slot) if self.receive is not None else -1
        budget = self.plan.placed(self.budget_slot) if self.budget_slot >= 0 else -1
        shape = tuple(written)
        sends = tuple(sent)
        build = (outside_builder if outside else _builder)(len(self.plan.live), shape, sends, receive, budget, b.derive)
        args = (*values, *folds)
        if b.derive:
            args += b.derive_args
            for places in b.derive:  # (written per state, as a send's fold is: never a fixed place)
                sent.extend(places)
        checked = (*shape, *sent, receive, budget)
        typed: list[tuple[str, type]] = []
        for name in self.typed:
            if name in d:
                typed.append((name, type(d[name])))
        held = b.held
        if held is None:
            held = b.held = _held(b.key_slots, self.plan.pos, self.plan.watched)
        fixed_at = _fixed_at(held, written, values, sent) if held and written else ()
        outs: Any = {} if fixed_at else (step, build, args, self.plan.check_index(step, checked))
        return step, build, args, tuple(typed), fixed_at, checked, outs


def _held(key_slots: Sequence[Any], pos: Sequence[int | None], watched: Mapping[int, Any]) -> tuple[int, ...]:
    """The places of ``watched`` that a binding's memo key (``key_slots``) holds whole."""
    places: set[int] = set()
    for k in key_slots:
        if type(k) is int:
            place = pos[k]
            if place in watched:
                places.add(place)  # type: ignore[arg-type]
    return tuple(sorted(places))


def _fixed_at(held: tuple[int, ...], written: list[int], values: list[Any],
              sent: list[int]) -> tuple[tuple[int, Any], ...]:
    """Whole writes of watched places whose content before the step the memo key fixes (a slot it
    holds whole): every state this outcome is looked up for has the same content there as the
    state of the miss. (place, content written)."""
    last = dict(zip(written, values))  # a place written twice: the last write wins (``_builder``)
    fixed: list[tuple[int, Any]] = []
    for place in held:
        if place in last and place not in sent:
            fixed.append((place, last[place]))
    return tuple(fixed)


def _before(s: tuple, fixed_at: tuple[tuple[int, Any], ...]) -> tuple[Any, ...]:
    """The contents of ``fixed_at``'s places in ``s``."""
    out: list[Any] = []
    for place, _ in fixed_at:
        out.append(s[place])
    return tuple(out)


def _fixed(s: tuple, fixed_at: tuple[tuple[int, Any], ...]) -> list[tuple[int, Any, Any]]:
    """``check_index``'s ``fixed``: (place, content before in ``s``, content written)."""
    fixed: list[tuple[int, Any, Any]] = []
    for place, after in fixed_at:
        fixed.append((place, s[place], after))
    return fixed


class _ChannelRule:
    """A rule generated from a channel's network semantics: lose or duplicate one message."""

    def __init__(self, plan: _Plan, ch: Channel, kind: str, action: str, budget: tuple[int, int]) -> None:
        self.plan, self.kind, self.action = plan, kind, action
        self.ops = plan.channels[ch.name]
        self.slot = plan.slots[ch.name][0]
        self.budget_slot, self.budget_bound = budget
        self.label = tuple(ch.label)
        self.steps: dict[Any, Step] = {}
        #: channel content id -> its outcomes as a rule's are ((step, build, args, check index), ...):
        #: the generated successors (``body``) step through them with no call of ``expand``
        self.outs: dict[int, tuple[tuple[Step, Callable[..., tuple], tuple[Any, ...], int], ...]] = (
            {} if plan.memoize else _NoMemo())
        self.clear()

    def __repr__(self) -> str:
        return f"<rule {self.action}>"

    def clear(self) -> None:
        self.steps = {}
        self.outs.clear()  # in place: the generated successors hold this dict
        placed = self.plan.placed
        #: the channel's and the budget's places in a state (written: never constants)
        self.place = placed(self.slot)
        self.budget_place = placed(self.budget_slot) if self.budget_slot >= 0 else -1

    def outcomes(self, ident: int) -> tuple[tuple[Step, Callable[..., tuple], tuple[Any, ...], int], ...]:
        """The outcomes of the channel's content ``ident``, remembered: the moves of ``expand`` in its
        order, each a write of the channel's place (and one more of the budget), checked like a
        rule's outcome (``_Plan.check_index`` of the places it writes)."""
        moves = self.ops.droppable(ident) if self.kind == "drop" else self.ops.duplicable(ident)
        place, bslot = self.place, self.budget_place
        build = _builder(len(self.plan.live), (place,), (), -1, bslot)
        outs = []
        for msg, new in moves:
            step = self.step(msg)
            outs.append((step, build, (new,), self.plan.check_index(step, (place, bslot))))
        result = self.outs[ident] = tuple(outs)
        return result

    def body(self, tag: str) -> tuple[list[str], dict[str, Any]]:
        """``expand``'s statements for the generated successors (``_Rule.body``'s form, names
        prefixed by ``tag``): one memo lookup of the channel's content, then its outcomes, the
        same steps and successors in the same order."""
        place, bslot = self.place, self.budget_place
        # every outcome has one shape (``outcomes``' builder): its successor is built in place
        _, display = _builder_lines(len(self.plan.live), (place,), (), -1, bslot)
        lines = [f"if s[{place}] is not {tag}EMPTY:",  # nothing to lose or copy (``_Rule.body``)
                 f"    outs = {tag}m.get(s[{place}])", "    if outs is None:", f"        outs = {tag}miss(s[{place}])",
                 "    for step, build, a, ci in outs:", f"        append((step, {display}))"]
        if bslot >= 0:
            lines = [f"if s[{bslot}] < {self.budget_bound}:", *("    " + x for x in lines)]
        return lines, {f"{tag}m": self.outs, f"{tag}miss": self.outcomes, f"{tag}EMPTY": self.ops.empty()}

    def step(self, msg: Any) -> Step:
        step = self.steps.get(msg)
        if step is None:
            label = self.label
            step = self.steps[msg] = (self.action, *(getattr(msg, f) for f in label)) if label else (self.action, msg)
        return step

    def expand(self, s: tuple, out: list[tuple[Step, tuple]]) -> None:
        bslot = self.budget_place
        if bslot >= 0 and s[bslot] >= self.budget_bound:
            return
        place = self.place
        moves = self.ops.droppable(s[place]) if self.kind == "drop" else self.ops.duplicable(s[place])
        for msg, new in moves:
            t = list(s)
            t[place] = new
            if bslot >= 0:
                t[bslot] += 1
            out.append((self.step(msg), tuple(t)))
