"""Producer-id allocation in blocks (``ProducerIdManager``): each broker claims a contiguous block
(1000 ids) from a shared counter - a conditional update of a znode before 3.0
(``ZkProducerIdManager``), a ``ProducerIdsRecord`` written by the controller after
(``RPCProducerIdManager`` / ``ProducerIdControlManager``) - and hands out its ids in order.

Blocks are granted in request order, so ids are unique across brokers and never reused. The
KRaft broker asks for its next block asynchronously: when its block is used up and the next one
has not arrived, ``generateProducerId`` fails with COORDINATOR_LOAD_IN_PROGRESS (retriable) and
the InitProducerId fails with it. The machines keep one allocator counter (``next_producer_id``):
a single broker with a block that never runs out.
"""

from __future__ import annotations

from typing import NamedTuple

from ..errors import Errors

BLOCK_SIZE = 1000


class BrokerBlock(NamedTuple):
    broker: int
    next_id: int
    end: int  # exclusive


class ProducerIdBlocks(NamedTuple):
    #: the first id of the next block the controller (or the znode) grants
    next_block_start: int
    #: each broker's current block, sorted by broker
    blocks: tuple[BrokerBlock, ...]
    block_size: int = BLOCK_SIZE
    #: KRaft brokers whose AllocateProducerIds request stays in flight for ever (``after_failed_block_request``): they
    #: never ask again, so no block reaches them
    stuck: tuple[int, ...] = ()
    #: each KRaft broker's next block, granted while its current block still had ids (``nextProducerIdBlock``: the
    #: broker asks at 90% of a block, so the answer usually arrives before the block is used up)
    waiting: tuple[BrokerBlock, ...] = ()


class Generated(NamedTuple):
    error: int
    producer_id: int  # -1 on error


def _block(state: ProducerIdBlocks, broker: int) -> BrokerBlock | None:
    return next((b for b in state.blocks if b.broker == broker), None)


def _with(state: ProducerIdBlocks, block: BrokerBlock) -> ProducerIdBlocks:
    rest = [b for b in state.blocks if b.broker != block.broker]
    return state._replace(blocks=tuple(sorted(rest + [block])))


#: producer ids are Java longs
MAX_PRODUCER_ID = 2**63 - 1


class ProducerIdsExhausted(Exception):
    """No further block fits below ``MAX_PRODUCER_ID`` (``KafkaException("Have exhausted all
    producerIds.")`` in ``ZkProducerIdManager``; the controller refuses the same way)."""


def block_accepted(state: ProducerIdBlocks, broker: int, start: int, length: int) -> bool:
    """The KRaft broker's sanity check of a block the controller sends
    (``RPCProducerIdManager.handleAllocateProducerIdsResponse``, 3.0+): a block starting below the
    current one's last id, or with a negative start or length, or passing ``Long.MaxValue``, is
    refused and the broker keeps no next block (its ``generateProducerId`` keeps failing with
    COORDINATOR_LOAD_IN_PROGRESS until a valid block arrives). The model's controller never sends
    one; this is the rule for a conformance step that does."""
    current = _block(state, broker)
    last = current.end - 1 if current is not None else -1
    return not (start < last or start < 0 or length < 0 or start > MAX_PRODUCER_ID - length)


def after_failed_block_request(state: ProducerIdBlocks, broker: int, *, bodyless: bool,
                               retries_bodyless: bool) -> ProducerIdBlocks:
    """The KRaft broker's ``RPCProducerIdManager`` reading a failed AllocateProducerIds answer. An error code (or a
    block the sanity check refuses) sets the retry back-off and clears requestInFlight, so a ``generateProducerId``
    after the back-off asks again (3.x Scala and 4.x Java alike). An answer without a body (an authentication
    exception, a version mismatch, no response) does the same from KAFKA-19990 (``retries_bodyless``, 4.2.0-rc0);
    before, ``onComplete`` dropped it (4.0.0 .. 4.1.1: not an AllocateProducerIdsResponse; 3.9.1: the cast body is
    null and the handler throws) and requestInFlight stayed set: the broker is stuck, every ``generateProducerId`` past
    its block answers COORDINATOR_LOAD_IN_PROGRESS."""
    if not bodyless or retries_bodyless or broker in state.stuck:
        return state
    return state._replace(stuck=tuple(sorted((*state.stuck, broker))))


def grant_block(state: ProducerIdBlocks, broker: int) -> ProducerIdBlocks:
    """The controller (or the znode update) grants ``broker`` the next block. A block that arrives while the
    broker's current one still has ids waits as its next block (``RPCProducerIdManager.
    handleAllocateProducerIdsResponse`` sets ``nextProducerIdBlock``; ``generateProducerId`` takes it when the current
    one is used up; read at 1eb7644 and 4.2.0-rc1), so no id of the current block is skipped."""
    start = state.next_block_start
    if start > MAX_PRODUCER_ID - state.block_size + 1:
        raise ProducerIdsExhausted(f"a block of {state.block_size} ids from {start} passes the largest producer id")
    granted = BrokerBlock(broker, start, start + state.block_size)
    state = state._replace(next_block_start=start + state.block_size)
    current = _block(state, broker)
    if current is not None and current.next_id < current.end:
        rest = [b for b in state.waiting if b.broker != broker]
        return state._replace(waiting=tuple(sorted(rest + [granted])))
    return _with(state, granted)


def generate_producer_id(state: ProducerIdBlocks, broker: int, *, synchronous: bool = True) -> tuple[Generated, ProducerIdBlocks]:
    """``generateProducerId`` on ``broker``. ``synchronous`` (ZooKeeper mode): an exhausted or
    missing block is replaced within the call; otherwise (KRaft) the call fails with
    COORDINATOR_LOAD_IN_PROGRESS until ``grant_block`` delivers the next block."""
    block = _block(state, broker)
    waiting = next((b for b in state.waiting if b.broker == broker), None)
    if (block is None or block.next_id >= block.end) and waiting is not None:
        state = _with(state._replace(waiting=tuple(b for b in state.waiting if b.broker != broker)), waiting)
        block = waiting
    if block is None or block.next_id >= block.end:
        if not synchronous:
            return Generated(int(Errors.COORDINATOR_LOAD_IN_PROGRESS), -1), state
        state = grant_block(state, broker)
        block = _block(state, broker)
        assert block is not None
    return Generated(int(Errors.NONE), block.next_id), _with(state, block._replace(next_id=block.next_id + 1))
