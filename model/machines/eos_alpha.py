"""``kafka.eos``'s consumer group with per-partition producers (Kafka Streams ``exactly_once``, "EOS
alpha", before KIP-447's ``exactly_once_v2``): one transactional producer per input partition (per
task), whose transactional id is the application id plus the task id, created by whichever member
runs the task.

A mixin of ``EosMachine``, active with ``members`` > 0 and ``deployment=per-partition``. ``producer[i]``
is then member ``i``'s instance of the task's producer, and every instance has the same
transactional id: the coordinator's ``txn[i]`` and ``txn_log[i]`` are copies of the one task's
metadata (every step that writes one copy writes them all, in ``successors``), and the leaders see
one producer id. So fencing is by transactional id: the new owner's InitProducerId bumps the epoch
(and aborts the previous owner's open transaction), after which the previous owner's requests fail
with a fencing error at the coordinator and its batches and offset commits with an old epoch at the
leaders.

What Kafka Streams 2.x does and this mixin follows (``StreamTask.suspend``/``resume`` with EOS,
``TaskManager``): a member that learns an assignment closes the task's producer if it lost the
task, and creates a new producer (``initTransactions``) if it got the task, even one it kept (an
eager rebalance suspends every task, and resuming an EOS task creates its producer anew). A member
that learned it left the group, or whose producer was fenced, closes the task (``onPartitionsLost``)
before it rejoins. A member that does not know it left keeps running the task with its producer (a
zombie) until it learns it.

TxnOffsetCommit carries the group id only (``StreamsProducer`` downgrades the consumer's group
metadata for EOS v1; before 2.5 ``sendOffsetsToTransaction`` took only the group id), so KIP-447's
generation check does not apply to it; ``per_partition_group_metadata`` is the what-if of an
application that sends its consumer's generation and member id (``kafka.eos_pipeline`` sends them
for both deployments).

Not modelled: cooperative rebalancing (Streams 2.4+, KIP-429), under which a task the member keeps is
not suspended and keeps its producer; several tasks per member.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..group.member import Member
from ..group.metadata import NO_GENERATION, NO_MEMBER_ID
from ..producer import transactional as tx
from ..protocol import Deployment
from ..state import TXN_CLOSED, TXN_INIT, TxnProducer


def closed(p: TxnProducer) -> TxnProducer:
    """The member closes the task's producer: nothing queued or in flight is read again (its requests
    already sent may still arrive), no producer id; the ghosts carry on."""
    return tx.restart(p)._replace(phase=TXN_CLOSED)


class EosAlpha:
    """Per-partition producers in ``kafka.eos``'s group (see the module doc); mixed into ``EosMachine``."""

    members: int
    n_partitions: int
    protocol: Any
    #: with a group: one producer per input partition (the task's), re-created by each owner
    alpha: bool = False
    _alpha_slots: tuple[tuple[int, int], ...] = ()

    def _alpha_setup(self, bounds: Mapping[str, int]) -> None:
        """Whether the group runs per-partition producers (before the parts are compiled)."""
        self.alpha = bool(bounds.get("members", 0)) and self.protocol.deployment == Deployment.PER_PARTITION

    def _alpha_compiled(self, producers: int) -> None:
        """The places in a state of the copies of the task's coordinator metadata (after the parts are
        compiled and the idle rules pruned: a state leaves out the slots no rule writes)."""
        if self.alpha:
            spans = []
            for name in ("txn", "txn_log"):
                first = self.slot_place(self.slot(name))  # type: ignore[attr-defined]
                if first is not None:  # written, so all its copies are in the state, side by side
                    spans.append((first, first + producers))
            self._alpha_slots = tuple(spans)

    def initial_producer(self, i: int, owns: bool) -> TxnProducer:
        """Member ``i``'s producer at the start: only the task's owner creates one (and initialises it
        with its first step); with per-thread producers every member has its own."""
        p = tx.new_producer(self.n_partitions)
        return p._replace(phase=TXN_CLOSED) if self.alpha and not owns else p

    def alpha_on_assignment(self, producer: TxnProducer, owns: bool) -> TxnProducer:
        """The producer after the member learned its assignment (between transactions)."""
        if not self.alpha:
            return producer._replace(position=-1)
        # a suspended EOS task closes its producer; an assigned (or resumed) one creates a new one
        return tx.restart(producer) if owns else closed(producer)

    def alpha_on_rejoin(self, producer: TxnProducer, fenced: bool) -> TxnProducer:
        """The producer after the member rejoined: per-partition, the lost task's producer is closed."""
        if self.alpha:
            return closed(producer)
        return tx.restart(producer) if fenced else producer._replace(position=-1)

    def alpha_rejoin_fields(self, fields: Any, fenced: bool) -> Any:
        """``alpha_on_rejoin`` on what Rejoin reads of the producer (``eos_group.RejoinFields``): a closed or
        restarted producer is a new instance, on new connections (``tx.restart``; the projection's put
        restarts the producer when they change), position unknown."""
        if self.alpha or fenced:
            return fields._replace(phase=TXN_CLOSED if self.alpha else TXN_INIT, position=-1,
                                   connections=tuple(c + 1 for c in fields.connections))
        return fields._replace(position=-1)

    def alpha_commit_metadata(self, member: Member, metadata: tuple[int, int]) -> tuple[int, int]:
        """The (generation, member id) a TxnOffsetCommit carries: none from a Streams EOS-v1 task."""
        if self.alpha and not self.protocol.per_partition_group_metadata:
            return NO_GENERATION, NO_MEMBER_ID
        return metadata

    def successors(self, state: tuple) -> list[tuple[tuple, tuple]]:
        # ``Composed.successors`` without its frame (once per state; no class between here and
        # ``Composed`` overrides it)
        out: list[tuple[tuple, tuple]] = self._plan.successors(state)  # type: ignore[attr-defined]
        if not self.alpha:
            return out
        return [(step, self._one_transactional_id(state, nxt)) for step, nxt in out]

    def _one_transactional_id(self, before: tuple, after: tuple) -> tuple:
        """Every instance's copy of the task's metadata becomes the one a step wrote (a rule writes the
        copy of the instance it runs for; a failover reloads every copy from copies that agree)."""
        fixed: list[Any] | None = None
        for lo, hi in self._alpha_slots:
            new = next((after[k] for k in range(lo, hi) if after[k] != before[k]), None)
            if new is None or all(after[k] == new for k in range(lo, hi)):
                continue
            if fixed is None:
                fixed = list(after)
            fixed[lo:hi] = [new] * (hi - lo)
        return after if fixed is None else tuple(fixed)


__all__ = ["EosAlpha", "closed"]
