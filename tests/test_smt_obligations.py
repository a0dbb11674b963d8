"""The Kafka obligations: all proved for the real rules at the real widths; each mutation refuted
with a counterexample that replays on Python ints (premises hold, the mutated rule really runs
that way, the claim fails); timeouts are "unknown", never "proved"."""

from __future__ import annotations

from typing import Any

import pytest
import z3
from eoscheck.checker.ops import CONCRETE
from eoscheck.checker.smt.obligations import Action, Obligation, Query, TransitionSystem, ValidProblem
from eoscheck.checker.smt.replay import java_store, replay
from eoscheck.checker.smt.runner import ObligationResult, prove
from eoscheck.model.obligations import MUTATIONS, PROOFS, REAL, VARIANTS, build, coordinator_system, no_shared_pid_epoch
from eoscheck.model.proof_rules import MAX_EPOCH, MAX_SEQ

TIMEOUT = 300.0  # generous: CI machines are shared; a proof that needs it is still "proved"


@pytest.fixture(scope="module")
def real_results() -> dict[str, ObligationResult]:
    obligations = build(None)
    return {name: prove(ob, TIMEOUT) for name, ob in obligations.items()}


@pytest.mark.slow  # about 10 s of solver time for the two inductive obligations
@pytest.mark.parametrize("name", sorted(PROOFS.obligations))
def test_every_obligation_is_proved_for_the_real_rules(real_results: dict[str, ObligationResult],
                                                       name: str) -> None:
    r = real_results[name]
    assert r.status == "proved", r.details
    assert r.counterexample is None
    expected_method = "direct" if PROOFS.kinds[name] == "valid" else "induction"
    assert r.method == expected_method, r.details
    # an inductive obligation covers every InitProducerId variant
    if PROOFS.kinds[name] == "inductive":
        assert len(r.details) == len(VARIANTS)
        # not vacuous: every action of the coordinator system can fire from some invariant state
        assert not any("never enabled" in d for d in r.details), r.details


# Which obligations each mutation must break (the ones its spec lists as refuted and more).
MUST_REFUTE = {
    "threshold-at-max": ["InitPidEpochInRange", "FenceBumpNeverOverflows"],
    "no-overflow-branch": ["InitPidEpochInRange", "FenceBumpNeverOverflows", "IdempotentBumpNeverOverflows",
                           "PidEpochIncreases"],
    "increment-without-wrap": ["SequenceIncrementAgrees"],
}


def test_every_mutation_has_obligations_it_must_break() -> None:
    assert set(MUST_REFUTE) == set(MUTATIONS) == set(PROOFS.mutations)


@pytest.mark.parametrize("mutation,name", [(m, n) for m, names in MUST_REFUTE.items() for n in names])
def test_each_mutation_is_refuted_with_a_replayable_counterexample(mutation: str, name: str) -> None:
    ob = build(mutation)[name]
    r = prove(ob, TIMEOUT)
    assert r.status == "counterexample", r.details
    cex = r.counterexample
    assert cex is not None and cex.replay_error == ""
    assert cex.steps[0]["action"] is None and all(s["action"] for s in cex.steps[1:])
    # Replay independently of the prover's own check.
    assert replay(cex) == ""
    if cex.kind == "valid":
        # (a) the premises hold and (b) the claim fails, evaluated on ints by the mutated rules
        [query] = [q for q in cex.source.queries(CONCRETE, cex.inputs) if q.label == cex.query]
        assert all(query.premises)
        assert not query.claim
        # and the same inputs satisfy the claim with the real rules: the mutation is the cause
        real_problem = build(None)[name].problems[ob.problems.index(cex.source)]
        [real_query] = [q for q in real_problem.queries(CONCRETE, cex.inputs) if q.label == cex.query]
        assert real_query.claim
    else:
        assert cex.method.startswith("bounded unrolling")
        assert len(cex.steps) >= 2


def test_threshold_mutation_hands_out_max_epoch() -> None:
    r = prove(build("threshold-at-max")["InitPidEpochInRange"], TIMEOUT)
    last = r.counterexample.steps[-1]["state"]
    assert last["response.error"] == 0 and last["response.epoch"] == MAX_EPOCH


def test_increment_mutation_counterexample_is_the_wrap() -> None:
    r = prove(build("increment-without-wrap")["SequenceIncrementAgrees"], TIMEOUT)
    state = r.counterexample.steps[-1]["state"]
    assert state["batch.last_seq"] == MAX_SEQ
    assert state["client.next_sequence"] == MAX_SEQ + 1
    assert state["leader.accepts"] is False


