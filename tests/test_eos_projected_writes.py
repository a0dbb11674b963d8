"""kafka.eos's HandleProduceResponse on a written projection (perf22b): it reads and writes ``ProduceFields``
of its producer, which ``checker.compose`` puts back into the whole value. The projection must hold every
field ``tx.on_produce_response`` reads and writes: on every (producer, answer, clock) reachable in a
configuration with lost responses, timeouts and a restart, the function on the projection, put back, must
give what it gives on the whole producer, for every error the answer may carry. ZombieEndTxn's gate must be
false only where ``end_transaction`` does nothing."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from eoscheck.checker.compose import Projection
from eoscheck.checker.compose.testing import reachable_steps
from eoscheck.model.errors import Errors
from eoscheck.model.machines import eos
from eoscheck.model.producer import transactional as tx
from eoscheck.model.state import ProduceResponse, TxnProducer


def _outcome(call: Callable[[], Any]) -> Any:
    try:
        return call()
    except Exception as exc:  # noqa: BLE001 (an error code the client rejects: both sides must fail alike)
        return ("raised", type(exc).__name__)


def _agree(proj: Projection, fn: Callable[..., Any], p: TxnProducer, *args: Any, **kwargs: Any) -> bool:
    """``fn`` on the projection, its producer put back, equals ``fn`` on the whole producer; True when
    the answer changed the producer (the write-back was exercised)."""
    whole = _outcome(lambda: fn(p, *args, **kwargs))
    part = _outcome(lambda: fn(proj.get(p), *args, **kwargs))
    if isinstance(part, tuple) and part and isinstance(part[0], tuple) and hasattr(part[0], "_fields"):
        part = (proj.put(p, part[0]), *part[1:])  # (producer, ...) answers
    elif part is not None and hasattr(part, "_fields"):
        part = proj.put(p, part)
    assert part == whole, (fn.__name__, p, args)
    changed = whole[0] if isinstance(whole, tuple) and whole and isinstance(whole[0], TxnProducer) else whole
    return isinstance(changed, TxnProducer) and changed != p


def _views(m: Any) -> list[Any]:
    """The view of every distinct reachable state."""
    states = dict.fromkeys(s for s, _, _ in reachable_steps(m))
    return [m.view(s) for s in states]


def _reachable(m: Any) -> tuple[set[TxnProducer], set[tuple[TxnProducer, int, ProduceResponse, int]]]:
    """The producers (and zombies) of every reachable state, and each (producer, partition, answer, clock)
    a HandleProduceResponse could meet: a response in flight to that producer."""
    producers: set[TxnProducer] = set()
    answered: set[tuple[TxnProducer, int, ProduceResponse, int]] = set()
    for v in _views(m):
        producers.update(v.producer)
        producers.update(z for z in v.zombie if z)
        answered.update((v.producer[r.client], r.partition, r.message, v.now) for r in v.responses)
    return producers, answered


ERRORS = tuple(Errors)


@pytest.mark.parametrize("variant", ["kafka-3.0-3.5", "kafka-4.0"])
def test_produce_fields_hold_what_the_answer_reads_and_writes(variant: str) -> None:
    m = eos.machine(variant, transactions=1, restarts=1, lost_responses=1, produce_timeouts=1, max_ticks=2,
                    input_records=1)
    producers, answered = _reachable(m)
    assert len(producers) > 100 and len(answered) > 100
    # the switches HandleProduceResponse passes (kafka-4.0: INVALID_PRODUCER_ID_MAPPING is fatal, KAFKA-14563)
    switches = {"ipe_abortable": m.protocol.invalid_producer_epoch_abortable,
                "pid_mapping_fatal": m.protocol.client_produce_pid_mapping_fatal}
    written = {"response": 0}
    for p, partition, resp, now in answered:  # each answer with every error it might carry
        for error in ERRORS:
            written["response"] += _agree(eos._PRODUCE, tx.on_produce_response, p, partition,
                                          resp._replace(error=int(error)), now, m.cfg, **switches)
    assert all(written.values()), written


def test_zombie_end_txn_gate_is_end_txn_doing_nothing() -> None:
    m = eos.machine("kafka-3.0-3.5", transactions=1, restarts=1, lost_responses=1, produce_timeouts=1,
                    max_ticks=2, input_records=1)
    closed = opened = 0
    for v in _views(m):
        for t, z in enumerate(v.zombie):
            if not z:
                continue
            ready = tx.ready_to_commit(z, m.consume) or tx.ready_to_abort(z)
            if not ready:
                assert m.end_transaction(producer=z, txn=v.txn[t], next_producer_id=v.next_producer_id) is None
                closed += 1
            else:
                opened += 1
    assert closed and opened
