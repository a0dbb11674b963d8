"""The expansion core (TLC's ``doNext``): the only code that runs a machine's successor relation.

Every engine and every internal walk expands states here, so the guarantees users rely on are
written once:

* ``generated`` counts every successor the machine yields, self-loops and successors outside the
  state constraint included (plus the initial states, which the engines count themselves);
* a successor outside the state constraint (``within_bounds``) is neither checked nor kept;
* transition properties are checked on every generated step inside the constraint, before dedup;
* deadlock means "no successor at all" in a state the machine does not call terminal;
* each property is reported once (``violated``), and under ``stop_at_first`` the first report
  stops the expansion at that very step;
* the fingerprint is ``checker.fingerprint.fingerprint_fn``'s (symmetry, view, kind);
* invariants are checked on states the caller found new (``check_invariants``), in the machine's
  property order, the first failing state per property;
* coverage counts generated steps per action here, those the constraint cut among them
  (``Candidates.outside``, ``expand_one(outside=)``), and new states per action in ``count_new``.

``Expander.expand_chunk`` serves the batch engines (the BFS, a parallel worker, a Spark partition):
it expands a list of states and returns the candidates that survive the in-chunk dedup and the
caller's ``known`` filter, in discovery order. ``Expander.expand_one`` serves DFS, simulation and
the internal walks (graph recording, symmetry representatives, trace shortening, checkpoint keys):
a lazy iterator over one state's successors. Both can hand out the explored edges
(parent reference, child fingerprint, step) for analyses of the graph (liveness) when asked.

A *reference* is whatever the caller uses to name a state in its parent links: the fingerprint
(BFS, Spark) or a worker-local index (parallel). Findings are ``Pending`` records naming the
reference; each engine turns them into traces once the run is over (``checker.trace``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from operator import itemgetter
from typing import Any, Literal, overload

from ..fingerprint import Fingerprinter, fingerprint_fn
from ..machine import Dedup, Machine
from ..result import ViolationKind
from .common import overrides, select_properties

_NONE = object()  # "no successor yet": deadlock detection without a per-step counter
_first = itemgetter(0)  # a step's action


@dataclass
class Pending:
    """A violation seen during a run; its trace is rebuilt once the run is over.

    ``ref`` names the violating state (invariant, deadlock) or the step's source (transition), and
    ``level`` is that state's BFS level (1 = initial; for DFS and simulation the engines build the
    trace themselves). A transition's trace ends with ``step`` into ``state``.
    """

    name: str
    kind: ViolationKind
    ref: int
    level: int
    step: Any = None
    state: Any = None

    @property
    def length(self) -> int:
        """The trace's length in states."""
        return self.level + (1 if self.kind == "transition" else 0)


@dataclass
class Candidates:
    """What one chunk produced: the successors that survived dedup, in discovery order, with the
    reference of the state that generated each, plus the chunk's generated counts."""

    fps: list[int] = field(default_factory=list)
    parents: list[int] = field(default_factory=list)
    states: list[Any] = field(default_factory=list)
    steps: list[Any] = field(default_factory=list)
    generated: int = 0
    gen_cov: Counter[str] = field(default_factory=Counter)
    #: per action, the generated successors outside the state constraint
    outside: Counter[str] = field(default_factory=Counter)
    #: a finding stopped the chunk early (``stop_at_first``): the candidates are incomplete
    stopped: bool = False


def _unbind(dd: Dedup) -> None:
    """Bind ``dd`` to fresh empty containers, letting go of a chunk's."""
    dd.bind(set(), frozenset(), [], [], [], [], [], [])


