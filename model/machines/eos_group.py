"""``kafka.eos``'s consumer group: members with generations and rebalances, the consume-transform-produce
loop gated by the member's assignment, TxnOffsetCommit with the member's group metadata (KIP-447),
and the properties of the loop across instances.

A mixin of ``EosMachine`` (compose collects parts, rules and properties over the MRO); every rule
has no bindings while ``members`` is 0, so the machine without a group is unchanged. With
``members`` > 0 the group has one input partition with ``input_records`` records, and each member
is an application instance: with ``deployment=per-thread`` (KIP-447, Streams ``exactly_once_v2``)
``producer[i]`` is instance ``i``'s own transactional producer; with ``deployment=per-partition``
(Streams ``exactly_once``) it is instance ``i``'s instance of the task's producer, one transactional
id for all (``eos_alpha``). The group moves the input
partition when a member's session times out (a paused process keeps running its loop as a zombie
until it learns it) and when a member rejoins.

Rules here (the decisions are in ``model.group.member``, ``model.group.membership``,
``model.group.offset_fetch`` and ``model.group.txn_offset_commit``): SessionTimeout, Rebalance
(JoinGroup + SyncGroup in one step once every live member is between transactions), OnAssignment,
Rejoin, and the group versions of OffsetFetch (input partition 0, only for its owner),
BeginTransaction (only while the member believes it owns the partition) and TxnOffsetCommit (with
the member's generation and member id). A TxnOffsetCommit refused by the group coordinator's fencing is
Streams' TaskMigratedException (``StreamsProducer.commitTransaction``, ``StreamThread.handleTaskMigrated``):
the member aborts, its tasks are lost and it rejoins with a new member id (``Member.lost``), as
``kafka.eos_pipeline``'s LOST phase. An INVALID_PRODUCER_EPOCH on a produce (also TaskMigrated in
Streams) is left to the producer: it aborts and, with a KIP-360 TV1 client, bumps its epoch.

Bounds: ``members`` (0 removes the group), ``rebalances`` (generations after the first; states past
it are not explored, as ``kafka.eos_pipeline``'s ``max_generation``; 0 removes session timeouts,
rebalances and assignments), ``rejoins`` (new member ids per instance; states past it are not
explored; with 0 it is cut there rather than removed, so liveness sees a member that must rejoin
as enabled to).

Member ids are ranks (``1..members``, in the order the range assignor sorts the members' current
ids), as arbitrary as Kafka's UUID-based ids: the initial states are every assignment of the first
generation's ids to the instances, and a rejoin's new id takes any rank (``Rejoin``'s ``rank``). The
application instances are then interchangeable: ``member`` belongs to the producers' scalarset
(``eos_symmetry``).

Not modelled here: static membership, several input partitions (several tasks per member).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping
from functools import lru_cache
from typing import Any, NamedTuple

from eoscheck.checker.compose import OUTSIDE, Actors, Part, Projection, invariant, precondition, rule

from .. import properties as props
from ..group.member import (
    INPUT_PARTITION,
    TASK_MIGRATED,
    Member,
    can_rebalance,
    commit_metadata,
    initial_group,
    is_current_owner,
    lose_tasks,
    must_rejoin,
    on_assignment,
    rejoin_ranked,
    session_timeout,
)
from ..group.membership import rebalance
from ..group.metadata import NO_GENERATION, CommittedOffset, GroupMeta, GroupState, PendingTxnOffset
from ..group.offset_fetch import OffsetFetchAnswer, offset_fetch, on_offset_fetch_answer
from ..producer import transactional as tx
from ..protocol import Deployment
from ..state import (
    TXN_CLOSED,
    TXN_FATAL,
    TXN_FENCED,
    TXN_INIT,
    TXN_READY,
    TxnPartitionState,
    TxnProducer,
)
from ..transactions.codes import TxnState

#: the group's bounds, in ``kafka.eos``'s bound table (``eos_model.BOUNDS``)
GROUP_BOUNDS = ("members", "rebalances", "rejoins")
#: the actions of this mixin (listed only with a group)
GROUP_ACTIONS = frozenset({"SessionTimeout", "Rebalance", "OnAssignment", "Rejoin"})


def _members(machine: Any) -> range:
    return range(machine.members)


def _with_rebalances(machine: Any) -> range:
    return range(machine.members) if machine.rebalances else range(0)


def _assignments(machine: Any) -> range:
    # a lone member never learns a new assignment without a rejoin: its session timeout leaves the group
    # empty, and only a rejoin brings it back
    return _with_rebalances(machine) if machine.members > 1 or machine.rejoins else range(0)


def _with_rejoins(machine: Any) -> range:
    # Bound with rejoins = 0 too, and cut by ``group_within_bounds``: a member that must rejoin is then
    # enabled to, so liveness (which counts steps leaving the bounds as enabled, as kafka.eos_pipeline's
    # Rejoin is) does not take a run stopped at the bound for a group that never settles. Not listed.
    return range(machine.members)


def _the_group(machine: Any) -> range:
    return range(1) if machine.members and machine.rebalances else range(0)


def _grouped_partitions(machine: Any) -> range:
    return range(machine.n_partitions) if machine.members else range(0)


#: Rebalance misses whenever a producer moves while the group prepares a rebalance; its outcome is
#: the group's alone (pure, few distinct groups)
_rebalance = lru_cache(maxsize=1 << 12)(rebalance)
#: Rejoin misses whenever its producer moves while the gate is open (the effect writes the producer
#: whole); the members' and the membership's part of the outcome is pure and repeats across those misses
_rejoin_ranked = lru_cache(maxsize=1 << 14)(rejoin_ranked)
_BETWEEN = frozenset({TXN_INIT, TXN_READY, TXN_CLOSED})
_PREPARING_REBALANCE = int(GroupState.PREPARING_REBALANCE)
# plain ints for the checks run on memo misses (an IntEnum member costs ~100 ns to read and compare)
_PREPARING = frozenset({int(TxnState.PREPARE_COMMIT), int(TxnState.PREPARE_ABORT)})


def between_transactions(p: TxnProducer) -> bool:
    """The instance's producer has no open transaction (a rebalance may complete, an assignment apply)."""
    return p.phase in (TXN_INIT, TXN_READY, TXN_CLOSED)


