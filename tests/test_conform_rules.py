"""The rule changes the conformance vectors asked for (issue 13, items 2 and 3), each against the
Kafka behaviour it models."""

from __future__ import annotations

from eoscheck.model.coordinator.handler import CoordinatorConfig, handle_init_producer_id
from eoscheck.model.errors import Errors
from eoscheck.model.registry import MODELS
from eoscheck.model.state import TxnMetadata
from eoscheck.model.transactions.codes import TxnState

E, S = Errors, TxnState
SHIPPED = CoordinatorConfig(kip360=True, shipped=True, max_epoch=32767, persist_last_epoch=False,
                            persist_prev_producer_id=False)


def meta(state: S = S.EMPTY, pid: int = 10, epoch: int = 1, last: int = -1, **kw) -> TxnMetadata:
    return TxnMetadata(True, pid, kw.pop("prev", pid), epoch, last, int(state), kw.pop("failed", False), **kw)


def test_only_one_of_producer_id_and_epoch_is_invalid_request_before_anything_else():
    for req in ((10, -1), (-1, 2)):
        assert handle_init_producer_id(meta(), True, *req, 99, SHIPPED).error == E.INVALID_REQUEST


def test_init_pid_machine_error_answers_carry_no_ids():
    md = next(m for m in MODELS if m.name == "kafka.init_producer_id")
    machine = md.machine("kafka-shipped", bounds={"clients": 2, "abortable_errors": 1, "transactions": 1})
    seen, frontier, errors = set(), list(machine.init_states()), 0
    while frontier and len(seen) < 3000:
        s = frontier.pop()
        if s in seen:
            continue
        seen.add(s)
        for r in s.responses:
            if r.error != E.NONE:
                errors += 1
                assert (r.producer_id, r.epoch) == (-1, -1)
        frontier.extend(t for _, t in machine.successors(s))
    assert errors > 0  # the walk did meet error answers
