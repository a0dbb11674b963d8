"""KafkaApis' checks in front of the coordinators and the log (``model/kafka_apis.py``), with the
metadata cache given as topic -> number of partitions."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

from ..kafka_apis import (
    CLUSTER,
    DENY_ALL,
    MAGIC_V2,
    Denied,
    add_partitions_authorization,
    add_partitions_errors,
    marker_errors,
    marker_partition_error,
    txn_offset_commit_split,
    write_txn_markers_authorized,
)


def known_in(cache: Mapping[str, int]) -> Callable[[str], bool]:
    """``metadataCache.contains(tp)``: the topic is known and the partition index is one of its partitions
    (a negative index never is)."""
    def known(tp: str) -> bool:
        # 'topic--1' is partition -1 of 'topic'
        m = re.fullmatch(r"(.+?)-(-?\d+)", tp)
        return m is not None and m.group(1) in cache and 0 <= int(m.group(2)) < cache[m.group(1)]
    return known


__all__ = ["CLUSTER", "DENY_ALL", "MAGIC_V2", "Denied", "add_partitions_authorization", "add_partitions_errors", "known_in",
           "marker_errors", "marker_partition_error", "txn_offset_commit_split", "write_txn_markers_authorized"]