# --- projections (``checker.compose``: a rule or property that reads ``"group:membership"`` gets this
# value alone and is memoised on it, so the offsets and pending commits moving cost it no miss; one that
# writes it changes the group's membership fields and keeps its offsets)


class Membership(NamedTuple):
    """The group's membership fields (``GroupMeta``'s first five): what the membership steps
    (``can_rebalance``, ``on_assignment``, ``must_rejoin``, ``rejoin_ranked``, ``session_timeout``,
    ``rebalance``) read and write of the group, nothing of its offsets."""

    state: int
    generation_id: int
    members: tuple[int, ...]
    static_members: tuple[tuple[int, int], ...]
    assignment: tuple[int, ...]


def membership(group: GroupMeta) -> Membership:
    return Membership(group.state, group.generation_id, group.members, group.static_members, group.assignment)


def with_membership(group: GroupMeta, m: Membership) -> GroupMeta:
    return GroupMeta(m.state, m.generation_id, m.members, m.static_members, m.assignment, group.offsets,
                     group.pending, group.completing)


class GroupOffsets(NamedTuple):
    """The group's committed and pending offsets and its scheduled completions (``GroupMeta``'s last
    three fields): what a marker on
    __consumer_offsets reads and writes of the group (``complete_pending_txn_offset_commit``) and what
    ZombieNeverCommitsOffsets reads, nothing of its membership."""

    offsets: tuple[CommittedOffset, ...]
    pending: tuple[PendingTxnOffset, ...]
    completing: tuple[tuple[int, int], ...] = ()


