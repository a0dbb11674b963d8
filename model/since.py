"""A Kafka version as a sortable tuple, and the first version with something, with its evidence: shared by the
conformance profiles (``api.protocol``) and the producer client's transition tables (``producer.txn_calls``)."""

from __future__ import annotations

from typing import NamedTuple

#: a Kafka version as a sortable tuple; a trunk snapshot between two releases sits after the earlier one's
#: patch releases (3.9.50: trunk after the 3.9 branch, before 4.0.0)
Version = tuple[int, ...]


class Since(NamedTuple):
    """The first Kafka version with a feature, and the evidence (a tag of apache/kafka and what it shows)."""

    first: Version
    evidence: str
