"""The transactional producer building its TxnOffsetCommit at the version the group coordinator supports, with the
consumer's group metadata (member id, generation, group instance id) that KIP-447's ``sendOffsetsToTransaction(offsets,
ConsumerGroupMetadata)`` passes (TxnOffsetCommit v3, 2.5.0): ``TxnOffsetCommitRequest.Builder.build(version)``.

A broker whose TxnOffsetCommit stops below v3 (before 2.5) cannot take the metadata. KAFKA-9776 (7f640f13b4d, first tag
2.6.0) made the builder throw UnsupportedVersionException ("Broker unexpectedly doesn't support group metadata commit
API") unless the producer's internal ``internal.auto.downgrade.txn.commit`` (false by default; Kafka Streams set it) let
it drop the metadata and send v2; KAFKA-12574 (cc6f4c49a9d, first tag 3.0.0) removed the downgrade, so it always throws
("... minimum supported request version is 3 which requires brokers to be on version 2.5 or above"; the same at 1eb7644,
4.0.0 and 4.2.0-rc1). 2.5.x had no check: its generated TxnOffsetCommitRequestData holds the three fields from v3 (not
ignorable), and what its serializer does with them at v2 is not read here (``unchecked``). The exception comes back as the
request's version mismatch, which ``TxnRequestHandler.onComplete`` makes a fatal error (``fatalError``) failing
sendOffsetsToTransaction's result with it (1eb7644 TransactionManager l.1249-1250; ``txn_responses``' UNSUPPORTED_VERSION
rule). The consumer's group-metadata-less commit (``sendOffsetsToTransaction(offsets, groupId)``: no metadata set) is
sent at any version.

No machine reads this module (kafka.eos's commits carry no API versions); the conformance interface does.
"""

from __future__ import annotations

from typing import Literal

#: how the builder treats the group metadata below v3: "unchecked" (2.0 .. 2.5.x: no check), "config" (2.6.0 .. 2.8.x:
#: refused unless internal.auto.downgrade.txn.commit), "refuse" (3.0.0 on)
GroupMetadataCheck = Literal["unchecked", "config", "refuse"]

#: the first TxnOffsetCommit version with GenerationId, MemberId and GroupInstanceId (KIP-447)
GROUP_METADATA_VERSION = 3

#: what the builder does: "send" the request as it is, "downgrade" (send it without the group metadata), "refuse"
#: (UnsupportedVersionException, the handler's fatal error), "unchecked" (a version whose outcome is not read)
BuildOutcome = Literal["send", "downgrade", "refuse", "unchecked"]


def build(version: int, *, group_metadata_set: bool, check: GroupMetadataCheck, auto_downgrade: bool) -> BuildOutcome:
    """``TxnOffsetCommitRequest.Builder.build(version)`` at the coordinator's highest version ``version``."""
    if version >= GROUP_METADATA_VERSION or not group_metadata_set:
        return "send"
    if check == "unchecked":
        return "unchecked"
    if check == "config" and auto_downgrade:
        return "downgrade"
    return "refuse"
