"""The shared rules for the prover: each with its argument names, bit widths and kinds.

``RuleDef.func(ops, **{arg_name: term})`` evaluates the rule; the Python-valued parameters of the
underlying function (switches such as ``kip360``, bounds such as ``max_epoch``) are already bound
to Kafka's real values and listed in ``params`` for the reader. Widths are Kafka's: epochs int16,
sequences int32, producer ids int64, coordinator epochs and generations int32, error codes, state
ids and results int16. ``returns`` names the result's components in order (a single-term rule has
one entry). Part 1's rules (InitProducerId, fencing, idempotent epoch, sequences) come first, then
part 2's (AddPartitionsToTxn, EndTxn, WriteTxnMarkers on the leader, TxnOffsetCommit).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Literal

from .coordinator.fencing import fence_producer_epoch
from .coordinator.init_producer_id import init_producer_id_decision, is_epoch_exhausted, valid_producer_id
from .group.txn_offset_commit import txn_offset_commit_error
from .partition.sequence import in_sequence, increment_sequence
from .producer.idempotent_epoch import bump_idempotent_epoch
from .transactions.add_partitions import add_partitions_error
from .transactions.end_txn import end_txn_decision
from .transactions.markers import end_txn_marker_error

EPOCH, SEQ, PID, ERR, I32 = 16, 32, 64, 16, 32
MAX_EPOCH = 2**15 - 1  # Short.MAX_VALUE
MAX_SEQ = 2**31 - 1  # Integer.MAX_VALUE

ArgKind = Literal["int", "bool"]


@dataclass(frozen=True)
class RuleDef:
    name: str
    func: Callable[..., Any]
    doc: str
    #: (arg_name, width_bits, kind) for every term argument, in signature order
    args: tuple[tuple[str, int, ArgKind], ...]
    #: (component_name, width_bits, kind) of the result, in order
    returns: tuple[tuple[str, int, ArgKind], ...] = ()
    #: the Python-valued parameters bound into ``func`` (switches and bounds)
    params: Mapping[str, Any] = field(default_factory=dict)


_INIT_ARGS: tuple[tuple[str, int, ArgKind], ...] = (
    ("meta_exists", 1, "bool"), ("meta_producer_id", PID, "int"), ("meta_prev_producer_id", PID, "int"),
    ("meta_epoch", EPOCH, "int"), ("meta_last_epoch", EPOCH, "int"), ("req_producer_id", PID, "int"),
    ("req_epoch", EPOCH, "int"), ("new_producer_id", PID, "int"),
)
_INIT_RETURNS: tuple[tuple[str, int, ArgKind], ...] = (
    ("error", ERR, "int"), ("producer_id", PID, "int"), ("epoch", EPOCH, "int"),
    ("last_epoch", EPOCH, "int"), ("prev_producer_id", PID, "int"),
)


def _init_rule(name: str, kip360: bool, shipped: bool, doc: str) -> RuleDef:
    params = {"kip360": kip360, "shipped": shipped, "max_epoch": MAX_EPOCH}
    return RuleDef(name, partial(init_producer_id_decision, kip360=kip360, shipped=shipped, max_epoch=MAX_EPOCH), doc,
                   _INIT_ARGS, _INIT_RETURNS, params)


# --- part 2: the transaction state machine and the group coordinator ---------------------------

_META: tuple[tuple[str, int, ArgKind], ...] = (
    ("meta_exists", 1, "bool"), ("meta_producer_id", PID, "int"), ("meta_epoch", EPOCH, "int"),
    ("meta_state", ERR, "int"), ("meta_pending", ERR, "int"))
_REQ: tuple[tuple[str, int, ArgKind], ...] = (("req_producer_id", PID, "int"), ("req_epoch", EPOCH, "int"))
_TOC_ARGS: tuple[tuple[str, int, ArgKind], ...] = (
    ("group_dead", 1, "bool"), ("group_empty", 1, "bool"), ("group_generation", I32, "int"),
    ("req_generation", I32, "int"), ("req_member_empty", 1, "bool"), ("req_instance_defined", 1, "bool"),
    ("instance_known", 1, "bool"), ("instance_member_matches", 1, "bool"), ("member_known", 1, "bool"))


def _toc(check: str) -> RuleDef:
    return RuleDef(f"txn_offset_commit_error.{check}", partial(txn_offset_commit_error, check=check),
                   f"TxnOffsetCommit validation on the classic group coordinator ({check})", _TOC_ARGS,
                   (("error", ERR, "int"),), {"check": check})


_PART2_RULE_LIST = [
    RuleDef("add_partitions_error", add_partitions_error,
            "AddPartitionsToTxn / AddOffsetsToTxn: pid mapping, fencing, concurrent transactions",
            _META + _REQ, (("error", ERR, "int"),)),
    RuleDef("end_txn_decision.client", partial(end_txn_decision, is_from_client=True),
            "EndTxn (TV1) from a client: error and the PrepareX state it moves to",
            _META + _REQ + (("req_result", ERR, "int"),), (("error", ERR, "int"), ("next_state", ERR, "int")),
            {"is_from_client": True}),
    RuleDef("end_txn_decision.coordinator", partial(end_txn_decision, is_from_client=False),
            "EndTxn (TV1) as the coordinator's own abort (timeout, fence): a higher epoch is valid",
            _META + _REQ + (("req_result", ERR, "int"),), (("error", ERR, "int"), ("next_state", ERR, "int")),
            {"is_from_client": False}),
    RuleDef("end_txn_marker_error", end_txn_marker_error,
            "appendEndTxnMarker on the partition leader: producer epoch then coordinator epoch",
            (("stored_epoch", EPOCH, "int"), ("stored_coordinator_epoch", I32, "int"), ("marker_epoch", EPOCH, "int"),
             ("marker_coordinator_epoch", I32, "int")), (("error", ERR, "int"),)),
    _toc("pre-kip447"), _toc("2.5"), _toc("current"),
]

_RULE_LIST = [
    _init_rule("init_producer_id_decision.pre_kip360", False, False,
               "InitProducerId before KIP-360: bump the epoch, or a new producer id when exhausted"),
    _init_rule("init_producer_id_decision.kip360_designed", True, False,
               "InitProducerId as KIP-360 designs it (cases 1a-2c, retry-safe via last producer id/epoch)"),
    _init_rule("init_producer_id_decision.kip360_shipped", True, True,
               "InitProducerId as Kafka ships it (validPid, lastProducerEpoch, exhaustion precondition)"),
    RuleDef("is_epoch_exhausted", partial(is_epoch_exhausted, max_epoch=MAX_EPOCH),
            "TransactionMetadata.isEpochExhausted: epoch >= Short.MAX_VALUE - 1",
            (("epoch", EPOCH, "int"),), (("exhausted", 1, "bool"),), {"max_epoch": MAX_EPOCH}),
    RuleDef("valid_producer_id", partial(valid_producer_id, max_epoch=MAX_EPOCH),
            "handleInitProducerId's validPid: new metadata, the current producer id, or the previous one "
            "with an exhausted epoch",
            (("meta_exists", 1, "bool"), ("meta_producer_id", PID, "int"), ("meta_prev_producer_id", PID, "int"),
             ("meta_epoch", EPOCH, "int"), ("req_producer_id", PID, "int"), ("req_epoch", EPOCH, "int")),
            (("valid", 1, "bool"),), {"max_epoch": MAX_EPOCH}),
    RuleDef("fence_producer_epoch", partial(fence_producer_epoch, max_epoch=MAX_EPOCH),
            "prepareFenceProducerEpoch: epoch + 1 unless a fence failed or the epoch is at max",
            (("epoch", EPOCH, "int"), ("has_failed_epoch_fence", 1, "bool")),
            (("new_epoch", EPOCH, "int"),), {"max_epoch": MAX_EPOCH}),
    RuleDef("bump_idempotent_epoch", partial(bump_idempotent_epoch, max_epoch=MAX_EPOCH),
            "bumpIdempotentProducerEpoch: epoch + 1, or a new producer id at Short.MAX_VALUE",
            (("producer_id", PID, "int"), ("epoch", EPOCH, "int")),
            (("needs_new_producer_id", 1, "bool"), ("new_epoch", EPOCH, "int")), {"max_epoch": MAX_EPOCH}),
    RuleDef("in_sequence", partial(in_sequence, max_seq=MAX_SEQ),
            "ProducerAppendInfo.inSequence: next == last + 1, or 0 after Integer.MAX_VALUE",
            (("last_seq", SEQ, "int"), ("next_seq", SEQ, "int")), (("in_sequence", 1, "bool"),),
            {"max_seq": MAX_SEQ}),
    RuleDef("increment_sequence", partial(increment_sequence, max_seq=MAX_SEQ),
            "DefaultRecordBatch.incrementSequence: seq + inc wrapping past Integer.MAX_VALUE to 0",
            (("seq", SEQ, "int"), ("inc", SEQ, "int")), (("next_seq", SEQ, "int"),), {"max_seq": MAX_SEQ}),
]

RULES: dict[str, RuleDef] = {r.name: r for r in _RULE_LIST + _PART2_RULE_LIST}
#: part 2's rules alone (``model.transactions.rules.RULES``)
PART2_RULES: dict[str, RuleDef] = {r.name: r for r in _PART2_RULE_LIST}
