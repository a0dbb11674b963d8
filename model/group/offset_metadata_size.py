"""An offset commit's metadata size (``offset.metadata.max.bytes``, default 4096 since 0.8.2).

The classic coordinator (``GroupMetadataManager.storeOffsets``, 2.0.0 .. 4.0.x; read at 2.0.0, 1eb7644 and 3.9.1
l.468-475) validates the group first (``doTxnCommitOffsets``), then drops every partition whose metadata is longer than
the limit (``validateOffsetMetadataLength``: a null metadata passes; the length is the string's) from the pending
offsets and the record; those are answered OFFSET_METADATA_TOO_LARGE and the others by the append; when none is left,
every partition is answered OFFSET_METADATA_TOO_LARGE and nothing is appended or left pending. The new coordinator
(``OffsetMetadataManager.commitTransactionalOffset``, ``isMetadataInvalid``; 3.7.0 .. 4.2.0-rc1) answers the same per
partition and writes no record for such a partition. A transactional offset commit is refused alike
(GroupCoordinatorTest testTxnOffsetMetadataTooLarge, KAFKA-15784 e4249b69bda, 3.8.0; the check itself predates 2.0).

No machine reads this module (kafka.eos's commits carry no metadata); the conformance interface does.
"""

from __future__ import annotations

#: ``GroupCoordinatorConfig.OFFSET_METADATA_MAX_SIZE_DEFAULT`` (``offset.metadata.max.bytes``)
OFFSET_METADATA_MAX_SIZE_DEFAULT = 4096


def metadata_too_large(length: int | None, max_size: int = OFFSET_METADATA_MAX_SIZE_DEFAULT) -> bool:
    """``length``: the metadata string's length (None: no metadata, which always passes)."""
    return length is not None and length > max_size


def oversized_partitions(lengths: dict[int, int | None], max_size: int = OFFSET_METADATA_MAX_SIZE_DEFAULT) -> frozenset[int]:
    """The partitions of a commit whose metadata is refused (OFFSET_METADATA_TOO_LARGE)."""
    return frozenset(p for p, n in lengths.items() if metadata_too_large(n, max_size))