class Expander:
    """One run's expansion settings and its record of findings (``found``, ``violated``)."""

    def __init__(self, machine: Machine, properties: tuple[str, ...] | None = None, *,
                 symmetry: bool = True, view: str | None = None, check_deadlock: bool = True,
                 stop_at_first: bool = True, fingerprinter: Fingerprinter | None = None,
                 no_properties: bool = False) -> None:
        self.machine = machine
        if no_properties:
            self.invariants: list = []
            self.transitions: list = []
        else:
            self.invariants, self.transitions = select_properties(machine, properties)
        self.fp = fingerprinter if fingerprinter is not None else fingerprint_fn(machine, symmetry, view)
        self.check_deadlock = check_deadlock
        self.stop_at_first = stop_at_first
        self.bounded = overrides(machine, "within_bounds")
        self.violated: set[str] = set()
        self.found: list[Pending] = []
        #: the machine's fused checks (``Machine.fused_invariants``/``fused_transitions``), by the
        #: names still checked: a property reported once drops out of the next fused check
        self._fused_inv: dict[tuple[str, ...], Any] = {}
        self._fused_trans: dict[tuple[str, ...], Any] = {}
        self._checked: dict[tuple[str, ...], Any] = {}
        self._dedup: dict[tuple[tuple[str, ...], Any, Any], Dedup | None] = {}

    def _fused_invariants(self) -> Any:
        names = tuple(n for n, _ in self.invariants if n not in self.violated)
        if names not in self._fused_inv:
            self._fused_inv[names] = self.machine.fused_invariants(names) if names else None
        return self._fused_inv[names]

    def _fused_transitions(self) -> Any:
        names = tuple(n for n, _ in self.transitions if n not in self.violated)
        if names not in self._fused_trans:
            self._fused_trans[names] = self.machine.fused_transitions(names) if names else None
        return self._fused_trans[names]

    # ------------------------------------------------------------------ findings

    def _report(self, pending: Pending) -> bool:
        """Record a finding; True when the run must stop."""
        self.found.append(pending)
        self.violated.add(pending.name)
        return self.stop_at_first

    @property
    def stopped(self) -> bool:
        return self.stop_at_first and bool(self.found)

    def check_invariants(self, states: Sequence[Any], refs: Sequence[int], level: int) -> list[Pending]:
        """Invariants on states the caller found new: per property (machine order) the first state
        that breaks it. Under ``stop_at_first`` only the first report. ``refs[i]`` names
        ``states[i]``; ``level`` is their level."""
        out: list[Pending] = []
        fused = self._fused_invariants()
        if fused is not None and all(map(fused, states)):
            return out  # the usual case: one lookup per state; else each property's own check
        violated = self.violated
        for name, check in self.invariants:
            if name in violated or all(map(check, states)):
                continue
            bad = next(i for i, st in enumerate(states) if not check(st))
            pending = Pending(name, "invariant", refs[bad], level)
            out.append(pending)
            if self._report(pending):
                break
        return out

    def first_broken(self, states: Sequence[Any], skip: set[str]) -> list[tuple[str, int]]:
        """(property, index) of the first state breaking each invariant not in ``skip`` (which is
        updated), without recording anything: for Spark, which checks candidates before the
        anti-join decides which are new."""
        out: list[tuple[str, int]] = []
        fused = self._fused_invariants()
        if fused is not None and all(map(fused, states)):
            return out
        for name, check in self.invariants:
            if name in skip or name in self.violated or all(map(check, states)):
                continue
            out.append((name, next(i for i, st in enumerate(states) if not check(st))))
            skip.add(name)
        return out

    def check_sample(self, states: Sequence[Any], limit: int = 64) -> None:
        """``Fingerprinter.check`` on the first ``limit`` states and successors (inside the
        constraint) of ``states``: the types every kind needs and, for the ``hash`` kind, its domain.
        Successors are sampled, not only new states: a successor outside the domain may share its
        ``hash`` with a visited state and never be new."""
        check = self.fp.check
        within = self.machine.within_bounds
        done = 0
        for state in states:
            check(state)
            done += 1
            for _step, nxt in self.machine.successors(state):
                if done >= limit:
                    return
                if not self.bounded or within(nxt):
                    check(nxt)
                    done += 1
            if done >= limit:
                return

    def init_states(self) -> tuple[int, list[Any], list[int]]:
        """(initial states generated, those within the state constraint, their fingerprints);
        duplicates are left to the caller's visited set."""
        machine = self.machine
        within = machine.within_bounds
        bounded = self.bounded
        fn = self.fp.fn
        generated = 0
        states: list[Any] = []
        fps: list[int] = []
        for state in machine.init_states():
            generated += 1
            if bounded and not within(state):
                continue
            states.append(state)
            fps.append(fn(state))
        return generated, states, fps

    # ------------------------------------------------------------------ batch expansion

    def expand_chunk(self, states: Sequence[Any], refs: Sequence[int], level: int,
                     known: Any = frozenset(), seen: set[int] | None = None,
                     edges: list[tuple[int, int, Any]] | None = None, dedup: bool = False) -> Candidates:
        """Expand ``states`` (named by ``refs``, at ``level``) in order.

        A successor is a candidate unless its fingerprint is in ``known`` (states the caller
        knows are visited; it may miss some) or in ``seen`` (this chunk's, or a longer scope the
        caller passes in; updated). Both hold fingerprints of states inside the constraint only
        (visited states and candidates are): with hash fingerprints and no symmetry (or a
        constraint the machine declares ``symmetric_constraint``), a successor found there is not
        asked ``within_bounds`` again. ``edges``, when given, receives (parent reference, child
        fingerprint, step) for every successor inside the constraint, duplicates included.
        ``dedup`` lets a machine that offers ``dedup_successors`` drop the duplicates as it makes
        them (without edges, with ``hash`` fingerprints, and with a constraint asked after the
        duplicate test): same candidates, counts and findings.
        """
        machine = self.machine
        successors = machine.successors
        within = machine.within_bounds
        bounded = self.bounded
        fpr = self.fp
        fn = fpr.fn
        canonical = fpr.canonical
        mode = (0 if canonical is None else 1) if fpr.fast else 2
        violated = self.violated
        trans = [(n, c) for n, c in self.transitions if n not in violated]
        fused = self._fused_transitions()
        fused_get = fused.get if fused is not None else None
        deadlock = self.check_deadlock
        out = Candidates()
        fps_append = out.fps.append
        par_append = out.parents.append
        st_append = out.states.append
        step_append = out.steps.append
        if seen is None:
            seen = set()
        seen_add = seen.add
        actions: list[str] = []  # counted by Counter at the end (in C)
        act_append = actions.append
        cut: list[str] = []  # the actions of successors outside the constraint
        cut_append = cut.append
        record = edges is not None
        edge_append = edges.append if edges is not None else None
        # the transition check of one step, by action: the machine's fused checks, else every
        # property at once (each one's own check names the finding), else none
        if fused_get is not None:
            tget = fused_get
        elif trans:
            def every(state: Any, step: Any, nxt: Any) -> bool:
                return all(check(state, step, nxt) for name, check in trans if name not in violated)
            tget = lambda _action: every
        else:
            tget = {}.get
        # the machine's successors that check the transition properties themselves (only steps
        # that may fail one): after a state whose ``failed`` stays empty, none of its steps needs
        # an engine check; after another, its steps are checked one by one as below (``slow``)
        checked: Any = None
        # the machine's successors that drop the duplicates themselves (``dedup_successors``), where
        # the loops below would drop a duplicate before asking the constraint (``sym_first`` off) or
        # there is none
        dd: Any = None
        sym_first = mode == 1 and not machine.symmetric_constraint
        if not record and mode != 2 and (not trans or fused_get is not None):
            if dedup and (not sym_first or not bounded):
                dd = self._dedup_successors(tuple(n for n, _ in trans), canonical, within if bounded else None)
            if dd is None:
                checked = (successors, []) if not trans else self._checked_successors(tuple(n for n, _ in trans))
        try:
            if checked is not None or dd is not None:
                # (a method, not a closure: the loops' locals stay fast locals, not cells)
                slow = self._slow_state
                ctx = (level, mode, sym_first, canonical, bounded, within, tget, trans, seen, known, act_append,
                       cut_append, seen_add, fps_append, par_append, st_append, step_append, deadlock)

                # the machine's successors drop the duplicates themselves (``Machine.dedup_successors``),
                # keeping the others in this chunk's lists as the loops below would; ``actions``
                # grows by every successor generated (``mark``: its length before the state). After a
                # state whose ``failed`` is not empty, what its call recorded is forgotten and the
                # state is taken again from ``successors`` (``_undo``, ``slow``)
                if dd is not None:
                    expand, dfailed = dd.expand, dd.failed
                    dd.bind(seen, known, actions, cut, out.fps, out.parents, out.states, out.steps)
                    try:
                        mark = 0
                        for state, ref in zip(states, refs):
                            expand(state, ref)
                            if dfailed:
                                dfailed.clear()
                                self._undo(state, ref, out, actions, mark, cut, seen, known, canonical,
                                           within if bounded else None)
                                if slow(state, ref, successors(state), ctx):
                                    out.stopped = True
                                    return out
                            elif len(actions) == mark and deadlock and self._deadlock_stops(state, ref, level):
                                out.stopped = True
                                return out
                            mark = len(actions)
                        return out
                    finally:
                        # The machine holds what it is bound to: without this, the last chunk's
                        # candidate states and the level's duplicate sets stay alive with the
                        # machine after the run, and the collection that follows the run walks
                        # them (perf26b: row 4, 60,000 states)
                        _unbind(dd)

                succ, failed = checked

                # the same three loops as below without a transition check per step (the usual
                # state: ``failed`` empty)
                if mode == 0:
                    for state, ref in zip(states, refs):
                        lst = succ(state)
                        if failed:
                            failed.clear()
                            if slow(state, ref, lst, ctx):
                                out.stopped = True
                                return out
                            continue
                        nxt = _NONE
                        for step, nxt in lst:
                            act_append(step[0])
                            h = hash(nxt)
                            if h in seen or h in known:
                                continue
                            if bounded and not within(nxt):
                                cut_append(step[0])
                                continue
                            seen_add(h)
                            fps_append(h)
                            par_append(ref)
                            st_append(nxt)
                            step_append(step)
                        if nxt is _NONE and deadlock and self._deadlock_stops(state, ref, level):
                            out.stopped = True
                            return out
                    return out
                for state, ref in zip(states, refs):
                    lst = succ(state)
                    if failed:
                        failed.clear()
                        if slow(state, ref, lst, ctx):
                            out.stopped = True
                            return out
                        continue
                    nxt = _NONE
                    for step, nxt in lst:
                        act_append(step[0])
                        if sym_first:
                            if bounded and not within(nxt):
                                cut_append(step[0])
                                continue
                            h = hash(canonical(nxt))  # type: ignore[misc]
                            if h in seen or h in known:
                                continue
                        else:
                            h = hash(canonical(nxt))  # type: ignore[misc]
                            if h in seen or h in known:
                                continue
                            if bounded and not within(nxt):
                                cut_append(step[0])
                                continue
                        seen_add(h)
                        fps_append(h)
                        par_append(ref)
                        st_append(nxt)
                        step_append(step)
                    if nxt is _NONE and deadlock and self._deadlock_stops(state, ref, level):
                        out.stopped = True
                        return out
                return out
            if not record and mode == 0:
                # the usual case, without the branches it does not need: fingerprints by ``hash``,
                # transition properties through the fused checks (one dict lookup per step), no
                # edges. Same order, counts and findings as the general loop below, with one
                # shortcut: a successor whose fingerprint is in ``seen`` or ``known`` equals a
                # state kept before, which was inside the constraint, so ``within`` is not asked
                # again (most successors are such duplicates: 65% on kafka.eos's yardstick).
                for state, ref in zip(states, refs):
                    nxt = _NONE
                    for step, nxt in successors(state):
                        action = step[0]
                        act_append(action)
                        h = hash(nxt)
                        if h in seen or h in known:
                            if ((tf := tget(action)) is not None and not tf(state, step, nxt)
                                    and self._transition_findings(trans, state, step, nxt, ref, level)):
                                out.stopped = True
                                return out
                            continue
                        if bounded and not within(nxt):
                            cut_append(action)
                            continue
                        if ((tf := tget(action)) is not None and not tf(state, step, nxt)
                                and self._transition_findings(trans, state, step, nxt, ref, level)):
                            out.stopped = True
                            return out
                        seen_add(h)
                        fps_append(h)
                        par_append(ref)
                        st_append(nxt)
                        step_append(step)
                    if nxt is _NONE and deadlock and self._deadlock_stops(state, ref, level):
                        out.stopped = True
                        return out
                return out
            if not record and mode == 1 and machine.symmetric_constraint:
                # the usual loop with symmetry, for a constraint declared invariant under it: a
                # successor whose representative is in ``seen``/``known`` lies in the orbit of a
                # state kept before, so it is inside the constraint too (two in three successors)
                for state, ref in zip(states, refs):
                    nxt = _NONE
                    for step, nxt in successors(state):
                        action = step[0]
                        act_append(action)
                        h = hash(canonical(nxt))  # type: ignore[misc]
                        if h in seen or h in known:
                            if ((tf := tget(action)) is not None and not tf(state, step, nxt)
                                    and self._transition_findings(trans, state, step, nxt, ref, level)):
                                out.stopped = True
                                return out
                            continue
                        if bounded and not within(nxt):
                            cut_append(action)
                            continue
                        if ((tf := tget(action)) is not None and not tf(state, step, nxt)
                                and self._transition_findings(trans, state, step, nxt, ref, level)):
                            out.stopped = True
                            return out
                        seen_add(h)
                        fps_append(h)
                        par_append(ref)
                        st_append(nxt)
                        step_append(step)
                    if nxt is _NONE and deadlock and self._deadlock_stops(state, ref, level):
                        out.stopped = True
                        return out
                return out
            if not record and mode == 1:
                # the same with symmetry: the constraint is asked first (it sees the successor, not
                # its representative, and need not be symmetric)
                for state, ref in zip(states, refs):
                    nxt = _NONE
                    for step, nxt in successors(state):
                        action = step[0]
                        act_append(action)
                        if bounded and not within(nxt):
                            cut_append(action)
                            continue
                        if ((tf := tget(action)) is not None and not tf(state, step, nxt)
                                and self._transition_findings(trans, state, step, nxt, ref, level)):
                            out.stopped = True
                            return out
                        h = hash(canonical(nxt))  # type: ignore[misc]
                        # the chunk's own set first: it is small (in cache) and catches the
                        # duplicates among siblings; either way the test is the same
                        if h in seen or h in known:
                            continue
                        seen_add(h)
                        fps_append(h)
                        par_append(ref)
                        st_append(nxt)
                        step_append(step)
                    if nxt is _NONE and deadlock and self._deadlock_stops(state, ref, level):
                        out.stopped = True
                        return out
                return out
            for state, ref in zip(states, refs):
                nxt = _NONE
                for step, nxt in successors(state):
                    act_append(step[0])
                    if bounded and not within(nxt):
                        cut_append(step[0])
                        continue
                    if (trans and (fused_get is None or ((tf := fused_get(step[0])) is not None
                                                         and not tf(state, step, nxt)))
                            and self._transition_findings(trans, state, step, nxt, ref, level)):
                        out.stopped = True
                        return out
                    if mode == 0:
                        h = hash(nxt)
                    elif mode == 1:
                        h = hash(canonical(nxt))  # type: ignore[misc]
                    else:
                        h = fn(nxt)
                    if record:
                        edge_append((ref, h, step))  # type: ignore[misc]
                    if h in known or h in seen:  # most successors are old: drop them now
                        continue
                    seen_add(h)
                    fps_append(h)
                    par_append(ref)
                    st_append(nxt)
                    step_append(step)
                if nxt is _NONE and deadlock and self._deadlock_stops(state, ref, level):
                    out.stopped = True
                    return out
            return out
        finally:
            out.gen_cov = Counter(actions)
            out.generated = len(actions)
            if cut:
                out.outside = Counter(cut)

    def _slow_state(self, state: Any, ref: int, lst: Iterable[tuple[Any, Any]], ctx: tuple[Any, ...]) -> bool:
        """One state's successors as ``expand_chunk``'s loops take them, checking each step in the
        constraint (after ``checked_successors`` recorded a failure); True when a finding stops
        the run."""
        (level, mode, sym_first, canonical, bounded, within, tget, trans, seen, known, act_append,
         cut_append, seen_add, fps_append, par_append, st_append, step_append, deadlock) = ctx
        nxt = _NONE
        for step, nxt in lst:
            action = step[0]
            act_append(action)
            if sym_first:
                if bounded and not within(nxt):
                    cut_append(action)
                    continue
                if ((tf := tget(action)) is not None and not tf(state, step, nxt)
                        and self._transition_findings(trans, state, step, nxt, ref, level)):
                    return True
                h = hash(canonical(nxt))
                if h in seen or h in known:
                    continue
            else:
                h = hash(nxt) if mode == 0 else hash(canonical(nxt))
                if h in seen or h in known:
                    if ((tf := tget(action)) is not None and not tf(state, step, nxt)
                            and self._transition_findings(trans, state, step, nxt, ref, level)):
                        return True
                    continue
                if bounded and not within(nxt):
                    cut_append(action)
                    continue
                if ((tf := tget(action)) is not None and not tf(state, step, nxt)
                        and self._transition_findings(trans, state, step, nxt, ref, level)):
                    return True
            seen_add(h)
            fps_append(h)
            par_append(ref)
            st_append(nxt)
            step_append(step)
        return nxt is _NONE and deadlock and self._deadlock_stops(state, ref, level)

    def _undo(self, state: Any, ref: Any, out: Candidates, actions: list[str], mark: int, cut: list[str],
              seen: set[int], known: Any, canonical: Any, within: Any) -> None:
        """Forget what ``Machine.dedup_successors`` recorded for ``state`` (the last state expanded,
        named by ``ref``): the actions it counted after ``mark``, its candidates (the last ones, named
        by ``ref``; the chunk's states have distinct references) and its successors cut by the
        constraint (those among its successors new before it: counted again here)."""
        del actions[mark:]
        parents = out.parents
        k = len(parents)
        while k and parents[k - 1] == ref:
            k -= 1
        seen.difference_update(out.fps[k:])
        del out.fps[k:], parents[k:], out.states[k:], out.steps[k:]
        if within is not None:
            cuts = 0
            mine: set[int] = set()
            for _step, nxt in self.machine.successors(state):
                h = hash(nxt) if canonical is None else hash(canonical(nxt))
                if h in seen or h in known or h in mine:
                    continue
                if within(nxt):
                    mine.add(h)
                else:
                    cuts += 1
            if cuts:
                del cut[-cuts:]

    def _dedup_successors(self, names: tuple[str, ...], canonical: Any, within: Any) -> Dedup | None:
        """The machine's ``dedup_successors`` for these transition properties, canonical form and
        constraint (None: it has none)."""
        key = (names, canonical, within)
        if key not in self._dedup:
            self._dedup[key] = self.machine.dedup_successors(names, canonical, within)
        return self._dedup[key]

    def _checked_successors(self, names: tuple[str, ...]) -> Any:
        """The machine's ``checked_successors`` for these transition properties (None: it has none)."""
        if names not in self._checked:
            self._checked[names] = self.machine.checked_successors(names)
        return self._checked[names]

    def _deadlock_stops(self, state: Any, ref: int, level: int) -> bool:
        """A state without successors: a deadlock unless reported already or the machine calls the
        state terminal; True when the finding stops the run."""
        return ("deadlock" not in self.violated and not self.machine.is_terminal(state)
                and self._report(Pending("deadlock", "deadlock", ref, level)))

    def _transition_findings(self, trans: list[tuple[str, Any]], state: Any, step: Any, nxt: Any, ref: int,
                             level: int) -> bool:
        """Each transition property on one step whose fused check failed, in order; True when a
        finding stops the run."""
        violated = self.violated
        for name, check in trans:
            if (name not in violated and not check(state, step, nxt)
                    and self._report(Pending(name, "transition", ref, level, step, nxt))):
                return True
        return False

    # ------------------------------------------------------------------ one state at a time

    @overload
    def expand_one(self, state: Any, ref: int = 0, level: int = 0, gen_cov: dict[str, int] | None = None,
                   out_of_bounds: Literal[False] = False, outside: dict[str, int] | None = None
                   ) -> Iterator[tuple[Any, Any, int]]: ...

    @overload
    def expand_one(self, state: Any, ref: int = 0, level: int = 0, gen_cov: dict[str, int] | None = None,
                   *, out_of_bounds: Literal[True], outside: dict[str, int] | None = None
                   ) -> Iterator[tuple[Any, Any, int | None]]: ...

    def expand_one(self, state: Any, ref: int = 0, level: int = 0,
                   gen_cov: dict[str, int] | None = None, out_of_bounds: bool = False,
                   outside: dict[str, int] | None = None) -> Iterator[tuple[Any, Any, int | None]]:
        """(step, successor, fingerprint) for each successor of ``state`` inside the constraint,
        lazily, checking transition properties on the way and deadlock at the end. Generated
        steps are counted into ``gen_cov``, those outside the constraint also into ``outside``.
        Stops early once ``stopped``: callers check ``found`` after each item (a transition's
        finding comes before its successor would be yielded).

        ``out_of_bounds`` also yields the successors outside the state constraint, in the machine's
        order among the others, with fingerprint None (neither checked nor fingerprinted): liveness
        counts an action whose step leaves the constraint as enabled."""
        machine = self.machine
        within = machine.within_bounds
        bounded = self.bounded
        fn = self.fp.fn
        violated = self.violated
        trans = [(n, c) for n, c in self.transitions if n not in violated]
        fused = self._fused_transitions()
        any_successor = False
        for step, nxt in machine.successors(state):
            any_successor = True
            if gen_cov is not None:
                action = step[0]
                gen_cov[action] = gen_cov.get(action, 0) + 1
            if bounded and not within(nxt):
                if outside is not None:
                    action = step[0]
                    outside[action] = outside.get(action, 0) + 1
                if out_of_bounds:
                    yield step, nxt, None
                continue
            if fused is not None:
                tf = fused.get(step[0])
                if tf is None or tf(state, step, nxt):
                    yield step, nxt, fn(nxt)
                    continue
            if self._transition_findings(trans, state, step, nxt, ref, level):
                return
            yield step, nxt, fn(nxt)
        if not any_successor and self.check_deadlock:
            self._deadlock_stops(state, ref, level)


