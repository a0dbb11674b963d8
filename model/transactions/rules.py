"""The part-2 rules written over ``ops``, described for the prover (to be merged into
``model.proof_rules.RULES`` by its owner; kept here so part 1's file is not edited).

Widths are Kafka's: epochs int16, producer ids int64, coordinator epochs and generations int32,
error codes, state ids and results as int16 terms.
"""

from __future__ import annotations

from functools import partial

from eoscheck.model.proof_rules import RuleDef

from eoscheck.model.group.txn_offset_commit import txn_offset_commit_error

from .add_partitions import add_partitions_error
from .end_txn import end_txn_decision
from .markers import end_txn_marker_error

EPOCH, PID, ERR, I32 = 16, 64, 16, 32

_META = (("meta_exists", 1, "bool"), ("meta_producer_id", PID, "int"), ("meta_epoch", EPOCH, "int"),
         ("meta_state", ERR, "int"), ("meta_pending", ERR, "int"))
_REQ = (("req_producer_id", PID, "int"), ("req_epoch", EPOCH, "int"))
_TOC_ARGS = (("group_dead", 1, "bool"), ("group_empty", 1, "bool"), ("group_generation", I32, "int"),
             ("req_generation", I32, "int"), ("req_member_empty", 1, "bool"), ("req_instance_defined", 1, "bool"),
             ("instance_known", 1, "bool"), ("instance_member_matches", 1, "bool"), ("member_known", 1, "bool"))


def _toc(check: str) -> RuleDef:
    return RuleDef(f"txn_offset_commit_error.{check}", partial(txn_offset_commit_error, check=check),
                   f"TxnOffsetCommit validation on the classic group coordinator ({check})", _TOC_ARGS,
                   (("error", ERR, "int"),), {"check": check})


_RULE_LIST = [
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

RULES: dict[str, RuleDef] = {r.name: r for r in _RULE_LIST}