def test_sequence_obligation_is_not_vacuous() -> None:
    # The premise ranges leave the wrap in: last = MAX is allowed and its successor is 0.
    ob = build(None)["SequenceAcceptsExactlyNext"]
    [q] = ob.problems[0].queries(CONCRETE, {"last_seq": MAX_SEQ, "next_seq": 0})
    assert all(q.premises) and q.claim


def test_invariant_holds_on_a_concrete_reachable_run() -> None:
    """Replay a hand-written run on ints: lost response, retry, fence, failover, rotation."""
    ts = coordinator_system("kip360_shipped", REAL)
    s: dict[str, Any] = {name: (False if w == 0 else -1) for name, w in ts.state.items()}
    s.update({"coordinator.producer_id": 5, "coordinator.prev_producer_id": 5, "coordinator.exists": True,
              "coordinator.epoch": MAX_EPOCH - 2, "log.epoch": MAX_EPOCH - 2, "allocator.next_producer_id": 6,
              "response.error": 0})
    assert ts.init(CONCRETE, s)
    run = [("InitProducerId[A]", {"next_after": 7, "with_current": False, "delivered": True}),
           ("InitProducerId[A]", {"next_after": 7, "with_current": True, "delivered": False}),  # lost
           ("InitProducerId[A]", {"next_after": 7, "with_current": True, "delivered": True}),   # retry
           ("BeginTxn", {}),
           ("FenceProducerEpoch", {"write_ok": True}),
           ("Failover", {"keep_last_epoch": False, "keep_prev_producer_id": False}),
           ("InitProducerId[B]", {"next_after": 7, "with_current": False, "delivered": True}),
           ("InitProducerId[idempotent]", {"next_after": 9}),
           ("BumpIdempotentEpoch", {})]
    for name, params in run:
        guard, changes = ts.actions[name].step(CONCRETE, s, params)
        assert guard, name
        s = {v: java_store(changes[v], w) if v in changes else s[v] for v, w in ts.state.items()}
        assert all(ts.invariant(CONCRETE, s).values()), (name, ts.invariant(CONCRETE, s))
    # A got (5, 32766); its next InitProducerId rotated to (6, 0) but the answer was lost; the
    # retry with (5, 32766) was re-sent (6, 0); the fence took epoch 1; after the failover B's
    # InitProducerId bumped to (6, 2).
    assert (s["client[A].producer_id"], s["client[A].epoch"]) == (6, 0)
    assert (s["client[B].producer_id"], s["client[B].epoch"]) == (6, 2)
    assert (s["idempotent.producer_id"], s["idempotent.epoch"]) == (7, 1)
    assert s["allocator.next_producer_id"] == 9


# --- the engine's honesty: timeouts and bounded checks are "unknown" ----------------------------

def _factoring(ops: Any, v: dict[str, Any]) -> list[Query]:
    # "no 64-bit factorisation of a large semiprime": true, and far too hard for a tiny budget
    x, y = v["x"], v["y"]
    n = 4611686014132420609  # (2^31 - 1)^2
    premises = [z3.UGT(x, 1), z3.UGT(y, 1), z3.ULT(x, 2**32), z3.ULT(y, 2**32)]
    return [Query("factor", premises, x * y != n)]


def test_a_timeout_is_unknown_never_proved() -> None:
    ob = Obligation("Hard", "hard", "valid", [ValidProblem("factoring", {"x": 64, "y": 64}, _factoring)])
    r = prove(ob, timeout=0.05)
    assert r.status == "unknown"
    assert r.counterexample is None


def test_an_exhausted_budget_on_a_real_obligation_is_unknown() -> None:
    r = prove(no_shared_pid_epoch(REAL), timeout=1e-6)
    assert r.status == "unknown" and "timed out" in " ".join(r.details)


def _counter_system(limit: int) -> TransitionSystem:
    def step(ops: Any, s: Any, p: Any) -> tuple[Any, dict[str, Any]]:
        return ops.lt(s["x"], ops.const(limit, 16)), {"x": ops.add(s["x"], ops.const(1, 16))}
    return TransitionSystem(
        "counter", {"x": 16}, lambda ops, s: ops.eq(s["x"], ops.const(0, 16)),
        {"Inc": Action({}, step)}, lambda ops, s: {"range": ops.ge(s["x"], ops.const(0, 16))},
        claim=lambda ops, s: ops.le(s["x"], ops.const(3, 16)))


