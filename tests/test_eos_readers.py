"""kafka.eos's read_committed consumers (model/partition/fetch.py, model/machines/eos_readers.py)."""

from __future__ import annotations

from eoscheck.checker.compose.testing import compare_memo
from eoscheck.model.machines.eos import EosMachine, machine
from eoscheck.model.machines.eos_model import BOUNDS
from eoscheck.model.partition.fetch import read_committed_fetch
from eoscheck.model.partition.producer_state import empty_entry
from eoscheck.model.properties import eos_no_aborted_delivery
from eoscheck.model.protocol import VARIANTS
from eoscheck.model.state import TxnPartitionState
from eoscheck.model.transactions.log import EntryKind, LogEntry

D, C, A = int(EntryKind.TXN_DATA), int(EntryKind.COMMIT), int(EntryKind.ABORT)


def _leader(log: list[LogEntry], open_at: dict[int, int] | None = None, start: int = 0) -> TxnPartitionState:
    producers = tuple(empty_entry(pid)._replace(current_txn_first_offset=off) for pid, off in (open_at or {}).items())
    return TxnPartitionState(tuple(log), start, producers)


def test_fetch_stops_at_the_lso_and_skips_aborted_data() -> None:
    log = [LogEntry(1, 0, D, 10), LogEntry(2, 0, D, 20), LogEntry(2, 0, A, 0), LogEntry(1, 0, C, 0),
           LogEntry(3, 0, D, 30)]
    leader = _leader(log, {3: 4})  # producer 3's transaction is open at offset 4: the LSO
    assert read_committed_fetch(leader, 0) == (4, (0,))
    assert read_committed_fetch(leader, 4) == (4, ())
    # from the log start offset, whatever the consumer's position
    assert read_committed_fetch(_leader(log, {3: 4}, start=1), 0) == (4, ())


def test_an_lso_past_an_open_transaction_delivers_its_data_and_the_abort_shows_it() -> None:
    log = [LogEntry(1, 0, D, 10)]
    lost_state = _leader(log)  # the leader lost the producer's state: the LSO is the log end
    position, delivered = read_committed_fetch(lost_state, 0)
    assert (position, delivered) == (1, (0,))
    aborted = _leader(log + [LogEntry(1, 0, A, 0)])
    assert not eos_no_aborted_delivery((aborted,), ((position, delivered),))
    committed = _leader(log + [LogEntry(1, 0, C, 0)])
    assert eos_no_aborted_delivery((committed,), ((position, delivered),))


def _bounds(**changes: int) -> dict[str, int]:
    return {**{k: b.default for k, b in BOUNDS.items()}, **changes}


def test_readers_bound_switches_the_consumers_on() -> None:
    assert "Fetch" not in machine("kafka-3.0-3.5").actions
    m = machine("kafka-3.0-3.5", readers=1, partitions=2)
    assert "Fetch" in m.actions
    init = next(iter(m.init_states()))
    assert m.view(init).reader == ((0, ()), (0, ()))
    plain = machine("kafka-3.0-3.5")
    assert not any(k.startswith("reader") for k in plain.fields(next(iter(plain.init_states()))))


def test_memoised_and_unmemoised_agree_with_readers() -> None:
    compare_memo(lambda memoize: EosMachine(VARIANTS["kafka-1.0.2-2.3"].protocol,
                                            _bounds(readers=1, delete_records=1, txn_timeouts=1),
                                            memoize=memoize), 3000)


def test_an_abort_marker_above_the_lso_hides_the_data_below_it() -> None:
    # producer 1's transaction (offset 0) was aborted after producer 2's began (offset 1): the LSO is 1,
    # the ABORT marker at 2. Kafka's aborted-transaction index entry for producer 1 spans offsets 0-2,
    # which overlaps the fetch range [0, 1), so the consumer skips offset 0 (TransactionIndex.
    # collectAbortedTxns: lastOffset >= fetchOffset and firstOffset < upperBoundOffset)
    log = [LogEntry(1, 0, D, 10), LogEntry(2, 0, D, 20), LogEntry(1, 1, A, 0)]
    leader = _leader(log, {2: 1})
    assert read_committed_fetch(leader, 0) == (1, ())
    committed = _leader(log[:2] + [LogEntry(1, 0, C, 0)], {2: 1})
    assert read_committed_fetch(committed, 0) == (1, (0,))
