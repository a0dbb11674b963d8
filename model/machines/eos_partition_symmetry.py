"""Symmetry of ``kafka.eos`` over its output partitions: the transactional output partitions are
interchangeable identities, the scalarset ``partition`` (the leaders ``leader[p]`` and, with
``readers``, the read_committed consumers ``reader[p]``, one per partition, move together).

Why renaming output partitions maps every run to a run:

- the records do not depend on the partition: every transaction of a producer writes ``batches``
  records to every output partition (``producer.transactional.begin_transaction``), a
  partition's record ``r`` is the producer's ``r``-th record sent to that partition (its
  transaction is ``r // batches``), and a data entry's value, ``properties.record_value(t, r)``,
  does not name the partition; so the assignment of records to partitions is itself symmetric and
  needs no renaming;
- every partition starts alike (an empty leader, a fresh per-partition client state in each
  producer, a reader at position 0) and every rule over partitions is one step per partition
  (HandleProduce, WriteTxnMarker, DeleteRecords, ExpireProducerIds, TxnLeaderFailover, Fetch) or
  one binding per producer yielding one step per partition (AddPartitionsToTxn, Drain,
  DeliveryTimeout, ExpireRetriedBatch, RequestTimeout): a nondeterministic choice, so the order of a state's
  successors in the list is no part of the run;
- the bounds are global (fault budgets, epochs, ticks), none per partition.

What names an output partition's index besides its actors (each renamed here):

- a producer's per-partition client state ``parts`` (a tuple by partition) and its ``added`` bit
  set (also the zombie's, an older instance of the same producer);
- the coordinator's metadata ``txn[t].partitions`` and the last ``__transaction_state`` record
  ``txn_log[t].partitions`` (sorted, as Kafka keeps ``topicPartitions``);
- the produce requests and responses in flight (``Routed.partition``) and a failed-over
  coordinator's markers still in flight (``TxnMarker.partition``).

The group's ``__consumer_offsets`` partition (``properties.OFFSETS_PARTITION``) is not an output
partition and keeps its number; the group's own partitions are input partitions (``group``,
``member``, ``zombie_offsets`` name those only); the idempotent producers' partition has parts of its
own. Every property reads the partitions alike (over all of them, per partition, or a partition
against the coordinator's ``partitions``), so each keeps its value under a renaming:
``tests/test_eos_partition_symmetry.py`` checks that renaming commutes with every step and keeps
every property on sampled reachable states of several configurations, and that the reduced
exploration keeps one state per orbit.

With producers of different transactional ids also interchangeable (``eos_symmetry``), the
canonical form is the least over every partition renaming of the producers' form
(``checker.compose``'s ``_Plan.product``): one state per orbit of both.
"""

from __future__ import annotations

from typing import Any

from eoscheck.checker.symmetry import rename_mask

from ..state import Routed, TxnLogValue, TxnMetadata, TxnProducer
from ..transactions.markers import TxnMarker

Permutation = tuple[int, ...]

#: the scalarset's name
PARTITION = "partition"


def _renamed(partitions: tuple[int, ...], perm: Permutation) -> tuple[int, ...]:
    # the group's __consumer_offsets partition (properties.OFFSETS_PARTITION) is above every output
    # partition and keeps its number
    return tuple(sorted(perm[p] if p < len(perm) else p for p in partitions))


def rename_producer(p: Any, perm: Permutation) -> Any:
    """Partition ``i``'s client state moves to ``perm[i]``, and so does its bit in ``added`` (a
    zombie slot holding no instance, ``()``, stays)."""
    if not p:
        return p
    assert isinstance(p, TxnProducer)
    parts: list[Any] = list(p.parts)
    for i, part in enumerate(p.parts):
        parts[perm[i]] = part
    return p._replace(parts=tuple(parts), added=rename_mask(p.added, perm))


def rename_txn(meta: TxnMetadata, perm: Permutation) -> TxnMetadata:
    """The transaction's partitions, renamed and sorted."""
    return meta._replace(partitions=_renamed(meta.partitions, perm)) if meta.partitions else meta


def rename_txn_log(value: TxnLogValue, perm: Permutation) -> TxnLogValue:
    return value._replace(partitions=_renamed(value.partitions, perm)) if value.partitions else value


def rename_routed(messages: tuple[Routed, ...], perm: Permutation) -> tuple[Routed, ...]:
    """Produce requests and responses name their partition in the routing only."""
    return tuple(m._replace(partition=perm[m.partition]) for m in messages)


def rename_markers(markers: tuple[TxnMarker, ...], perm: Permutation) -> tuple[TxnMarker, ...]:
    """A failed-over coordinator's markers in flight: an output partition's marker goes to the renamed one."""
    return tuple(m._replace(partition=perm[m.partition]) if m.partition < len(perm) else m for m in markers)


__all__ = ["PARTITION", "rename_markers", "rename_producer", "rename_routed", "rename_txn", "rename_txn_log"]
