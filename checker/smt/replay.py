"""Replaying a Z3 counterexample on Python ints, with the concrete ops the explorer uses.

A counterexample is only as good as the encoding it came from. Replaying it through the same
obligation code with ``checker.ops.CONCRETE`` (the rules as the explorer runs them) confirms that
its premises hold, that every step is enabled and produces the recorded state, and that the claim
really fails — so a disagreement between the bit-vector reading and the Python reading of a rule
can never be reported as a protocol bug.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..ops import CONCRETE
from .obligations import TransitionSystem, ValidProblem

if TYPE_CHECKING:
    from .runner import CexTrace


def java_store(value: Any, width: int) -> Any:
    """What a field of ``width`` bits holds after assigning ``value`` (Java's narrowing cast);
    width 0 is a boolean."""
    if width == 0:
        return bool(value)
    mask = (1 << width) - 1
    r = int(value) & mask
    return r - (1 << width) if r >> (width - 1) else r


def replay(cex: CexTrace) -> str:
    """"" if the counterexample replays concretely, else one line saying where it does not."""
    problem = cex.source
    if isinstance(problem, ValidProblem):
        return _replay_valid(problem, cex)
    if isinstance(problem, TransitionSystem):
        return _replay_system(problem, cex)
    return "no problem recorded to replay against"


def _replay_valid(problem: ValidProblem, cex: CexTrace) -> str:
    queries = [q for q in problem.queries(CONCRETE, dict(cex.inputs)) if q.label == cex.query]
    if len(queries) != 1:
        return f"query {cex.query!r} not found on replay"
    q = queries[0]
    failed = [i for i, p in enumerate(q.premises) if not p]
    if failed:
        return f"premise {failed[0]} does not hold for the counterexample's inputs"
    if q.claim:
        return "the claim holds for the counterexample's inputs"
    return ""


def _replay_system(ts: TransitionSystem, cex: CexTrace) -> str:
    steps = cex.steps
    state: Mapping[str, Any] = steps[0]["state"]
    if set(state) != set(ts.state):
        return "the initial state does not name the system's fields"
    if not ts.init(CONCRETE, state):
        return "the initial state is not initial"
    for t, step in enumerate(steps[1:], start=1):
        name = step["action"]
        if name not in ts.actions:
            return f"step {t}: unknown action {name!r}"
        guard, changes = ts.actions[name].step(CONCRETE, state, step["params"])
        if not guard:
            return f"step {t}: {name} is not enabled"
        nxt = {v: java_store(changes[v], w) if v in changes else state[v] for v, w in ts.state.items()}
        if nxt != step["state"]:
            diff = sorted(v for v in nxt if nxt[v] != step["state"].get(v))
            return f"step {t}: {name} gives another state (fields {', '.join(diff)})"
        last_ok = True
        if ts.step_claim is not None:
            last_ok = bool(ts.step_claim(CONCRETE, state, name, step["params"], nxt))
        if t < len(steps) - 1 and not last_ok:
            return f"step {t}: the step claim already fails before the end"
        if t == len(steps) - 1:
            state_ok = ts.claim is None or bool(ts.claim(CONCRETE, nxt))
            if last_ok and state_ok:
                return "the claim holds at the end of the trace"
        state = nxt
    if len(steps) == 1 and (ts.claim is None or ts.claim(CONCRETE, state)):
        return "the claim holds in the initial state"
    return ""