def group_offsets(group: GroupMeta) -> GroupOffsets:
    return GroupOffsets(group.offsets, group.pending, group.completing)


def with_offsets(group: GroupMeta, o: GroupOffsets) -> GroupMeta:
    return group._replace(offsets=o.offsets, pending=o.pending, completing=o.completing)


def fetched(group: GroupMeta) -> tuple[OffsetFetchAnswer, OffsetFetchAnswer]:
    """The group coordinator's OffsetFetch answers for the input partition, without and with
    require_stable (OffsetFetch's whole read of the group: its state, offsets and pending commits)."""
    return (offset_fetch(group, INPUT_PARTITION, require_stable=False),
            offset_fetch(group, INPUT_PARTITION, require_stable=True))


def input_offset(group: GroupMeta) -> int:
    """The committed offset of the input partition (OffsetsAgreeWithOutput's ``c``, before the max with 0)."""
    return group.offsets[INPUT_PARTITION].offset


def producer_between(p: TxnProducer) -> bool:
    return p.phase in _BETWEEN


def producer_phase(p: TxnProducer) -> int:
    return p.phase


def producer_inputs(p: TxnProducer) -> tuple[int, ...]:
    return p.inputs


class CommitFields(NamedTuple):
    """What TxnOffsetCommit reads and writes of its producer (``_offsets_commit``,
    ``tx.on_txn_offset_commit``): a written projection, so the producer's batches and ghosts moving
    cost it no miss."""

    phase: int
    producer_id: int
    epoch: int
    bump_after_abort: int
    fatal_error: int
    position: int
    offsets: int


def commit_fields(p: TxnProducer) -> CommitFields:
    return CommitFields(p.phase, p.producer_id, p.epoch, p.bump_after_abort, p.fatal_error, p.position, p.offsets)


def with_commit_fields(p: TxnProducer, c: CommitFields) -> TxnProducer:
    return p._replace(phase=c.phase, producer_id=c.producer_id, epoch=c.epoch, bump_after_abort=c.bump_after_abort,
                      fatal_error=c.fatal_error, position=c.position, offsets=c.offsets)


def txn_state(m: Any) -> int:
    return m.state


def member_identity(m: Member) -> Member:
    """What Rejoin reads and writes of a member: its id, incarnation and whether it lost its tasks,
    with the generation and assignment it believes blanked (a written projection: the others'
    assignments moving cost Rejoin no miss)."""
    return Member(m.member_id, NO_GENERATION, False, m.incarnation, m.lost)


def with_member_identity(m: Member, identity: Member) -> Member:
    """``m`` with ``identity`` written: a new incarnation is a new consumer, with no generation and
    no assignment until its first (``rejoin_ranked``), so it is ``identity`` itself; within one
    incarnation the generation and assignment ``m`` believes are kept."""
    if identity.incarnation != m.incarnation:
        return identity
    return m._replace(member_id=identity.member_id, lost=identity.lost)


class RejoinFields(NamedTuple):
    """What Rejoin reads and writes of its producer (a written projection): the phase, the position,
    and the connection of each partition, which tells a new instance (``tx.restart`` opens new ones)."""

    phase: int
    position: int
    connections: tuple[int, ...]


def rejoin_fields(p: TxnProducer) -> RejoinFields:
    return RejoinFields(p.phase, p.position, tuple(part.connection for part in p.parts))


def with_rejoin_fields(p: TxnProducer, f: RejoinFields) -> TxnProducer:
    """``p`` with ``f`` written: new connections are a new producer instance (``tx.restart``: nothing of
    the old one's is read again) with ``f``'s phase, position and connections; otherwise ``p`` with
    ``f``'s phase and position."""
    if f.connections == tuple(part.connection for part in p.parts):
        return p._replace(phase=f.phase, position=f.position)
    new = tx.restart(p)
    if f.connections != tuple(part.connection for part in new.parts):
        new = new._replace(parts=tuple(part._replace(connection=c) for part, c in zip(new.parts, f.connections)))
    return new._replace(phase=f.phase, position=f.position)