def steps_of(machine: Machine, state: Any) -> Iterator[Any]:
    """The steps ``machine`` yields from ``state``, constraint or not, with nothing checked, counted or
    fingerprinted: which actions are enabled there (the liveness graph's symmetry check asks it of
    states that are not the run's, so they must not reach the run's findings or coverage)."""
    for step, _ in machine.successors(state):
        yield step


def count_new(coverage: dict[str, int], steps: Sequence[Any], indices: Sequence[int]) -> None:
    """Add the new states ``indices`` (into ``steps``) to the per-action distinct counts."""
    for action, n in Counter(map(_first, map(steps.__getitem__, indices))).items():  # in C
        coverage[action] = coverage.get(action, 0) + n


def count_all(coverage: dict[str, int], steps: Sequence[Any]) -> None:
    """``count_new`` over every one of ``steps``."""
    for action, n in Counter(map(_first, steps)).items():  # in C
        coverage[action] = coverage.get(action, 0) + n


def add_counts(coverage: dict[str, int], counts: dict[str, int] | Counter[str]) -> None:
    for action, n in counts.items():
        coverage[action] = coverage.get(action, 0) + n


def bfs_walk(expander: Expander, max_depth: int | None = None
             ) -> Iterator[tuple[int, int | None, Any, Any, int, bool]]:
    """Breadth-first over the constrained space, for the internal walks that keep what they see
    (graph recording, symmetry representatives): yields (level, parent fingerprint or None, step
    or None, state, fingerprint, new) for every initial state and every successor, duplicates
    included (``new`` False), the first-reached state of each fingerprint expanded once. States
    past ``max_depth`` levels are not expanded."""
    _, inits, fps = expander.init_states()
    seen: set[int] = set()
    frontier: list[tuple[int, Any]] = []
    for state, h in zip(inits, fps):
        new = h not in seen
        if new:
            seen.add(h)
            frontier.append((h, state))
        yield 1, None, None, state, h, new
    level = 1
    while frontier and (max_depth is None or level < max_depth):
        level += 1
        nxt_frontier: list[tuple[int, Any]] = []
        for pfp, state in frontier:
            for step, nxt, h in expander.expand_one(state):
                new = h not in seen
                if new:
                    seen.add(h)
                    nxt_frontier.append((h, nxt))
                yield level, pfp, step, nxt, h, new
        frontier = nxt_frontier
