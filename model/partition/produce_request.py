"""ReplicaManager's checks of a produce request before any partition's log sees it: which replica the
broker holds for a partition (``getPartitionOrError``), and the refusal of transactional batches from
several producers in one request (KIP-890 part 1).

No machine of kafka.eos sends a request to a partition its broker does not host, or batches of two
producers in one request; the conformance interface reads these rules (``model/api/leader.py``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from ..errors import Errors

#: which ReplicaManager refuses a request with transactional batches of several producers: "none" (before 3.6.0),
#: "producer-id" (KAFKA-14916, 3.6.0 .. 3.7.x), "producer-id-and-epoch" (KAFKA-15987, 3.8.0 on)
ProducePidCheck = Literal["none", "producer-id", "producer-id-and-epoch"]

#: a partition's replica on this broker as ``ReplicaManager.getPartition`` sees it
Replica = Literal["leader", "follower", "none"]
REPLICAS: tuple[Replica, ...] = ("leader", "follower", "none")


def partition_error(replica: Replica, in_metadata_cache: bool, *, needs_leader: bool) -> Errors:
    """``getPartitionOrError`` (2.8.0 .. 4.2.0-rc1 alike): a partition this broker holds no replica of is
    NOT_LEADER_OR_FOLLOWER when the metadata cache knows it (the client must refresh its metadata) and
    UNKNOWN_TOPIC_OR_PARTITION otherwise. A caller that needs the leader's log (the append, the start of a
    verification: ``Partition.leaderLogIfLocal``) refuses a follower with NOT_LEADER_OR_FOLLOWER; DescribeProducers
    (``activeProducerState``) answers leaders and followers alike."""
    if replica == "none":
        return Errors.NOT_LEADER_OR_FOLLOWER if in_metadata_cache else Errors.UNKNOWN_TOPIC_OR_PARTITION
    if replica == "follower" and needs_leader:
        return Errors.NOT_LEADER_OR_FOLLOWER
    return Errors.NONE


def several_producers(batches: Iterable[tuple[int, int]], rule: ProducePidCheck, *, verifying: bool) -> bool:
    """Whether ReplicaManager throws InvalidPidMappingException ("Transactional records contained more than one
    producer ID") for a request whose transactional batches have these (producer id, epoch) pairs. 3.6.0 .. 3.7.x
    collect producer ids, and only while the request is verified (a transactional id and
    transaction.partition.verification.enable: ``partitionEntriesForVerification``); from 3.8.0
    ``handleProduceAppend`` collects the pairs for every request, so one producer at two epochs is refused too."""
    pairs = set(batches)
    if rule == "none":
        return False
    if rule == "producer-id":
        return verifying and len({pid for pid, _ in pairs}) > 1
    return len(pairs) > 1


def started_before_check(rule: ProducePidCheck) -> bool:
    """Whether each partition's verification entry is started before the several-producer check throws: 3.6.0 ..
    3.7.x call ``maybeStartTransactionVerification`` for every partition in the loop that also collects the ids (the
    entries stay, though AddPartitionsToTxnManager is never asked); from 3.8.0 the check comes first."""
    return rule == "producer-id"