#: the projections of ``kafka.eos``'s parts this mixin reads (declared on the parts in ``eos.py``)
GROUP_PROJECTIONS: dict[str, dict[str, Any]] = {
    "group": {"membership": Projection(membership, with_membership), "input_offset": input_offset,
              "offsets": Projection(group_offsets, with_offsets), "fetched": fetched},
    "producer": {"between": producer_between, "phase": producer_phase, "inputs": producer_inputs,
                 "commit": Projection(commit_fields, with_commit_fields),
                 "rejoin": Projection(rejoin_fields, with_rejoin_fields)},
    "txn": {"state": txn_state},
}
#: a rejoin's producer phases: fenced or fatal (a new instance), or between transactions
_FENCED_OR_FATAL = frozenset({TXN_FENCED, TXN_FATAL})


def _show_member(m: Member) -> dict[str, Any]:
    shown = {"member_id": m.member_id, "generation": m.generation, "owns": m.owns, "incarnation": m.incarnation}
    return {**shown, "lost": True} if m.lost else shown


def _show_zombie_offsets(entries: tuple[PendingTxnOffset, ...]) -> dict[str, Any]:
    # hidden while empty: machines without a group show no trace of it
    return {"entries": [f"pid {e.producer_id}: input {e.partition} offset {e.offset} at {e.appended_at}"
                        for e in entries]} if entries else {}


