"""Sequence arithmetic shared by the broker and the client (wrap-around at ``max_seq``).

``in_sequence`` is ``ProducerAppendInfo.inSequence``; ``increment_sequence`` is
``DefaultRecordBatch.incrementSequence``. Real Kafka has max_seq = Integer.MAX_VALUE; explicit
runs use a small max_seq so that the wrap is reachable.
"""

from __future__ import annotations

from eoscheck.checker.ops import Ops, Term

SEQ_BITS = 32


def in_sequence(ops: Ops, *, max_seq: int, last_seq: Term, next_seq: Term) -> Term:
    """next == last + 1, or next == 0 right after max_seq. (Kafka computes last + 1 in 64 bits;
    guarding with last < max_seq gives the same answer without overflow at any width.)"""
    top = ops.const(max_seq, SEQ_BITS)
    return ops.or_(ops.and_(ops.lt(last_seq, top), ops.eq(next_seq, ops.add(last_seq, ops.const(1, SEQ_BITS)))),
                   ops.and_(ops.eq(next_seq, ops.const(0, SEQ_BITS)), ops.eq(last_seq, top)))


def increment_sequence(ops: Ops, *, max_seq: int, seq: Term, inc: Term) -> Term:
    """seq + inc, wrapping past max_seq to 0: if seq > max_seq - inc then inc - (max_seq - seq) - 1."""
    top = ops.const(max_seq, SEQ_BITS)
    one = ops.const(1, SEQ_BITS)
    wraps = ops.gt(seq, ops.sub(top, inc))
    return ops.ite(wraps, ops.sub(ops.sub(inc, ops.sub(top, seq)), one), ops.add(seq, inc))
