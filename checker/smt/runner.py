"""Discharging obligations with Z3: direct validity, induction, bounded unrolling, k-induction.

Every solver call gets what is left of the obligation's time budget; a call that runs out (or that
Z3 gives up on) makes the obligation "unknown", never "proved". A counterexample is read back from
the solver's model as concrete values, step by step (``CexTrace``), ready for the counterexample
file format.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import z3

from .obligations import Obligation, Problem, Shown, Status, TransitionSystem, ValidProblem, Widths
from .ops import Z3OPS, narrow, to_bool, value_of

SELECTOR_BITS = 16
#: at most this long is spent making a counterexample's values readable
TIDY_SECONDS = 3.0
#: an induction query the incremental solver has not settled by then goes to a fresh solver
INCREMENTAL_SECONDS = 2.0


@dataclass
class CexTrace:
    """A counterexample read from a solver model: CexStep-shaped dicts (index, action, label,
    params, state) and how it was found."""

    problem: str
    #: "invariant" (a state claim fails), "transition" (a step claim fails) or "valid" (a
    #: for-all claim over a rule's inputs fails)
    kind: str
    method: str
    steps: list[dict[str, Any]]
    #: the problem object it refutes, and for a valid problem the refuted query's label and the
    #: input values: enough to replay the counterexample on Python ints (``checker.smt.replay``)
    source: Problem | None = None
    query: str = ""
    inputs: dict[str, int | bool] = field(default_factory=dict)
    #: set by the prover after a concrete replay: "" when confirmed, else what went wrong
    replay_error: str | None = None


@dataclass
class ObligationResult:
    name: str
    doc: str
    kind: str
    status: Status
    #: how it was decided, e.g. "direct", "induction", "k-induction (k=2)", "bounded unrolling (k=3)"
    method: str
    #: wall-clock seconds spent in this obligation (solver calls and encoding)
    seconds: float
    #: one line per problem (e.g. per protocol variant): its status, method and notes
    details: list[str] = field(default_factory=list)
    counterexample: CexTrace | None = None
    #: CPU seconds of this process (Z3 runs in-process): the solver's own time even on a busy machine
    cpu_seconds: float = 0.0


class _OutOfTime(Exception):
    pass


#: Z3's reason when its own SIGINT handler (installed for the length of every check) cancelled it
_KEYBOARD = "interrupted from keyboard"


def _check(s: z3.Solver, *assumptions: Any, limit: float) -> z3.CheckSatResult:
    """``s.check`` (with ``limit`` the timeout in seconds just set on it), except that a Ctrl-C is a
    Ctrl-C: Z3 catches a SIGINT that arrives during a check and only answers unknown, so the
    obligation was reported unknown and the run went on to the end. A QF_BV solver gives the reason
    "interrupted from keyboard"; an incremental ``z3.Solver`` says "canceled", as it does for its
    timeout, so there a "canceled" well before the timeout is the interrupt."""
    start = time.monotonic()
    r = s.check(*assumptions)
    if r == z3.unknown:
        reason = s.reason_unknown()
        if reason == _KEYBOARD or (reason == "canceled" and time.monotonic() - start < 0.9 * limit):
            raise KeyboardInterrupt
    return r


class _Budget:
    def __init__(self, seconds: float) -> None:
        self.deadline = time.monotonic() + seconds

    def solver(self) -> z3.Solver:
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise _OutOfTime()
        s = z3.SolverFor("QF_BV")
        s.set(timeout=max(1, int(left * 1000)))
        return s

    def check(self, s: z3.Solver) -> z3.CheckSatResult:
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise _OutOfTime()
        s.set(timeout=max(1, int(left * 1000)))
        return _check(s, limit=left)


def make_vars(widths: Widths, tag: str) -> dict[str, Any]:
    """Fresh Z3 constants for named fields; ``tag`` keeps names distinct per time step."""
    out: dict[str, Any] = {}
    for name, width in widths.items():
        label = f"{name}{tag}"
        out[name] = z3.Bool(label) if width == 0 else z3.BitVec(label, width)
    return out


def _stored(value: Any, width: int) -> Any:
    return to_bool(value) if width == 0 else narrow(value, width)


def _values(model: z3.ModelRef, terms: Mapping[str, Any]) -> dict[str, int | bool]:
    return {name: value_of(model, t) for name, t in terms.items()}


def _label(action: str, params: Mapping[str, Any]) -> str:
    if not params:
        return action
    return f"{action}(" + ", ".join(f"{k}={v}" for k, v in params.items()) + ")"


def _shown_steps(model: z3.ModelRef, shown: Sequence[Shown]) -> list[dict[str, Any]]:
    steps = []
    for i, sh in enumerate(shown):
        params = _values(model, sh.params)
        steps.append({"index": i, "action": sh.action, "label": sh.label or _label(sh.action or "Init", params),
                      "params": params, "state": _values(model, sh.state)})
    return steps


def _candidates(var: Any) -> list[Any]:
    """Values a reader recognises, tried first when tidying a counterexample."""
    if isinstance(var, z3.BoolRef):
        return [z3.BoolVal(False), z3.BoolVal(True)]
    w = var.size()
    top = (1 << (w - 1)) - 1
    values = [0, 1, -1, 2, 3, top, top - 1, -top - 1, 5, 7, 100]
    return [z3.BitVecVal(v, w) for v in dict.fromkeys(values)]


def _tidy(solver: z3.Solver, variables: Sequence[Any], budget: _Budget, seconds: float) -> z3.ModelRef:
    """A model of ``solver`` (just checked sat) whose free values are small or boundary values
    where the counterexample allows it: greedily pins each variable to the first candidate that
    keeps the query satisfiable. Only for readability; gives up after ``seconds`` and then returns
    the best model found so far."""
    best = solver.model()
    stop = min(time.monotonic() + seconds, budget.deadline)
    for var in variables:
        for cand in _candidates(var):
            left = stop - time.monotonic()
            if left <= 0:
                return best
            solver.push()
            solver.add(var == cand)
            solver.set(timeout=max(1, int(left * 1000)))
            r = _check(solver, limit=left)
            if r == z3.sat:
                best = solver.model()
            solver.pop()
            if r == z3.sat:
                solver.add(var == cand)
                break
    return best


# --- valid problems ---------------------------------------------------------------------------

def _prove_valid(problem: ValidProblem, budget: _Budget) -> tuple[Status, str, str, CexTrace | None]:
    inputs = make_vars(problem.inputs, "")
    for q in problem.queries(Z3OPS, inputs):
        s = budget.solver()
        s.add(*[to_bool(p) for p in q.premises])
        s.add(z3.Not(to_bool(q.claim)))
        r = budget.check(s)
        if r == z3.sat:
            model = _tidy(s, list(inputs.values()), budget, TIDY_SECONDS)
            steps = _shown_steps(model, q.steps) if q.steps else [
                {"index": 0, "action": None, "label": "inputs", "params": {},
                 "state": _values(model, inputs)}]
            return "counterexample", "direct", f"{q.label}: counterexample", CexTrace(
                f"{problem.label}/{q.label}", "valid", "direct", steps, problem, q.label,
                _values(model, inputs))
        if r == z3.unknown:
            return "unknown", "direct", f"{q.label}: solver unknown ({s.reason_unknown()})", None
    return "proved", "direct", "", None


# --- transition systems -----------------------------------------------------------------------

class _Unrolling:
    """States s_0..s_k of a transition system, with one action selector per step."""

    def __init__(self, ts: TransitionSystem, prefix: str) -> None:
        self.ts = ts
        self.prefix = prefix
        self.names = list(ts.actions)
        self.states: list[dict[str, Any]] = []
        self.selectors: list[Any] = []
        self.params: list[dict[str, dict[str, Any]]] = []
        #: per step: the condition "this step violates the step claim"
        self.step_bad: list[Any] = []

    def state(self, t: int) -> dict[str, Any]:
        while len(self.states) <= t:
            self.states.append(make_vars(self.ts.state, f"@{self.prefix}{len(self.states)}"))
        return self.states[t]

    def axioms(self, t: int) -> list[Any]:
        if self.ts.axioms is None:
            return []
        return [to_bool(a) for a in self.ts.axioms(Z3OPS, self.state(t))]

    def transition(self, t: int, only: str | None = None) -> list[Any]:
        """Constraints for the step s_t -> s_{t+1} (restricted to one action if ``only``)."""
        s, s2 = self.state(t), self.state(t + 1)
        sel = z3.BitVec(f"action@{self.prefix}{t}", SELECTOR_BITS)
        cons: list[Any] = [z3.ULT(sel, len(self.names))]
        params: dict[str, dict[str, Any]] = {}
        bad: list[Any] = []
        for i, name in enumerate(self.names):
            if only is not None and name != only:
                # one action per query: the others' rule encodings would only slow the solver
                cons.append(sel != i)
                continue
            act = self.ts.actions[name]
            p = make_vars(act.params, f"@{self.prefix}{t}.{name}")
            guard, changes = act.step(Z3OPS, s, p)
            unknown = set(changes) - set(self.ts.state)
            if unknown:
                raise ValueError(f"action {name} sets unknown fields {sorted(unknown)}")
            eqs = [s2[v] == _stored(changes.get(v, s[v]), w) for v, w in self.ts.state.items()]
            cons.append(z3.Implies(sel == i, z3.And(to_bool(guard), *eqs)))
            params[name] = p
            if self.ts.step_claim is not None:
                ok = to_bool(self.ts.step_claim(Z3OPS, s, name, p, s2))
                bad.append(z3.And(sel == i, z3.Not(ok)))
        self.selectors.append(sel)
        self.params.append(params)
        self.step_bad.append(z3.Or(*bad) if bad else z3.BoolVal(False))
        return cons

    def claim(self, t: int) -> Any:
        if self.ts.claim is None:
            return z3.BoolVal(True)
        return to_bool(self.ts.claim(Z3OPS, self.state(t)))

    def invariant(self, t: int) -> dict[str, Any]:
        return {k: to_bool(v) for k, v in self.ts.invariant(Z3OPS, self.state(t)).items()}

    def trace(self, model: z3.ModelRef, length: int) -> list[dict[str, Any]]:
        """Concrete steps s_0..s_length from a model."""
        steps = [{"index": 0, "action": None, "label": "initial state", "params": {},
                  "state": _values(model, self.state(0))}]
        for t in range(length):
            i = model.eval(self.selectors[t], model_completion=True).as_long()
            name = self.names[i]
            params = _values(model, self.params[t][name])
            steps.append({"index": t + 1, "action": name, "label": _label(name, params), "params": params,
                          "state": _values(model, self.state(t + 1))})
        return steps


def _bmc(ts: TransitionSystem, budget: _Budget, max_k: int,
         bad_inv: bool = False) -> tuple[str, int, Any, _Unrolling | None, str]:
    """Bounded unrolling from the initial states: the shortest run (k <= max_k steps) that breaks
    the claim (or, with ``bad_inv``, the invariant). Returns (result, k, model, unrolling, kind)
    with result "sat" / "unsat" / "unknown"."""
    u = _Unrolling(ts, "b")
    s = budget.solver()
    s.add(to_bool(ts.init(Z3OPS, u.state(0))), *u.axioms(0))
    for k in range(max_k + 1):
        if k > 0:
            s.add(*u.transition(k - 1), *u.axioms(k))
        bad_state = z3.Not(u.claim(k))
        if bad_inv:
            bad_state = z3.Or(bad_state, z3.Not(z3.And(*u.invariant(k).values())))
        bad_step = u.step_bad[k - 1] if k > 0 else z3.BoolVal(False)
        s.push()
        s.add(z3.Or(bad_state, bad_step))
        r = budget.check(s)
        if r == z3.sat:
            free = list(u.state(0).values()) + [v for t in range(k) for ps in u.params[t].values()
                                                for v in ps.values()]
            m = _tidy(s, free, budget, TIDY_SECONDS)
            kind = "transition" if k > 0 and z3.is_true(m.eval(bad_step, model_completion=True)) else "invariant"
            return "sat", k, m, u, kind
        if r == z3.unknown:
            return "unknown", k, None, None, s.reason_unknown()
        s.pop()
        # the shortest counterexample is wanted: from now on the first k+1 states are good
        s.add(u.claim(k), z3.Not(bad_step))
    return "unsat", max_k, None, None, ""


def _successor(ts: TransitionSystem, s: Mapping[str, Any], name: str,
               tag: str) -> tuple[Any, dict[str, Any], dict[str, Any], Any]:
    """(guard, next state as terms over ``s``, params, step-claim condition) of one action. Using
    the next state's terms directly (no fresh variables) lets Z3 see at once that a conjunct over
    unchanged fields is the hypothesis itself."""
    act = ts.actions[name]
    p = make_vars(act.params, f"@{tag}.{name}")
    guard, changes = act.step(Z3OPS, s, p)
    unknown = set(changes) - set(ts.state)
    if unknown:
        raise ValueError(f"action {name} sets unknown fields {sorted(unknown)}")
    s2 = {v: (_stored(changes[v], w) if v in changes else s[v]) for v, w in ts.state.items()}
    ok = to_bool(ts.step_claim(Z3OPS, s, name, p, s2)) if ts.step_claim is not None else z3.BoolVal(True)
    return to_bool(guard), s2, p, ok


#: (invariant, init, axioms, id(actions)) -> (actions, True): invariants already shown preserved
_PRESERVED: dict[tuple[Any, ...], tuple[Any, bool]] = {}


def _preserves(hyp: Sequence[Any], successors: Mapping[str, tuple[Any, Any, Any, Any]],
               goals_of: Mapping[str, Mapping[str, Any]], budget: _Budget) -> tuple[str, str]:
    """Each goal holds after each action from any state satisfying ``hyp``. One incremental
    solver: the hypothesis is encoded once and each (action, goal) is a push/pop on top of it
    (about a third faster than a fresh solver per query). Z3's incremental core occasionally
    wanders on a bit-vector query the non-incremental bit-blaster settles at once, so a query it
    has not answered within ``INCREMENTAL_SECONDS`` is retried on a fresh QF_BV solver."""
    solver = z3.Solver()
    solver.add(*hyp)
    for name, goals in goals_of.items():
        guard = successors[name][0]
        for goal, term in goals.items():
            solver.push()
            solver.add(guard, z3.Not(term))
            left = budget.deadline - time.monotonic()
            if left <= 0:
                raise _OutOfTime()
            solver.set(timeout=max(1, int(min(left, INCREMENTAL_SECONDS) * 1000)))
            r = _check(solver, limit=min(left, INCREMENTAL_SECONDS))
            reason = solver.reason_unknown() if r == z3.unknown else ""
            solver.pop()
            if r == z3.unknown:
                fresh = budget.solver()
                fresh.add(*hyp, guard, z3.Not(term))
                r = budget.check(fresh)
                reason = fresh.reason_unknown() if r == z3.unknown else ""
            if r == z3.unknown:
                return "unknown", f"{name} preserving {goal}: solver unknown ({reason})"
            if r == z3.sat:
                return "fails", f"{name} does not preserve {goal}"
    return "proved", ""


def _induction(ts: TransitionSystem, budget: _Budget) -> tuple[str, str]:
    """One-step induction on invariant ∧ claim, one query per action and per conjunct (small
    queries are much faster than one big disjunction). Returns ("proved" | "fails" | "unknown",
    note)."""
    u = _Unrolling(ts, "i")
    inv0 = u.invariant(0)
    s = budget.solver()
    s.add(to_bool(ts.init(Z3OPS, u.state(0))), *u.axioms(0))
    s.add(z3.Not(z3.And(*inv0.values(), u.claim(0))))
    r = budget.check(s)
    if r == z3.unknown:
        return "unknown", f"initiation: solver unknown ({s.reason_unknown()})"
    if r == z3.sat:
        m = s.model()
        broken = [k for k, v in inv0.items() if not z3.is_true(m.eval(v, model_completion=True))] or ["claim"]
        return "fails", f"an initial state breaks {', '.join(broken)}"
    s0 = make_vars(ts.state, "@i0")
    axioms0 = [to_bool(a) for a in (ts.axioms(Z3OPS, s0) if ts.axioms else [])]
    inv_hyp = [*axioms0, *[to_bool(v) for v in ts.invariant(Z3OPS, s0).values()]]
    successors = {name: _successor(ts, s0, name, "i0") for name in ts.actions}

    # Invariant ∧ T -> invariant' does not involve the claim, so obligations that share a
    # transition system and its invariant (the same objects) prove it once per process.
    key = (ts.invariant, ts.init, ts.axioms, id(ts.actions))
    cached = _PRESERVED.get(key)
    reused = cached is not None and cached[0] is ts.actions
    if not reused:
        goals_of = {name: {k: to_bool(v) for k, v in ts.invariant(Z3OPS, s2).items()}
                    for name, (_, s2, _, _) in successors.items()}
        if ts.axioms is not None:
            for name, (_, s2, _, _) in successors.items():
                goals_of[name]["axioms"] = z3.And(*[to_bool(a) for a in ts.axioms(Z3OPS, s2)])
        status, note = _preserves(inv_hyp, successors, goals_of, budget)
        if status != "proved":
            return status, note
        _PRESERVED[key] = (ts.actions, True)

    # The claim: invariant ∧ claim ∧ T -> claim' and the step claim.
    claim_hyp = [*inv_hyp, to_bool(ts.claim(Z3OPS, s0)) if ts.claim else z3.BoolVal(True)]
    goals_of = {}
    for name, (_, s2, _, step_ok) in successors.items():
        goals: dict[str, Any] = {}
        if ts.claim is not None:
            goals["claim"] = to_bool(ts.claim(Z3OPS, s2))
        if ts.step_claim is not None:
            goals["step claim"] = step_ok
        goals_of[name] = goals
    status, note = _preserves(claim_hyp, successors, goals_of, budget)
    if status != "proved":
        return status, note

    # Vacuity: a proof over no initial state, or an action that can never fire, proves nothing.
    s = budget.solver()
    s.add(to_bool(ts.init(Z3OPS, u.state(0))), *u.axioms(0))
    if budget.check(s) != z3.sat:
        return "unknown", "no initial state satisfies init (the proof would be vacuous)"
    dead = []
    solver = z3.Solver()
    solver.add(*claim_hyp)
    for name, (guard, _, _, _) in successors.items():
        left = budget.deadline - time.monotonic()
        if left <= 0:
            raise _OutOfTime()
        solver.set(timeout=max(1, int(left * 1000)))
        if _check(solver, guard, limit=left) == z3.unsat:
            dead.append(name)
    notes = ["invariant preservation proved earlier in this run, reused"] if reused else []
    if dead:
        notes.append(f"never enabled in an invariant state: {', '.join(dead)}")
    return "proved", "; ".join(notes)


def _k_induction(ts: TransitionSystem, budget: _Budget, max_k: int) -> tuple[str, int]:
    """k-induction on invariant ∧ claim for k = 2..max_k. The base case (no run of fewer than k
    steps breaks the property) is checked by bounded unrolling first."""
    base, _, _, _, _ = _bmc(ts, budget, max_k - 1, bad_inv=True)
    if base != "unsat":
        return ("unknown" if base == "unknown" else "fails"), 0
    for k in range(2, max_k + 1):
        u = _Unrolling(ts, "k")
        s = budget.solver()
        for t in range(k):
            s.add(*u.axioms(t), *u.invariant(t).values(), u.claim(t), *u.transition(t))
            if t < k - 1:
                s.add(z3.Not(u.step_bad[t]))
        s.add(*u.axioms(k))
        s.add(z3.Not(z3.And(*u.invariant(k).values(), u.claim(k), z3.Not(u.step_bad[k - 1]))))
        r = budget.check(s)
        if r == z3.unsat:
            return "proved", k
        if r == z3.unknown:
            return "unknown", k
    return "fails", max_k


def _prove_system(ts: TransitionSystem, kind: str, budget: _Budget,
                  max_k: int) -> tuple[Status, str, str, CexTrace | None]:
    note = ""
    if kind == "inductive":
        status, note = _induction(ts, budget)
        if status == "proved":
            names = ", ".join(ts.invariant(Z3OPS, make_vars(ts.state, "@doc")))
            note = f"invariant: {names}" + (f"; {note}" if note else "")
            return "proved", "induction", note, None
        if status == "unknown":
            return "unknown", "induction", note, None
    res, k, model, u, cex_kind = _bmc(ts, budget, max_k)
    method = f"bounded unrolling (k={k})"
    if res == "sat":
        assert u is not None
        return "counterexample", method, "", CexTrace(ts.label, cex_kind, method, u.trace(model, k), ts)
    if res == "unknown":
        return "unknown", method, f"solver unknown ({cex_kind})", None
    if kind == "bmc":
        return "unknown", f"bounded unrolling (k={max_k})", \
            f"no counterexample within {max_k} steps (a bounded check, not a proof)", None
    kres, kk = _k_induction(ts, budget, max_k)
    if kres == "proved":
        return "proved", f"k-induction (k={kk})", f"1-induction failed: {note}", None
    return "unknown", "induction", (f"not inductive ({note}); no counterexample within {max_k} steps; "
                                    f"k-induction up to k={max_k}: {kres}"), None


# --- obligations ------------------------------------------------------------------------------

def prove(obligation: Obligation, timeout: float = 60.0) -> ObligationResult:
    """Discharge one obligation within ``timeout`` seconds (all its problems together)."""
    start = time.monotonic()
    cpu_start = time.process_time()
    budget = _Budget(timeout)
    details: list[str] = []
    methods: list[str] = []
    status: Status = "proved"
    cex: CexTrace | None = None
    for problem in obligation.problems:
        p_start, p_cpu = time.monotonic(), time.process_time()
        try:
            if isinstance(problem, ValidProblem):
                st, method, note, found = _prove_valid(problem, budget)
            else:
                st, method, note, found = _prove_system(problem, obligation.kind, budget, obligation.max_k)
        except _OutOfTime:
            st, method, note, found = "unknown", "timeout", f"timed out after {timeout:g} s", None
        methods.append(method)
        took = f" [{time.monotonic() - p_start:.2f} s, cpu {time.process_time() - p_cpu:.2f} s]"
        details.append(f"{problem.label}: {st} by {method}{took}" + (f" — {note}" if note else ""))
        if st == "counterexample":
            from .replay import replay  # here to keep the import graph one-way
            assert found is not None
            found.replay_error = replay(found)
            if found.replay_error:
                # Z3's encoding and the Python rules disagree: never pass this off as a real trace
                st, note = "unknown", f"counterexample failed its concrete replay: {found.replay_error}"
                details[-1] = f"{problem.label}: unknown — {note}"
                status = "unknown"
                continue
            details[-1] += " — replayed on Python ints: confirmed"
            status, cex = "counterexample", found
            break
        if st == "unknown":
            status = "unknown"
    # Say how it was decided: the refuting method, else the methods that proved its problems.
    if cex is not None:
        method = cex.method
    else:
        method = ", ".join(dict.fromkeys(methods))
    return ObligationResult(obligation.name, obligation.doc, obligation.kind, status, method,
                            time.monotonic() - start, details, cex, time.process_time() - cpu_start)


def prove_all(obligations: Mapping[str, Obligation], names: Sequence[str] | None = None,
              timeout: float = 60.0) -> list[ObligationResult]:
    chosen = list(obligations) if names is None else list(names)
    return [prove(obligations[n], timeout) for n in chosen]

