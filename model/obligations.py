"""Kafka's proof obligations at the real widths: int16 epochs (max 32767), int64 producer ids,
int32 sequences. Explicit runs use max_epoch 3 or 4; these claims are about the real numbers.

Every obligation evaluates the *shared rules* (``init_producer_id_decision``,
``fence_producer_epoch``, ``bump_idempotent_epoch``, ``in_sequence``, ``increment_sequence``) —
the very functions the explorer executes — on Z3 terms; nothing here restates a rule. Claims are
written over ``ops`` as well, so this module never touches Z3 itself.

Obligations (``PROOFS.obligations`` has their one-line docs):

* ``InitPidEpochInRange`` — for every reachable metadata and every request, a successful
  InitProducerId hands out an epoch in 0..max-1 (32766), for the pre-KIP-360 coordinator, KIP-360
  as designed and Kafka as shipped.
* ``FenceBumpNeverOverflows`` — fencing right after any handed-out epoch bumps it and stays within
  int16; a fence at any epoch 0..max never overflows or decreases the epoch.
* ``IdempotentBumpNeverOverflows`` — the idempotent client's local bump stays within int16 and
  asks for a new producer id exactly when it cannot bump.
* ``PidEpochIncreases`` and ``NoSharedPidEpoch`` — one transactional id's coordinator over any
  sequence of InitProducerId calls (two tracked producer instances, whose responses may be lost,
  plus any number of other instances presenting any pair), transactions, fencing bumps (with and
  without a failed PrepareAbort write), coordinator failovers (with and without persisted last
  epoch / previous producer id), transactional-id expiry, and an idempotent producer drawing
  from the same producer-id allocator and bumping its epoch locally; the allocator only counts
  up ("never repeats" alone would give uniqueness but not the lexicographic order). Proved by
  induction on the invariant ``INVARIANT_DOC`` below, for each of the three coordinators.
* ``SequenceAcceptsExactlyNext`` and ``SequenceIncrementAgrees`` — the leader's check and the
  client's increment, including the wrap from 2^31-1 to 0.

Mutations (deliberately broken rule sets, ``MUTATIONS``) re-run the same obligations over the same
rule functions with one parameter moved, so the broken rule is the real rule's text.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from eoscheck.checker.registry import ModelDef, Variant
from eoscheck.checker.smt.obligations import Action, Obligation, ProofSet, Query, Shown, TransitionSystem, ValidProblem

from .coordinator.fencing import fence_producer_epoch
from .coordinator.init_producer_id import init_producer_id_decision
from .errors import Errors
from .partition.sequence import in_sequence, increment_sequence
from .producer.idempotent_epoch import bump_idempotent_epoch
from .proof_rules import EPOCH, ERR, MAX_EPOCH, MAX_SEQ, PID, RULES, SEQ

NONE_ID = -1  # NO_PRODUCER_ID / NO_PRODUCER_EPOCH
#: the three InitProducerId coordinators, as named in ``proof_rules.RULES``
VARIANTS: dict[str, tuple[bool, bool]] = {
    # Kafka as shipped first: a counterexample is shown for the first variant that has one
    "kip360_shipped": (True, True),
    "kip360_designed": (True, False),
    "pre_kip360": (False, False),
}
assert all(f"init_producer_id_decision.{v}" in RULES for v in VARIANTS)


# --- rule sets: the real rules and the mutations ----------------------------------------------

@dataclass(frozen=True)
class RuleSet:
    """The shared rules with their Python-valued parameters. The real set uses Kafka's values; a
    mutation moves one parameter so that a branch of the real rule text misbehaves."""

    init_max_epoch: int = MAX_EPOCH
    fence_max_epoch: int = MAX_EPOCH
    idempotent_max_epoch: int = MAX_EPOCH
    increment_max_seq: int = MAX_SEQ

    def init_pid(self, ops: Any, variant: str, **args: Any) -> Any:
        kip360, shipped = VARIANTS[variant]
        return init_producer_id_decision(ops, kip360=kip360, shipped=shipped, max_epoch=self.init_max_epoch,
                                         **args)

    def fence(self, ops: Any, epoch: Any, has_failed: Any) -> Any:
        return fence_producer_epoch(ops, max_epoch=self.fence_max_epoch, epoch=epoch,
                                    has_failed_epoch_fence=has_failed)

    def idempotent_bump(self, ops: Any, producer_id: Any, epoch: Any) -> Any:
        return bump_idempotent_epoch(ops, max_epoch=self.idempotent_max_epoch, producer_id=producer_id,
                                     epoch=epoch)

    def increment(self, ops: Any, seq: Any, inc: Any) -> Any:
        return increment_sequence(ops, max_seq=self.increment_max_seq, seq=seq, inc=inc)

    def accepts(self, ops: Any, last: Any, nxt: Any) -> Any:
        # The leader's check is never mutated: it is the reference the client must agree with.
        return in_sequence(ops, max_seq=MAX_SEQ, last_seq=last, next_seq=nxt)


REAL = RuleSet()
#: a max_epoch no int16 epoch can reach: the rules' overflow branches can never fire
UNREACHABLE_MAX = 2**20

MUTATIONS: dict[str, tuple[str, RuleSet]] = {
    "threshold-at-max": (
        ("InitProducerId treats an epoch as exhausted only at max (32767) instead of max-1: the rule "
         "evaluated with max_epoch = 32768, so isEpochExhausted is epoch >= 32767"),
        RuleSet(init_max_epoch=MAX_EPOCH + 1)),
    "no-overflow-branch": (
        ("no overflow branch anywhere: InitProducerId never rotates the producer id, the fence and the "
         "idempotent bump always add 1 (the rules evaluated with a max_epoch of 2^20)"),
        RuleSet(init_max_epoch=UNREACHABLE_MAX, fence_max_epoch=UNREACHABLE_MAX,
                idempotent_max_epoch=UNREACHABLE_MAX)),
    "increment-without-wrap": (
        ("the client's incrementSequence never wraps past 2^31-1 (the rule evaluated with max_seq = "
         "2^33, so seq + inc is plain addition)"),
        RuleSet(increment_max_seq=2**33)),
}


# --- small helpers over ops -------------------------------------------------------------------

def c(ops: Any, value: int, width: int) -> Any:
    return ops.const(value, width)


def between(ops: Any, x: Any, lo: int, hi: int, width: int) -> Any:
    return ops.and_(ops.ge(x, c(ops, lo, width)), ops.le(x, c(ops, hi, width)))


def implies(ops: Any, a: Any, b: Any) -> Any:
    return ops.or_(ops.not_(a), b)


def pair_lt(ops: Any, a: tuple[Any, Any], b: tuple[Any, Any]) -> Any:
    """(producer id, epoch) < (producer id, epoch), lexicographically."""
    return ops.or_(ops.lt(a[0], b[0]), ops.and_(ops.eq(a[0], b[0]), ops.lt(a[1], b[1])))


def pair_eq(ops: Any, a: tuple[Any, Any], b: tuple[Any, Any]) -> Any:
    return ops.and_(ops.eq(a[0], b[0]), ops.eq(a[1], b[1]))


def pair_le(ops: Any, a: tuple[Any, Any], b: tuple[Any, Any]) -> Any:
    return ops.or_(pair_lt(ops, a, b), pair_eq(ops, a, b))


def is_none_pair(ops: Any, a: tuple[Any, Any]) -> Any:
    return pair_eq(ops, a, (c(ops, NONE_ID, PID), c(ops, NONE_ID, EPOCH)))


def ok(ops: Any, error: Any) -> Any:
    return ops.eq(error, c(ops, int(Errors.NONE), ERR))


# --- InitProducerId, fencing, idempotent bump: for all inputs ---------------------------------

INIT_INPUTS = {name: (0 if kind == "bool" else width)
               for name, width, kind in RULES["init_producer_id_decision.kip360_shipped"].args}


def metadata_premises(ops: Any, v: Mapping[str, Any]) -> list[Any]:
    """What holds of every metadata the coordinator can be in (each follows from the transition
    system's invariant, which PidEpochIncreases proves; a test checks the implication): epochs
    are -1 or more; a last epoch is recorded only with an epoch below max (max itself is reached
    only by a fence, which clears lastProducerEpoch) and is the epoch just before the current one
    or the exhausted one before a rotation; producer ids of existing metadata and of the
    allocator are not negative, and the allocator's next id is above the ids it handed out."""
    return [
        ops.ge(v["meta_epoch"], c(ops, NONE_ID, EPOCH)),
        ops.ge(v["meta_last_epoch"], c(ops, NONE_ID, EPOCH)),
        implies(ops, ops.ne(v["meta_last_epoch"], c(ops, NONE_ID, EPOCH)),
                ops.le(v["meta_epoch"], c(ops, MAX_EPOCH - 1, EPOCH))),
        # a last epoch is the one just before the epoch, or the exhausted one before a rotation
        implies(ops, ops.ne(v["meta_last_epoch"], c(ops, NONE_ID, EPOCH)),
                ops.or_(ops.eq(ops.add(v["meta_last_epoch"], c(ops, 1, EPOCH)), v["meta_epoch"]),
                        ops.and_(ops.eq(v["meta_epoch"], c(ops, 0, EPOCH)),
                                 ops.ge(v["meta_last_epoch"], c(ops, MAX_EPOCH - 1, EPOCH))))),
        implies(ops, v["meta_exists"], ops.ge(v["meta_producer_id"], c(ops, 0, PID))),
        ops.ge(v["new_producer_id"], c(ops, 0, PID)),
        # the allocator never hands out an id twice and only counts up
        ops.gt(v["new_producer_id"], v["meta_producer_id"]), ops.gt(v["new_producer_id"], v["meta_prev_producer_id"]),
    ]


def _init_shown(variant: str, rules: RuleSet, v: Mapping[str, Any], out: Any,
                extra: Mapping[str, Any] | None = None, action: str = "InitProducerId") -> list[Shown]:
    before = {
        "coordinator.exists": v["meta_exists"], "coordinator.producer_id": v["meta_producer_id"],
        "coordinator.prev_producer_id": v["meta_prev_producer_id"], "coordinator.epoch": v["meta_epoch"],
        "coordinator.last_epoch": v["meta_last_epoch"], "allocator.next_producer_id": v["new_producer_id"],
        "request.producer_id": v["req_producer_id"], "request.epoch": v["req_epoch"],
    }
    after = dict(before)
    # on an error the rule's other fields are the metadata's own, so this is right either way
    after.update({"response.error": out.error, "response.producer_id": out.producer_id,
                  "response.epoch": out.epoch, "coordinator.producer_id": out.producer_id,
                  "coordinator.epoch": out.epoch, "coordinator.last_epoch": out.last_epoch,
                  "coordinator.prev_producer_id": out.prev_producer_id})
    steps = [Shown(None, "metadata and request", {}, before),
             Shown("InitProducerId", f"InitProducerId[{variant}, max_epoch={rules.init_max_epoch}]",
                   {"variant": variant, "max_epoch": rules.init_max_epoch,
                    "producer_id": v["req_producer_id"], "epoch": v["req_epoch"]}, after)]
    if extra:
        after2 = dict(after)
        after2.update(extra)
        steps.append(Shown(action, action, {}, after2))
    return steps


def init_epoch_range(rules: RuleSet) -> Obligation:
    def queries(ops: Any, v: Mapping[str, Any]) -> list[Query]:
        out = []
        for variant in VARIANTS:
            o = rules.init_pid(ops, variant, **v)
            claim = implies(ops, ok(ops, o.error), between(ops, o.epoch, 0, MAX_EPOCH - 1, EPOCH))
            out.append(Query(variant, metadata_premises(ops, v), claim, _init_shown(variant, rules, v, o)))
        return out
    return Obligation(
        "InitPidEpochInRange",
        "a successful InitProducerId never hands out an epoch above max-1 (32766) or below 0",
        "valid", [ValidProblem("InitProducerId", INIT_INPUTS, queries)])


def fence_bump(rules: RuleSet) -> Obligation:
    def after_grant(ops: Any, v: Mapping[str, Any]) -> list[Query]:
        out = []
        for variant in VARIANTS:
            o = rules.init_pid(ops, variant, **v)
            fenced = rules.fence(ops, o.epoch, False)
            claim = implies(ops, ok(ops, o.error),
                            ops.and_(ops.gt(fenced, o.epoch), ops.le(fenced, c(ops, MAX_EPOCH, EPOCH))))
            shown = _init_shown(variant, rules, v, o, {"coordinator.epoch": fenced},
                                action="FenceProducerEpoch")
            out.append(Query(variant, metadata_premises(ops, v), claim, shown))
        return out

    def any_epoch(ops: Any, v: Mapping[str, Any]) -> list[Query]:
        fenced = rules.fence(ops, v["epoch"], v["has_failed_epoch_fence"])
        claim = ops.and_(ops.ge(fenced, v["epoch"]), ops.le(fenced, c(ops, MAX_EPOCH, EPOCH)))
        shown = [Shown(None, "metadata", {}, {"coordinator.epoch": v["epoch"],
                                              "coordinator.has_failed_epoch_fence": v["has_failed_epoch_fence"]}),
                 Shown("FenceProducerEpoch", f"FenceProducerEpoch[max_epoch={rules.fence_max_epoch}]", {},
                       {"coordinator.epoch": fenced,
                        "coordinator.has_failed_epoch_fence": v["has_failed_epoch_fence"]})]
        return [Query("any epoch", [between(ops, v["epoch"], 0, MAX_EPOCH, EPOCH)], claim, shown)]

    return Obligation(
        "FenceBumpNeverOverflows",
        "fencing right after any handed-out epoch bumps it without leaving int16; a fence at any "
        "epoch 0..max never overflows or lowers it",
        "valid", [ValidProblem("InitProducerId then fence", INIT_INPUTS, after_grant),
                  ValidProblem("fence at any epoch", {"epoch": EPOCH, "has_failed_epoch_fence": 0}, any_epoch)])


def idempotent_bump(rules: RuleSet) -> Obligation:
    def queries(ops: Any, v: Mapping[str, Any]) -> list[Query]:
        needs_new, new_epoch = rules.idempotent_bump(ops, v["producer_id"], v["epoch"])
        claim = ops.and_(
            implies(ops, ops.not_(needs_new),
                    ops.and_(ops.gt(new_epoch, v["epoch"]), ops.le(new_epoch, c(ops, MAX_EPOCH, EPOCH)))),
            implies(ops, needs_new, ops.eq(new_epoch, c(ops, NONE_ID, EPOCH))),
            # it gives up the producer id only when it really cannot bump
            implies(ops, needs_new, ops.eq(v["epoch"], c(ops, MAX_EPOCH, EPOCH))))
        premises = [ops.ge(v["producer_id"], c(ops, 0, PID)), between(ops, v["epoch"], 0, MAX_EPOCH, EPOCH)]
        shown = [Shown(None, "idempotent producer", {}, {"client.producer_id": v["producer_id"],
                                                         "client.epoch": v["epoch"]}),
                 Shown("BumpIdempotentEpoch", f"BumpIdempotentEpoch[max_epoch={rules.idempotent_max_epoch}]", {},
                       {"client.producer_id": v["producer_id"], "client.epoch": new_epoch,
                        "client.needs_new_producer_id": needs_new})]
        return [Query("any epoch", premises, claim, shown)]
    return Obligation(
        "IdempotentBumpNeverOverflows",
        "the idempotent producer's local epoch bump stays within int16 and gives up its producer id "
        "only at max (32767)",
        "valid", [ValidProblem("bumpIdempotentProducerEpoch", {"producer_id": PID, "epoch": EPOCH}, queries)])


# --- sequences ----------------------------------------------------------------------------------

def sequence_next(rules: RuleSet) -> Obligation:
    def queries(ops: Any, v: Mapping[str, Any]) -> list[Query]:
        last, nxt = v["last_seq"], v["next_seq"]
        # The one sequence that may follow ``last``, said independently of the rule.
        expected = ops.ite(ops.eq(last, c(ops, MAX_SEQ, SEQ)), c(ops, 0, SEQ), ops.add(last, c(ops, 1, SEQ)))
        accepted = rules.accepts(ops, last, nxt)
        claim = ops.eq(accepted, ops.eq(nxt, expected))
        shown = [Shown(None, "leader state and batch", {}, {"leader.last_seq": last, "batch.first_seq": nxt}),
                 Shown("CheckSequence", "inSequence(last, next)", {}, {"leader.last_seq": last,
                                                                      "batch.first_seq": nxt,
                                                                      "leader.accepts": accepted})]
        return [Query("any last sequence", [between(ops, last, -1, MAX_SEQ, SEQ)], claim, shown)]
    return Obligation(
        "SequenceAcceptsExactlyNext",
        "the leader accepts exactly last+1 after any last sequence, and 0 after 2^31-1",
        "valid", [ValidProblem("inSequence", {"last_seq": SEQ, "next_seq": SEQ}, queries)])


def sequence_increment(rules: RuleSet) -> Obligation:
    def queries(ops: Any, v: Mapping[str, Any]) -> list[Query]:
        seq, count = v["first_seq"], v["record_count"]
        last = rules.increment(ops, seq, ops.sub(count, c(ops, 1, SEQ)))
        nxt = rules.increment(ops, seq, count)
        accepted = rules.accepts(ops, last, nxt)
        claim = ops.and_(between(ops, nxt, 0, MAX_SEQ, SEQ), between(ops, last, 0, MAX_SEQ, SEQ), accepted)
        premises = [between(ops, seq, 0, MAX_SEQ, SEQ), between(ops, count, 1, MAX_SEQ, SEQ)]
        shown = [Shown(None, "client batch", {}, {"batch.first_seq": seq, "batch.record_count": count}),
                 Shown("IncrementSequence", f"incrementSequence[max_seq={rules.increment_max_seq}]", {},
                       {"batch.first_seq": seq, "batch.record_count": count, "batch.last_seq": last,
                        "client.next_sequence": nxt}),
                 Shown("CheckSequence", "leader: inSequence(batch.last_seq, client.next_sequence)", {},
                       {"batch.first_seq": seq, "batch.record_count": count, "batch.last_seq": last,
                        "client.next_sequence": nxt, "leader.accepts": accepted})]
        return [Query("any batch", premises, claim, shown)]
    return Obligation(
        "SequenceIncrementAgrees",
        "the client's next sequence after a batch is a valid int32 sequence that the leader accepts "
        "right after the batch's last sequence, across the wrap",
        "valid", [ValidProblem("incrementSequence", {"record_count": SEQ, "first_seq": SEQ}, queries)])


# --- one transactional id over time --------------------------------------------------------------

INVARIANT_DOC = """\
Inductive invariant of the coordinator system (cur = (producer_id, epoch) in memory, log =
(producer_id, log.epoch), G = granted = the last pair an InitProducerId answered with, N = the
allocator's next id, h_A, h_B = the pairs the two tracked instances hold, NONE = (-1, -1), L = a
last epoch in memory or in the log); one conjunct per name, as the prover reports them:
  last epoch      L != -1 only as the epoch just before the current one (then prev_producer_id is
                  producer_id or -1), or as the exhausted epoch (>= 32766) before a rotation to 0
  previous id     (Kafka as shipped) prev_producer_id is producer_id or -1, except right after a
                  rotation (epoch 0 in memory and log, no transaction)
  ranges          epochs and last epochs of memory and log in -1..32767
  granted range   G is NONE or has producer id >= 0 and epoch 0..32766
  allocator       N > producer_id, N > prev_producer_id, N > G.producer_id, N >= 0,
                  prev_producer_id >= -1; existing metadata has producer_id >= 0
  memory/log      without a failed fence memory = log (epoch, last epoch); after a failed fence
                  the transaction is still Ongoing, the memory epoch is log.epoch + 1 (or equal at
                  32767) and the memory's last epoch is -1
  granted <= log  G <= log (lexicographically)
  held <= granted every held pair is NONE, or has producer id >= 0, epoch 0..32766 and is <= G
  retry           L != -1 means G = the pair L belongs with (memory: cur; log: log)
  unique          h_A and h_B are not the same pair (unless NONE)
  idempotent      the idempotent producer's pair is NONE, or its producer id is below N, is
                  none of producer_id, prev_producer_id, G's, h_A's, h_B's ids, and its epoch is
                  0..32767
  retry-key       if L != -1 and one instance holds the pair L belongs with, the other holds
                  neither (producer_id, L) nor (prev_producer_id, L): the pairs a retry presents
                  to be re-sent that pair
"""

STATE = {
    "coordinator.exists": 0, "coordinator.producer_id": PID, "coordinator.prev_producer_id": PID,
    "coordinator.epoch": EPOCH, "coordinator.last_epoch": EPOCH, "coordinator.ongoing": 0,
    "coordinator.has_failed_epoch_fence": 0, "log.epoch": EPOCH, "log.last_epoch": EPOCH,
    "allocator.next_producer_id": PID, "granted.producer_id": PID, "granted.epoch": EPOCH,
    "response.error": ERR, "response.producer_id": PID, "response.epoch": EPOCH,
    "client[A].producer_id": PID, "client[A].epoch": EPOCH,
    "client[B].producer_id": PID, "client[B].epoch": EPOCH,
    # an idempotent producer (no transactional id) drawing from the same allocator
    "idempotent.producer_id": PID, "idempotent.epoch": EPOCH,
}
CLIENTS = ("A", "B")
#: the InitProducerId actions for the transactional id (the idempotent producer's is not one)
TXN_INIT_ACTIONS = ("InitProducerId[A]", "InitProducerId[B]", "InitProducerId[other]")


def _held(s: Mapping[str, Any], who: str) -> tuple[Any, Any]:
    return s[f"client[{who}].producer_id"], s[f"client[{who}].epoch"]


def _cur(s: Mapping[str, Any]) -> tuple[Any, Any]:
    return s["coordinator.producer_id"], s["coordinator.epoch"]


def _granted(s: Mapping[str, Any]) -> tuple[Any, Any]:
    return s["granted.producer_id"], s["granted.epoch"]


@functools.cache
def coordinator_system(variant: str, rules: RuleSet) -> TransitionSystem:
    """One transition system per (variant, rule set), shared by the obligations over it so that the
    prover can reuse the invariant's preservation proof."""
    # Kafka as shipped stamps previousProducerId := producerId on every transition
    # (prepareTransitionTo), so only right after a rotation does it name another id.
    stamps_prev = VARIANTS[variant] == (True, True)
    def none_pid(ops: Any) -> Any:
        return c(ops, NONE_ID, PID)

    def none_epoch(ops: Any) -> Any:
        return c(ops, NONE_ID, EPOCH)

    def init(ops: Any, s: Mapping[str, Any]) -> Any:
        common = ops.and_(
            ops.not_(s["coordinator.has_failed_epoch_fence"]),
            ops.eq(s["coordinator.last_epoch"], none_epoch(ops)), ops.eq(s["log.last_epoch"], none_epoch(ops)),
            ops.eq(s["log.epoch"], s["coordinator.epoch"]),
            ops.eq(s["response.error"], c(ops, int(Errors.NONE), ERR)),
            is_none_pair(ops, (s["response.producer_id"], s["response.epoch"])),
            *[is_none_pair(ops, _held(s, w)) for w in CLIENTS],
            is_none_pair(ops, (s["idempotent.producer_id"], s["idempotent.epoch"])))
        # A transactional id the coordinator has never seen ...
        unknown = ops.and_(
            ops.not_(s["coordinator.exists"]), ops.not_(s["coordinator.ongoing"]),
            ops.eq(s["coordinator.producer_id"], none_pid(ops)), ops.eq(s["coordinator.prev_producer_id"], none_pid(ops)),
            ops.eq(s["coordinator.epoch"], none_epoch(ops)),
            is_none_pair(ops, _granted(s)), ops.ge(s["allocator.next_producer_id"], c(ops, 0, PID)))
        # ... or one loaded from the transaction log after any history (any producer id, any epoch
        # up to 32767, last epoch not persisted), with some earlier grant at or below it.
        loaded = ops.and_(
            s["coordinator.exists"], ops.ge(s["coordinator.producer_id"], c(ops, 0, PID)),
            ops.le(s["coordinator.prev_producer_id"], s["coordinator.producer_id"]),
            ops.ge(s["coordinator.prev_producer_id"], none_pid(ops)),
            # a previous id other than the current one is only ever seen right after a rotation
            implies(ops, ops.and_(ops.ne(s["coordinator.prev_producer_id"], s["coordinator.producer_id"]),
                                  ops.ne(s["coordinator.prev_producer_id"], none_pid(ops))),
                    ops.and_(ops.eq(s["coordinator.epoch"], c(ops, 0, EPOCH)), ops.not_(s["coordinator.ongoing"])))
            if stamps_prev else True,
            ops.ge(s["coordinator.epoch"], none_epoch(ops)),
            ops.gt(s["allocator.next_producer_id"], s["coordinator.producer_id"]),
            ops.or_(is_none_pair(ops, _granted(s)),
                    ops.and_(ops.ge(s["granted.producer_id"], c(ops, 0, PID)),
                             between(ops, s["granted.epoch"], 0, MAX_EPOCH - 1, EPOCH),
                             pair_le(ops, _granted(s), _cur(s)))))
        return ops.and_(common, ops.or_(unknown, loaded))

    def init_pid(who: str | None) -> Action:
        params = {"next_after": PID}
        if who is None:
            params.update({"req_producer_id": PID, "req_epoch": EPOCH})
        else:
            params.update({"with_current": 0, "delivered": 0})

        def step(ops: Any, s: Mapping[str, Any], p: Mapping[str, Any]) -> tuple[Any, dict[str, Any]]:
            if who is None:
                # any other producer instance, presenting any pair (or none)
                req = (p["req_producer_id"], p["req_epoch"])
            else:
                held = _held(s, who)
                send = ops.and_(p["with_current"], ops.not_(is_none_pair(ops, held)))
                req = (ops.ite(send, held[0], none_pid(ops)), ops.ite(send, held[1], none_epoch(ops)))
            nxt = s["allocator.next_producer_id"]
            o = rules.init_pid(ops, variant, meta_exists=s["coordinator.exists"],
                               meta_producer_id=s["coordinator.producer_id"],
                               meta_prev_producer_id=s["coordinator.prev_producer_id"],
                               meta_epoch=s["coordinator.epoch"], meta_last_epoch=s["coordinator.last_epoch"],
                               req_producer_id=req[0], req_epoch=req[1], new_producer_id=nxt)
            good = ok(ops, o.error)
            consumed = ops.and_(good, ops.eq(o.producer_id, nxt))
            # Empty / CompleteCommit / CompleteAbort (an Ongoing transaction is fenced instead).
            guard = ops.and_(ops.not_(s["coordinator.ongoing"]),
                             implies(ops, consumed, ops.gt(p["next_after"], nxt)))

            def on_ok(new: Any, old: Any) -> Any:
                return ops.ite(good, new, old)

            changes = {
                "coordinator.exists": ops.or_(s["coordinator.exists"], good),
                "coordinator.producer_id": on_ok(o.producer_id, s["coordinator.producer_id"]),
                "coordinator.prev_producer_id": on_ok(o.prev_producer_id, s["coordinator.prev_producer_id"]),
                "coordinator.epoch": on_ok(o.epoch, s["coordinator.epoch"]),
                "coordinator.last_epoch": on_ok(o.last_epoch, s["coordinator.last_epoch"]),
                "log.epoch": on_ok(o.epoch, s["log.epoch"]),
                "log.last_epoch": on_ok(o.last_epoch, s["log.last_epoch"]),
                "allocator.next_producer_id": ops.ite(consumed, p["next_after"], nxt),
                "granted.producer_id": on_ok(o.producer_id, s["granted.producer_id"]),
                "granted.epoch": on_ok(o.epoch, s["granted.epoch"]),
                "response.error": o.error,
                "response.producer_id": o.producer_id,
                "response.epoch": o.epoch,
            }
            if who is not None:
                take = ops.and_(good, p["delivered"])
                held = _held(s, who)
                changes[f"client[{who}].producer_id"] = ops.ite(take, o.producer_id, held[0])
                changes[f"client[{who}].epoch"] = ops.ite(take, o.epoch, held[1])
            return guard, changes

        doc = ("InitProducerId from another instance presenting any pair" if who is None else
               f"InitProducerId from instance {who}, with its current pair or none; the response may be lost")
        return Action(params, step, doc)

    def stamped(ops: Any, s: Mapping[str, Any], changes: dict[str, Any]) -> dict[str, Any]:
        if stamps_prev:
            changes["coordinator.prev_producer_id"] = s["coordinator.producer_id"]
        return changes

    def begin(ops: Any, s: Mapping[str, Any], p: Mapping[str, Any]) -> tuple[Any, dict[str, Any]]:
        return ops.and_(s["coordinator.exists"], ops.not_(s["coordinator.ongoing"])), \
            stamped(ops, s, {"coordinator.ongoing": True})

    def end(ops: Any, s: Mapping[str, Any], p: Mapping[str, Any]) -> tuple[Any, dict[str, Any]]:
        # a client's EndTxn; after a fence whose write failed its old epoch is rejected
        return ops.and_(s["coordinator.ongoing"], ops.not_(s["coordinator.has_failed_epoch_fence"])), \
            stamped(ops, s, {"coordinator.ongoing": False})

    def fence(ops: Any, s: Mapping[str, Any], p: Mapping[str, Any]) -> tuple[Any, dict[str, Any]]:
        new_epoch = rules.fence(ops, s["coordinator.epoch"], s["coordinator.has_failed_epoch_fence"])
        written = p["write_ok"]
        return s["coordinator.ongoing"], stamped(ops, s, {
            "coordinator.epoch": new_epoch,
            "coordinator.last_epoch": none_epoch(ops),
            "log.epoch": ops.ite(written, new_epoch, s["log.epoch"]),
            "log.last_epoch": ops.ite(written, none_epoch(ops), s["log.last_epoch"]),
            # the abort completes (PrepareAbort, markers, CompleteAbort) or the fence is remembered
            "coordinator.ongoing": ops.not_(written),
            "coordinator.has_failed_epoch_fence": ops.not_(written),
        })

    def failover(ops: Any, s: Mapping[str, Any], p: Mapping[str, Any]) -> tuple[Any, dict[str, Any]]:
        # memory is reloaded from the log; whether last epoch / previous producer id survive
        # depends on the version (never in Kafka 2.5..3.9 for the last epoch): both are allowed
        last = ops.ite(p["keep_last_epoch"], s["log.last_epoch"], none_epoch(ops))
        return True, {
            "coordinator.epoch": s["log.epoch"],
            "coordinator.last_epoch": last,
            "log.last_epoch": last,
            "coordinator.prev_producer_id": ops.ite(p["keep_prev_producer_id"], s["coordinator.prev_producer_id"],
                                                    none_pid(ops)),
            "coordinator.has_failed_epoch_fence": False,
        }

    def expire(ops: Any, s: Mapping[str, Any], p: Mapping[str, Any]) -> tuple[Any, dict[str, Any]]:
        # transactional.id.expiration.ms: the metadata goes; the next InitProducerId starts afresh
        return ops.and_(s["coordinator.exists"], ops.not_(s["coordinator.ongoing"])), {"coordinator.exists": False}

    def restart(who: str) -> Action:
        def step(ops: Any, s: Mapping[str, Any], p: Mapping[str, Any]) -> tuple[Any, dict[str, Any]]:
            return True, {f"client[{who}].producer_id": none_pid(ops), f"client[{who}].epoch": none_epoch(ops)}
        return Action({}, step, f"instance {who} is replaced by a new instance holding no pair")

    def idempotent_init(ops: Any, s: Mapping[str, Any], p: Mapping[str, Any]) -> tuple[Any, dict[str, Any]]:
        # handleInitProducerId without a transactional id: the allocator's next id, epoch 0
        nxt = s["allocator.next_producer_id"]
        return ops.gt(p["next_after"], nxt), {
            "idempotent.producer_id": nxt, "idempotent.epoch": c(ops, 0, EPOCH),
            "allocator.next_producer_id": p["next_after"]}

    def idempotent_bump_step(ops: Any, s: Mapping[str, Any], p: Mapping[str, Any]) -> tuple[Any, dict[str, Any]]:
        held = (s["idempotent.producer_id"], s["idempotent.epoch"])
        needs_new, new_epoch = rules.idempotent_bump(ops, held[0], held[1])
        return ops.not_(is_none_pair(ops, held)), {
            "idempotent.producer_id": ops.ite(needs_new, none_pid(ops), held[0]),
            "idempotent.epoch": ops.ite(needs_new, none_epoch(ops), new_epoch)}

    actions = {
        "InitProducerId[A]": init_pid("A"),
        "InitProducerId[B]": init_pid("B"),
        "InitProducerId[other]": init_pid(None),
        "BeginTxn": Action({}, begin, "the current producer starts a transaction (Ongoing)"),
        "EndTxn": Action({}, end, "the transaction commits or aborts normally"),
        "FenceProducerEpoch": Action({"write_ok": 0}, fence,
                                     "InitProducerId on Ongoing or a timeout: fence, abort; the write may fail"),
        "Failover": Action({"keep_last_epoch": 0, "keep_prev_producer_id": 0}, failover,
                           "coordinator failover: reload from the transaction log"),
        "Expire": Action({}, expire, "the transactional id expires"),
        "Restart[A]": restart("A"),
        "Restart[B]": restart("B"),
        "InitProducerId[idempotent]": Action({"next_after": PID}, idempotent_init,
                                             "an idempotent producer gets a fresh producer id, epoch 0"),
        "BumpIdempotentEpoch": Action({}, idempotent_bump_step,
                                      "the idempotent producer bumps its epoch locally (or drops its id at max)"),
    }

    def invariant(ops: Any, s: Mapping[str, Any]) -> dict[str, Any]:
        E, L = s["coordinator.epoch"], s["coordinator.last_epoch"]
        logE, logL = s["log.epoch"], s["log.last_epoch"]
        P, Pp, N = s["coordinator.producer_id"], s["coordinator.prev_producer_id"], s["allocator.next_producer_id"]
        G = _granted(s)
        hf = s["coordinator.has_failed_epoch_fence"]
        idem = (s["idempotent.producer_id"], s["idempotent.epoch"])
        none_e = none_epoch(ops)
        held_ok = [ops.or_(is_none_pair(ops, _held(s, w)),
                           ops.and_(ops.ge(_held(s, w)[0], c(ops, 0, PID)),
                                    between(ops, _held(s, w)[1], 0, MAX_EPOCH - 1, EPOCH),
                                    pair_le(ops, _held(s, w), G)))
                   for w in CLIENTS]

        def retry_key_free(holder: str, other: str, last: Any, epoch: Any) -> Any:
            hx, hy = _held(s, holder), _held(s, other)
            holds_cur = pair_eq(ops, hx, (P, epoch))
            keys = ops.or_(pair_eq(ops, hy, (P, last)), pair_eq(ops, hy, (Pp, last)))
            return implies(ops, ops.and_(ops.ne(last, none_e), holds_cur), ops.not_(keys))

        def last_shape(last: Any, epoch: Any) -> Any:
            # a last epoch is the epoch just before the current one (same producer id, or the
            # previous id forgotten by a failover), or the exhausted epoch before a rotation
            after_bump = ops.eq(ops.add(last, c(ops, 1, EPOCH)), epoch)
            after_rotation = ops.and_(ops.eq(epoch, c(ops, 0, EPOCH)), ops.ge(last, c(ops, MAX_EPOCH - 1, EPOCH)))
            return implies(ops, ops.ne(last, none_e),
                           ops.and_(ops.or_(after_bump, after_rotation),
                                    implies(ops, after_bump, ops.or_(ops.eq(Pp, P), ops.eq(Pp, none_pid(ops))))))

        return {
            "last epoch": ops.and_(last_shape(L, E), last_shape(logL, logE)),
            "previous id": (ops.or_(ops.eq(Pp, P), ops.eq(Pp, none_pid(ops)),
                                    ops.and_(ops.eq(E, c(ops, 0, EPOCH)), ops.eq(logE, c(ops, 0, EPOCH)),
                                             ops.not_(s["coordinator.ongoing"])))
                            if stamps_prev else True),
            "ranges": ops.and_(between(ops, E, -1, MAX_EPOCH, EPOCH), between(ops, logE, -1, MAX_EPOCH, EPOCH),
                               between(ops, L, -1, MAX_EPOCH, EPOCH), between(ops, logL, -1, MAX_EPOCH, EPOCH)),
            "granted range": ops.or_(is_none_pair(ops, G),
                                     ops.and_(ops.ge(G[0], c(ops, 0, PID)),
                                              between(ops, G[1], 0, MAX_EPOCH - 1, EPOCH))),
            "allocator": ops.and_(ops.gt(N, P), ops.gt(N, Pp), ops.gt(N, G[0]), ops.ge(N, c(ops, 0, PID)),
                                  ops.ge(Pp, none_pid(ops)),
                                  implies(ops, s["coordinator.exists"], ops.ge(P, c(ops, 0, PID)))),
            "memory/log": ops.and_(
                implies(ops, ops.not_(hf), ops.and_(ops.eq(E, logE), ops.eq(L, logL))),
                implies(ops, hf, ops.and_(s["coordinator.ongoing"], ops.eq(L, none_e),
                                          ops.or_(ops.eq(E, ops.add(logE, c(ops, 1, EPOCH))),
                                                  ops.and_(ops.eq(E, logE),
                                                           ops.eq(E, c(ops, MAX_EPOCH, EPOCH))))))),
            "granted <= log": pair_le(ops, G, (P, logE)),
            "held <= granted": ops.and_(*held_ok),
            "retry": ops.and_(
                implies(ops, ops.ne(L, none_e), pair_eq(ops, G, (P, E))),
                implies(ops, ops.ne(logL, none_e), pair_eq(ops, G, (P, logE)))),
            "unique": ops.or_(is_none_pair(ops, _held(s, "A")), ops.not_(pair_eq(ops, _held(s, "A"), _held(s, "B")))),
            "idempotent": ops.or_(
                is_none_pair(ops, idem),
                ops.and_(ops.ge(idem[0], c(ops, 0, PID)), ops.lt(idem[0], N),
                         between(ops, idem[1], 0, MAX_EPOCH, EPOCH),
                         ops.ne(idem[0], P), ops.ne(idem[0], Pp), ops.ne(idem[0], G[0]),
                         *[ops.ne(idem[0], _held(s, w)[0]) for w in CLIENTS])),
            "retry-key": ops.and_(retry_key_free("A", "B", L, E), retry_key_free("B", "A", L, E),
                                  retry_key_free("A", "B", logL, logE), retry_key_free("B", "A", logL, logE)),
        }

    return TransitionSystem(f"coordinator[{variant}]", STATE, init, actions, invariant)


def pid_epoch_increases(rules: RuleSet) -> Obligation:
    def step_claim(ops: Any, s: Mapping[str, Any], action: str, p: Mapping[str, Any], s2: Mapping[str, Any]) -> Any:
        # the logged pair never goes down, whatever the step
        log_monotone = pair_le(ops, (s["coordinator.producer_id"], s["log.epoch"]),
                               (s2["coordinator.producer_id"], s2["log.epoch"]))
        if action not in TXN_INIT_ACTIONS:
            return log_monotone
        resp = (s2["response.producer_id"], s2["response.epoch"])
        fresh = pair_lt(ops, _granted(s), resp)
        # the one exception: a retry is answered with the pair it was already granted, unchanged
        resend = ops.and_(pair_eq(ops, resp, _granted(s)), pair_eq(ops, resp, _cur(s)),
                          pair_eq(ops, _cur(s2), _cur(s)))
        return ops.and_(log_monotone, implies(ops, ok(ops, s2["response.error"]), ops.or_(fresh, resend)))

    problems = [_with_claim(coordinator_system(v, rules), step_claim=step_claim) for v in VARIANTS]
    return Obligation(
        "PidEpochIncreases",
        "every successful InitProducerId answers a (producer id, epoch) strictly above every pair "
        "handed out before, except that a retry gets its own pair again; the logged pair never "
        "decreases (invariant: see INVARIANT_DOC)",
        "inductive", problems)


def no_shared_pid_epoch(rules: RuleSet) -> Obligation:
    def claim(ops: Any, s: Mapping[str, Any]) -> Any:
        holders = [_held(s, w) for w in CLIENTS] + [(s["idempotent.producer_id"], s["idempotent.epoch"])]
        return ops.and_(*[ops.or_(is_none_pair(ops, x), ops.not_(pair_eq(ops, x, y)))
                          for i, x in enumerate(holders) for y in holders[i + 1:]])

    problems = [_with_claim(coordinator_system(v, rules), claim=claim) for v in VARIANTS]
    return Obligation(
        "NoSharedPidEpoch",
        "two different producer instances (two transactional ones and an idempotent one) never "
        "hold the same (producer id, epoch) (invariant: see INVARIANT_DOC)",
        "inductive", problems)


def _with_claim(ts: TransitionSystem, claim: Any = None, step_claim: Any = None) -> TransitionSystem:
    return TransitionSystem(ts.label, ts.state, ts.init, ts.actions, ts.invariant, claim, step_claim, ts.axioms)


# --- the proof set ------------------------------------------------------------------------------

BUILDERS = {
    "InitPidEpochInRange": init_epoch_range,
    "FenceBumpNeverOverflows": fence_bump,
    "IdempotentBumpNeverOverflows": idempotent_bump,
    "PidEpochIncreases": pid_epoch_increases,
    "NoSharedPidEpoch": no_shared_pid_epoch,
    "SequenceAcceptsExactlyNext": sequence_next,
    "SequenceIncrementAgrees": sequence_increment,
}


def rules_for(mutation: str | None) -> RuleSet:
    if mutation is None:
        return REAL
    return MUTATIONS[mutation][1]


def build(mutation: str | None) -> dict[str, Obligation]:
    rules = rules_for(mutation)
    return {name: make(rules) for name, make in BUILDERS.items()}


_DOCS = {name: make(REAL) for name, make in BUILDERS.items()}

PROOFS = ProofSet(
    name="kafka",
    doc="Kafka producer-id / epoch / sequence obligations at the real widths",
    obligations={name: ob.doc for name, ob in _DOCS.items()},
    mutations={name: doc for name, (doc, _) in MUTATIONS.items()},
    build=build,
    kinds={name: ob.kind for name, ob in _DOCS.items()},
)


def _no_machine(switches: Mapping[str, Any], bounds: Mapping[str, int]) -> Any:
    raise ValueError("kafka.proofs has no explicit-state machine; run `eoscheck prove` on this spec")


#: The model a proof spec names (``model = "eoscheck.model.obligations:PROOF_MODEL"``): its
#: properties are the obligations, so ``[expect] property`` is validated like any spec's.
PROOF_MODEL = ModelDef(
    name="kafka.proofs",
    doc="Z3 obligations over the shared Kafka rules at the real widths (eoscheck prove)",
    variants={"real-widths": Variant("int16 epochs, int64 producer ids, int32 sequences")},
    default_variant="real-widths",
    switches={},
    bounds={},
    properties=dict(PROOFS.obligations),
    build=_no_machine,
)