def test_bounded_unrolling_finds_a_deep_counterexample_and_reports_k() -> None:
    # x counts up to 10; the claim x <= 3 fails after 4 steps; the invariant x >= 0 is too weak
    # for induction, so the prover falls back to unrolling and says so.
    r = prove(Obligation("Counter", "x stays small", "inductive", [_counter_system(10)], max_k=6), 30)
    assert r.status == "counterexample"
    assert r.method == "bounded unrolling (k=4)"
    assert [s["state"]["x"] for s in r.counterexample.steps] == [0, 1, 2, 3, 4]


def test_k_induction_proves_what_one_step_induction_cannot() -> None:
    # a and b swap each step, both start at 0: "a == 0" is not 1-inductive (b is unconstrained in
    # the hypothesis) but 2-inductive (two steps back, a's value came from a).
    def swap(ops: Any, s: Any, p: Any) -> tuple[Any, dict[str, Any]]:
        return True, {"a": s["b"], "b": s["a"]}
    ts = TransitionSystem(
        "swap", {"a": 16, "b": 16},
        lambda ops, s: ops.and_(ops.eq(s["a"], ops.const(0, 16)), ops.eq(s["b"], ops.const(0, 16))),
        {"Swap": Action({}, swap)}, lambda ops, s: {},
        claim=lambda ops, s: ops.eq(s["a"], ops.const(0, 16)))
    r = prove(Obligation("Swap", "a stays 0", "inductive", [ts], max_k=4), 30)
    assert r.status == "proved"
    assert r.method == "k-induction (k=2)"


def test_bmc_kind_never_claims_a_proof() -> None:
    r = prove(Obligation("Counter", "x stays small", "bmc", [_counter_system(3)], max_k=5), 30)
    assert r.status == "unknown"
    assert "not a proof" in " ".join(r.details)


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_premises_of_the_direct_obligations_follow_from_the_proved_invariant(variant: str) -> None:
    """InitPidEpochInRange and FenceBumpNeverOverflows assume a well-formed metadata
    (``metadata_premises``); those assumptions are consequences of the coordinator invariant that
    PidEpochIncreases proves inductive, so the direct proofs cover every reachable metadata."""
    from eoscheck.checker.smt.ops import Z3OPS, to_bool
    from eoscheck.checker.smt.runner import make_vars
    from eoscheck.model.obligations import metadata_premises

    ts = coordinator_system(variant, REAL)
    s = make_vars(ts.state, "")
    v = {"meta_exists": s["coordinator.exists"], "meta_producer_id": s["coordinator.producer_id"],
         "meta_prev_producer_id": s["coordinator.prev_producer_id"], "meta_epoch": s["coordinator.epoch"],
         "meta_last_epoch": s["coordinator.last_epoch"], "new_producer_id": s["allocator.next_producer_id"],
         "req_producer_id": z3.BitVec("req_pid", 64), "req_epoch": z3.BitVec("req_epoch", 16)}
    inv = [to_bool(t) for t in ts.invariant(Z3OPS, s).values()]
    for i, premise in enumerate(metadata_premises(Z3OPS, v)):
        solver = z3.Solver()
        solver.add(*inv, z3.Not(to_bool(premise)))
        assert solver.check() == z3.unsat, f"premise {i} is not implied by the invariant"


def test_a_vacuous_system_is_not_proved() -> None:
    # an init no state satisfies would make every claim "inductive"
    ts = _counter_system(3)
    ts = TransitionSystem(ts.label, ts.state, lambda ops, s: ops.ne(s["x"], s["x"]), ts.actions, ts.invariant,
                          claim=ts.claim)
    r = prove(Obligation("Vacuous", "vacuous", "inductive", [ts]), 30)
    assert r.status == "unknown" and "vacuous" in " ".join(r.details)


def test_an_action_that_never_fires_is_reported() -> None:
    def never(ops: Any, s: Any, p: Any) -> tuple[Any, dict[str, Any]]:
        return ops.lt(s["x"], ops.const(0, 16)), {"x": ops.const(99, 16)}
    ts = _counter_system(3)
    ts = TransitionSystem(ts.label, ts.state, ts.init, {**ts.actions, "Never": Action({}, never)},
                          ts.invariant, claim=lambda ops, s: ops.le(s["x"], ops.const(3, 16)))
    ts = TransitionSystem(ts.label, ts.state, ts.init, ts.actions,
                          lambda ops, s: {"range": between0_3(ops, s["x"])}, claim=ts.claim)
    r = prove(Obligation("Never", "x in 0..3", "inductive", [ts]), 30)
    assert r.status == "proved", r.details
    assert "never enabled in an invariant state: Never" in " ".join(r.details)


def between0_3(ops: Any, x: Any) -> Any:
    return ops.and_(ops.ge(x, ops.const(0, 16)), ops.le(x, ops.const(3, 16)))
