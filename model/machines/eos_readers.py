"""``kafka.eos``'s read_committed consumers: with ``readers`` = 1, one downstream consumer per output
partition fetches up to the leader's last stable offset and skips aborted data
(``model.partition.fetch``), and NoAbortedRead checks what those consumers actually delivered.

A mixin of ``EosMachine``; with ``readers`` = 0 the ``reader`` actors have no slots, ``Fetch`` no
bindings, and NoAbortedRead reads the leaders' LSO as before.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from eoscheck.checker.compose import Actors, rule

from ..partition.fetch import read_committed_fetch
from ..state import TxnPartitionState

#: (next fetch position, log offsets of the data records delivered so far)
Reader = tuple[int, tuple[int, ...]]


def _reading(machine: Any) -> range:
    return range(machine.n_readers)


def _show_reader(r: Reader) -> dict[str, Any]:
    return {"position": r[0], "delivered": list(r[1])}


class EosReaders:
    """The read_committed consumers of ``kafka.eos``; mixed into ``EosMachine``."""

    n_partitions: int
    n_readers: int

    # one per output partition: renamed with the leaders (``eos_partition_symmetry``)
    reader = Actors(count="reader_count", init=(0, ()), show=_show_reader, symmetric="partition",
                    doc="a read_committed consumer of each output partition: next position, offsets delivered")

    def _readers_setup(self, bounds: Mapping[str, int]) -> dict[str, int]:
        self.n_readers = self.n_partitions if bounds.get("readers", 0) else 0
        return {"reader_count": self.n_readers}

    @rule("Fetch", params={"p": _reading}, reads=("reader[p]", "leader[p]"), writes=("reader[p]",),
          results=("position", "delivered"))
    def fetch(self, reader: Reader, leader: TxnPartitionState) -> Any:
        """The consumer of partition ``p`` fetches up to the LSO and delivers the records of transactions
        not aborted below it."""
        position, delivered = read_committed_fetch(leader, reader[0])
        if position == reader[0] and not delivered:
            return None
        return {"reader": (position, reader[1] + delivered), "position": position, "delivered": len(delivered)}


__all__ = ["EosReaders", "Reader"]