def _sources(part: TxnPartitionState, inputs: tuple[tuple[int, ...], ...], batches: int) -> dict[int, int]:
    """How many committed records of ``part`` each input offset produced (across every instance);
    ``inputs[t]``: producer ``t``'s input offset per transaction."""
    counts: dict[int, int] = {}
    for value in props.log_committed(part.log):
        t, r = props.record_of(value)
        source = inputs[t][r // batches]
        counts[source] = counts.get(source, 0) + 1
    return counts


class EosGroup:
    """The consumer group of ``kafka.eos`` (see the module doc); mixed into ``EosMachine``."""

    members: int
    rebalances: int
    rejoins: int
    n_partitions: int
    n_producers: int
    input_records: int
    batches: int
    transactions: int
    protocol: Any
    require_stable: bool
    _group_slot: int
    _member_slots: tuple[int, int]

    # --- parts (slots before EosMachine's: a base class's parts come first)
    # renamed with the producers (``eos_symmetry``): member i and producer i are one application instance;
    # member ids are data and are not renamed, so the range assignor's choice follows the ids, not the index
    member = Actors(count="members", init=lambda m, i: m._initial_members[i], show=_show_member,
                    symmetric="producer", projections={"identity": Projection(member_identity, with_member_identity)},
                    doc="each application instance's consumer: member id, generation and assignment it believes")
    zombie_offsets = Part(init=(), show=_show_zombie_offsets,
                          doc="ghost: offsets written by a member that was not the partition's current owner")

    def _group_setup(self, bounds: Mapping[str, int]) -> dict[str, int]:
        """The group's attributes and configuration entries; ValueError (one line) for what it cannot model."""
        self.members, self.rebalances, self.rejoins = (bounds.get(k, 0) for k in GROUP_BOUNDS)
        self._group_ok: dict[tuple, bool] = {}
        if self.members:
            if not self.input_records:
                raise ValueError("members > 0 needs input_records > 0 (a group consumes an input partition)")
            if self.n_producers != self.members:
                what = ("its own producer" if self.protocol.deployment == Deployment.PER_THREAD
                        else "its own instance of the task's producer")
                raise ValueError(f"deployment={self.protocol.deployment.value} gives each member {what}: producers "
                                 f"must equal members ({self.n_producers} != {self.members})")
            if bounds.get("restarts", 0):
                raise ValueError("restarts needs members=0 (a restarted instance's group membership is not modelled)")
        group, members = initial_group(self.members) if self.members else (None, ())
        self._initial_group, self._initial_members = group, members
        return {name: getattr(self, name) for name in GROUP_BOUNDS}

    def init_states(self) -> Iterator[tuple]:
        """With a group, every assignment of the first generation's member ids to the instances: Kafka
        gives a new member the id ``clientId + "-" + UUID`` (``GroupMetadata.generateMemberId``; the
        classic group's ``ClassicGroup.generateMemberId`` since the new coordinator) and the range
        assignor sorts member ids (``RangeAssignor.assign``), so which instance gets the input
        partition is arbitrary. Instance 0 with the lowest id comes first (the state the model had
        before it renamed members with producers: ``eos_symmetry``); the others are its images under
        the producers' scalarset, one orbit, so a run with symmetry explores the same orbits."""
        states = super().init_states()  # type: ignore[misc]
        if self.members < 2:
            yield from states
            return
        plan = self._plan  # type: ignore[attr-defined]
        seen: set[tuple] = set()
        for s in states:
            for perm in itertools.permutations(range(self.members)):
                image = plan.permute(s, "producer", perm)
                if image not in seen:
                    seen.add(image)
                    yield image

    def initially_owns(self, i: int) -> bool:
        """Member ``i`` owns the input partition after the first rebalance (False without a group)."""
        return bool(self._initial_members) and self._initial_members[i].owns

    def group_idle_actions(self) -> set[str]:
        """Actions with no bindings in this configuration (not listed)."""
        if not self.members:
            return set(GROUP_ACTIONS)
        return (set() if self.rebalances else {"SessionTimeout", "Rebalance", "OnAssignment"}) | (
            set() if self.rejoins else {"Rejoin"}) | (set() if _assignments(self) else {"OnAssignment"})

    def group_within_bounds_at(self, s: tuple) -> bool:
        """States past the last generation or rejoin are not explored (memoised on the group's and the
        members' slots: the hot path decodes nothing on a hit)."""
        lo, hi = self._member_slots
        logical = self.logical(s)  # type: ignore[attr-defined]  # the slots are logical ones
        key = (logical[self._group_slot], logical[lo:hi])
        ok = self._group_ok.get(key)
        if ok is None:
            v = self.view(s)  # type: ignore[attr-defined]
            ok = self._group_ok[key] = self.group_within_bounds(v.group, v.member)
        return ok

    def group_within_bounds(self, group: GroupMeta, members: tuple[Member, ...]) -> bool:
        """States past the last generation or rejoin are not explored."""
        return self.generation_within(group) and all(map(self.rejoins_within, members))

    def generation_within(self, group: GroupMeta) -> bool:
        """The group's generation is within the rebalances bound (one part of ``group_within_bounds``)."""
        return group.generation_id <= 1 + self.rebalances

    def rejoins_within(self, member: Member) -> bool:
        """A member's rejoins are within their bound (one part of ``group_within_bounds``)."""
        return member.incarnation <= self.rejoins

    def group_done(self, group: GroupMeta, txn: tuple[Any, ...]) -> bool:
        """Every input record's transaction committed and nothing is left pending."""
        return (group.offsets[INPUT_PARTITION].offset == self.input_records and not group.pending
                and all(m.state not in (TxnState.ONGOING, TxnState.PREPARE_COMMIT, TxnState.PREPARE_ABORT)
                        for m in txn))

    def group_stopped(self, group: GroupMeta, members: tuple[Member, ...], producer: tuple[TxnProducer, ...]) -> bool:
        """Every instance is out for good: fenced or out of the group, with no rejoin left (the run ends
        there; ``kafka.eos_pipeline`` cuts its Rejoin by the bound instead, which is not a deadlock either)."""
        return all((p.phase in (TXN_FENCED, TXN_FATAL) or m.member_id not in group.members or m.lost)
                   and m.incarnation >= self.rejoins for m, p in zip(members, producer))

    # --- membership ---------------------------------------------------------------------------------

    # on the group's membership (a written projection: the offsets are kept). It also reads the
    # producer's phase, which it does not use, so that its key is OnAssignment's and Rejoin's gate key
    # (member[i], membership, phase): compose looks the three up as one group, one lookup per state
    # and member instead of three (a phase change costs it a miss it would not have: few, cheap)
    @rule("SessionTimeout", params={"i": _with_rebalances},
          reads=("member[i]", "group:membership", "phase=producer[i]:phase"),
          writes=("group:membership",))
    def session_timeout_rule(self, member: Member, group: Membership) -> Any:
        """The member's session expires (a paused process); the coordinator removes it and prepares a
        rebalance. The process does not know yet."""
        removed = session_timeout(group, member)  # type: ignore[arg-type]
        return None if removed is None else {"group": removed}

    # on projections: the group's membership (written back, the offsets kept), whether each producer is
    # between transactions: the producers moving and the offsets changing cost no miss. Gated on the
    # membership alone (``can_rebalance``'s first test): a group that is not preparing a rebalance costs
    # one lookup of the membership's id, not of the five-term key
    @precondition(lambda self, group, member, between: can_rebalance(group, member, between))
    @precondition(lambda self, group: group.state == _PREPARING_REBALANCE)
    # a generation past the rebalances bound is outside the constraint (``generation_within``) whatever
    # the rest of the state: marked OUTSIDE, the BFS counts and cuts it unbuilt (37% of this rule's
    # steps on bench_eos.py's pipeline shape)
    @rule("Rebalance", params={"g": _the_group},
          reads=("group:membership", "member", "between=producer:between"), writes=("group:membership",),
          results=("generation",), outside=True)
    def rebalance_rule(self, group: Membership) -> Any:
        """JoinGroup and SyncGroup complete: a new generation and assignment."""
        done = _rebalance(group)
        if not self.generation_within(done):  # reads the generation alone (a Membership has it too)
            return {"group": done, "generation": done.generation_id, OUTSIDE: True}
        return {"group": done, "generation": done.generation_id}

    # a gate on projections (the membership fields, the producer's phase): restates the effect's own
    # "nothing to learn" (tests/test_eos_gates.py), so the offsets and the producer moving cost no miss
    # of the full key while there is nothing to learn. Its reads are Rejoin's gate's and SessionTimeout's
    # key's, in the same order: one grouped lookup per state and member for the three
    @precondition(lambda self, member, group, phase: phase in _BETWEEN and on_assignment(member, group) is not None)
    @rule("OnAssignment", params={"i": _assignments},
          reads=("member[i]", "group:membership", "producer[i]", "phase=producer[i]:phase"),
          writes=("member[i]", "producer[i]"), results=("owns",))
    def on_assignment_rule(self, member: Member, group: Membership, producer: TxnProducer) -> Any:
        """Between transactions, the member learns the new generation's assignment; its position is
        fetched again (a revoked or newly assigned partition)."""
        if not between_transactions(producer):
            return None
        learned = on_assignment(member, group)  # type: ignore[arg-type]
        if learned is None:
            return None
        return {"member": learned, "producer": self.alpha_on_assignment(producer, learned.owns),  # type: ignore[attr-defined]
                "owns": learned.owns}

    # a gate on projections (the producer's phase, the membership fields) and on member[i] (``me``),
    # restating the effect's own "nothing to do" below (tests/test_eos_gates.py); ``me`` is read by the
    # gate alone, so the outcomes' key leaves it out. The effect reads and writes every member's
    # identity (id, incarnation, lost; ``member_identity``), not the generation and assignment each
    # believes: the other member learning an assignment, or this one's stale view of its own, costs no
    # miss (tests/test_eos_group_projections.py compares its steps with the rule on whole members)
    @precondition(lambda self, me, group, phase: phase in _FENCED_OR_FATAL or (
        phase in _BETWEEN and must_rejoin(me, group)))
    @rule("Rejoin", params={"i": _with_rejoins},
          reads=("me=member[i]", "group:membership", "phase=producer[i]:phase", "member:identity",
                 "producer[i]:rejoin"),
          writes=("member:identity", "group:membership", "producer[i]:rejoin"), results=("rank",), outside=True)
    def rejoin_rule(self, i: int, member: tuple[Member, ...], group: Membership, producer: RejoinFields) -> Any:
        """A member that learned it left the group (between transactions), or whose producer was fenced,
        joins again with a new member id, which sorts anywhere among the others' (``rank``); a fenced
        producer is replaced by a new instance."""
        fenced = producer.phase in (TXN_FENCED, TXN_FATAL)
        if not fenced and not (must_rejoin(member[i], group) and between_transactions(producer)):  # type: ignore[arg-type]
            return None
        after = self.alpha_rejoin_fields(producer, fenced)  # type: ignore[attr-defined]
        # past the last rejoin the constraint cuts every successor: one stands for them (liveness sees
        # the member enabled to rejoin; ``_with_rejoins``), marked OUTSIDE (``rejoins_within`` of the
        # incarnation it writes; 46% of this rule's steps on bench_eos.py's pipeline shape)
        ranks = range(1, self.members + 1) if member[i].incarnation < self.rejoins else (self.members,)
        moves = []
        for rank in ranks:
            joined, moved = _rejoin_ranked(member, group, i, rank)
            move = {"member": joined, "group": moved, "producer": after, "rank": rank}
            if not (self.rejoins_within(joined[i]) and self.generation_within(moved)):
                move[OUTSIDE] = True
            moves.append(move)
        return moves

    # --- the loop, gated by the member's assignment -------------------------------------------------

    # on a projection (the coordinator's answers, ``fetched``): a commit of other offsets or a membership
    # change that leaves the answers alone costs no miss
    @precondition(lambda self, producer, member: producer.phase == TXN_READY and producer.position < 0 and member.owns)
    @rule("OffsetFetch", params={"t": _members}, reads=("producer[t]", "member[t]", "group:fetched"),
          writes=("producer[t]",), results=("position",))
    def group_offset_fetch(self, producer: TxnProducer, group: tuple[OffsetFetchAnswer, OffsetFetchAnswer]) -> Any:
        """The owner learns its position in the input partition (require_stable: wait while a
        transaction's offsets for it are pending)."""
        reaction, position = on_offset_fetch_answer(group[self.require_stable])
        client = tx.on_offset_fetch(producer, reaction, position)
        return None if client is None else {"producer": client, "position": position}

    @precondition(lambda self, producer, member: producer.phase == TXN_READY and member.owns
                  and producer.txn < self.transactions and 0 <= producer.position < self.input_records)
    @rule("BeginTransaction", params={"t": _members}, reads=("producer[t]", "member[t]", "now"),
          writes=("producer[t]",), results=("txn",))
    def group_begin_transaction(self, producer: TxnProducer, now: int) -> Any:
        """The member processes the input record at its position in a new transaction."""
        return {"producer": tx.begin_transaction(producer, self.batches, now, True), "txn": producer.txn}

    # the producer through a written projection (the fields the commit reads and writes); the gate on
    # the whole producer (``whole``, read by the gate alone), so that it is one of the producer[t] gate
    # group (InitProducerId, AddOffsetsToTxn, AddPartitionsToTxn, Drain, EndTxn): no lookup of its own
    # per state, and no projection computed where the gate is shut
    @precondition(lambda self, whole: whole.phase == 2 and whole.offsets == 1)  # TXN_IN_TXN
    @rule("TxnOffsetCommit", params={"t": _members},
          reads=("producer[t]:commit", "member[t]", "txn[t]", "group", "offsets_leader", "zombie_offsets",
                 "whole=producer[t]"),
          writes=("producer[t]:commit", "member[t]", "group", "offsets_leader", "zombie_offsets"),
          results=("offset", "error"))
    def group_txn_offset_commit(self, producer: CommitFields, member: Member, txn: Any, group: GroupMeta,
                                offsets_leader: TxnPartitionState,
                                zombie_offsets: tuple[PendingTxnOffset, ...]) -> Any:
        """TxnOffsetCommit with the member's group metadata (generation, member id): a KIP-447 coordinator
        refuses a zombie's; an accepted commit by a member that is not the current owner is remembered
        (ghost) so ZombieNeverCommitsOffsets can see it materialise. A refusal by the group's fencing is
        Streams' TaskMigratedException: the member aborts, loses its tasks and rejoins."""
        generation, member_id = self.alpha_commit_metadata(member, commit_metadata(member))  # type: ignore[attr-defined]
        out = self._offsets_commit(INPUT_PARTITION, producer, txn, group, offsets_leader,  # type: ignore[attr-defined]
                                   generation_id=generation, member_id=member_id)
        if out is None:
            return None  # retried
        if out["error"] in TASK_MIGRATED:
            out["member"] = lose_tasks(member)
        if out["error"] == 0 and not is_current_owner(member, group):
            mine = [e for e in out["group"].pending if e.producer_id == producer.producer_id]
            out["zombie_offsets"] = tuple(sorted(set(zombie_offsets) | set(mine)))
        return out

    # --- properties of the loop across instances (no bindings without a group) ----------------------

    # both read projections: each producer's inputs, the input partition's committed offset, each
    # transaction's state (a miss only when one of those or the leader changes)
    @invariant("NoDuplicateOutput", params={"p": _grouped_partitions}, reads=("leader[p]", "producer:inputs"))
    def no_duplicate_output(self, leader: TxnPartitionState, producer: tuple[tuple[int, ...], ...]) -> bool:
        """No input record's output is committed twice on an output partition, whichever instance produced it."""
        return all(n <= self.batches for n in _sources(leader, producer, self.batches).values())

    @invariant("OffsetsAgreeWithOutput", params={"p": _grouped_partitions},
               reads=("leader[p]", "producer:inputs", "group:input_offset", "txn:state"))
    def offsets_agree(self, leader: TxnPartitionState, producer: tuple[tuple[int, ...], ...], group: int,
                      txn: tuple[int, ...]) -> bool:
        """When no transaction is completing, the committed input offset c and the committed output agree: exactly the outputs of records 0..c-1, once each."""
        if any(state in _PREPARING for state in txn):
            return True
        c = max(group, 0)
        return _sources(leader, producer, self.batches) == {i: self.batches for i in range(c)}

    # on a projection (the group's offsets): a membership change costs no miss
    @invariant("ZombieNeverCommitsOffsets", reads=("group:offsets", "zombie_offsets"))
    def zombie_never_commits(self, group: GroupOffsets, zombie_offsets: tuple[PendingTxnOffset, ...]) -> bool:
        """No offset written by a zombie (not the input partition's owner in the current generation) becomes committed."""
        return not any(group.offsets[e.partition] == CommittedOffset(e.offset, e.appended_at) for e in zombie_offsets)


def show_membership(group: GroupMeta) -> dict[str, Any]:
    """The group's membership fields (shown only for a group with members)."""
    return {"state": GroupState(group.state).name, "generation": group.generation_id, "members": list(group.members),
            "owner": list(group.assignment)}


__all__ = ["GROUP_ACTIONS", "GROUP_BOUNDS", "GROUP_PROJECTIONS", "EosGroup", "GroupOffsets", "Membership", "between_transactions",
           "membership", "show_membership"]
