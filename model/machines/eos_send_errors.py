"""``kafka.eos``'s failed send() calls (``send_errors`` > 0), a mixin of ``EosMachine``.

``KafkaProducer.doSend`` checks a record before it reaches the accumulator (its serialized size
against max.request.size and buffer.memory, the serializers, the partitioner); an ApiException there
is caught and reported through the returned future only. ``commitTransaction`` promises that a
transaction with a failed send() is not committed, but before 3.2.0 nothing told the transaction
manager: the transaction went on without the record and committed (KAFKA-9279, "silent data loss";
fixed in 3.2.0 by 000ba031c3d, which calls ``maybeTransitionToErrorState`` there, so the transaction
gets an abortable error and commitTransaction throws). ``SendFails`` is such a send() of the open
transaction (``transactional.send_failed``); the application is assumed to commit without looking at
the futures, as a callback-free application does. The switch is ``client_send_error_aborts``.
"""

from __future__ import annotations

from typing import Any

from eoscheck.checker.compose import precondition, rule

from ..producer import transactional as tx
from ..state import TXN_IN_TXN, TxnProducer
from .optional_budget import OptionalBudget, OptionalBudgets


def _senders(machine: Any) -> range:
    return range(machine.n_producers) if machine.optional_bound("send_errors") else range(0)


class SendErrors(OptionalBudgets):
    """send() calls that fail before the accumulator (see the module doc)."""

    n_producers: int
    n_partitions: int
    protocol: Any

    send_errors = OptionalBudget("send_errors", actions=("SendFails",),
                                 doc="send() calls that failed in the application thread")

    # a gate on the producer alone: only an open transaction's queued records can fail to be sent
    @precondition(lambda self, producer: producer.phase == TXN_IN_TXN)
    @rule("SendFails", params={"t": _senders}, reads=("producer[t]",), writes=("producer[t]",), results=("p",),
          spends="send_errors")
    def send_fails(self, producer: TxnProducer) -> Any:
        """A send() of the open transaction fails before the accumulator; before 3.2.0 the transaction
        goes on without the record."""
        moves = []
        for p in range(self.n_partitions):
            client = tx.send_failed(producer, p, aborts=self.protocol.client_send_error_aborts)
            if client is not None:
                moves.append({"producer": client, "p": p})
        return moves
