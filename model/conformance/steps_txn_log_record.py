"""Steps for the ``__transaction_state`` record (``TransactionLog``): writing a transition's value at the server's
transaction.version, reading a value back (or a tombstone, or a value given field by field), and reading a key
(``model.coordinator.txn_log_record``)."""

from __future__ import annotations

import re
import weakref
from typing import Any

from ..coordinator.txn_log import load_metadata
from ..coordinator.txn_log_record import key_is_known, read_value, write_value
from ..errors import NO_PRODUCER_EPOCH, NO_PRODUCER_ID
from ..state import TxnLogValue
from .values import NotExpressible, integer
from .world import DEFAULT_TID, World

Observed = dict[str, Any]

#: the records each world's valueToBytes steps wrote: transactional id -> (value version, value)
_WRITTEN: weakref.WeakKeyDictionary[World, dict[str, tuple[int, TxnLogValue]]] = weakref.WeakKeyDictionary()


def _tid(inp: dict[str, Any]) -> str:
    return str(inp.get("transactional_id", DEFAULT_TID))


def _exception(message: str) -> Observed:
    return {"error": "EXCEPTION", "exception": "IllegalStateException", "message": message}


def value_to_bytes(w: World, inp: dict[str, Any]) -> Observed:
    """``TransactionLog.valueToBytes(transit, transactionVersionLevel)``: ``transaction_metadata`` is the transition
    written (the metadata's fields), ``transaction_version`` the server's feature level."""
    meta = w.meta_from(inp.get("transaction_metadata"))
    if not meta.exists:
        raise NotExpressible("valueToBytes needs the transition's transaction_metadata")
    level = integer(inp.get("transaction_version", 0), "transaction_version")
    try:
        written = write_value(meta, level)
    except ValueError as exc:
        return _exception(str(exc))
    _WRITTEN.setdefault(w, {})[_tid(inp)] = written
    return {"error": "NONE", "value_version": written.version, "flexible": written.version >= 1}


def _given_value(w: World, v: dict[str, Any]) -> TxnLogValue:
    """A value given field by field (the names of TransactionLogValue.json); ``transaction_status`` is the state id."""
    parts = tuple(sorted(w.partitions.id(str(p)) for p in v.get("partitions", [])))
    return TxnLogValue(True, integer(v.get("producer_id", NO_PRODUCER_ID), "producer_id"),
                       integer(v.get("previous_producer_id", NO_PRODUCER_ID), "previous_producer_id"),
                       integer(v.get("producer_epoch", 0), "producer_epoch"), NO_PRODUCER_EPOCH,
                       integer(v.get("transaction_status", 0), "transaction_status"), parts,
                       integer(v.get("client_transaction_version", 0), "client_transaction_version"))


def read_txn_record_value(w: World, inp: dict[str, Any]) -> Observed:
    """``TransactionLog.readTxnRecordValue``: the value the vector gives (``value`` with its ``version``; ``value``
    null is a tombstone), or else the one the vector's valueToBytes wrote for the transactional id."""
    tid = _tid(inp)
    if "value" in inp:
        given = inp["value"]
        if given is None:
            version, value = None, TxnLogValue(False, NO_PRODUCER_ID, NO_PRODUCER_ID, NO_PRODUCER_EPOCH,
                                               NO_PRODUCER_EPOCH, 0)
        elif isinstance(given, dict):
            version, value = integer(inp.get("version", 0), "version"), _given_value(w, given)
        else:
            raise NotExpressible(f"readTxnRecordValue value {given!r}: give the value's fields, or null")
    elif tid in _WRITTEN.get(w, {}):
        version, value = _WRITTEN[w][tid]
    else:
        raise NotExpressible(f"readTxnRecordValue: no value given and none written for {tid!r}")
    try:
        read = read_value(version, value)
    except ValueError as exc:
        return _exception(str(exc))
    if read is None:
        return {"error": "NONE", "metadata": None}
    return {"error": "NONE", "metadata": w.meta_view(load_metadata(read))}


def read_txn_record_key(w: World, inp: dict[str, Any]) -> Observed:
    """``TransactionLog.readTxnRecordKey`` of a key written at ``version`` (the record-type prefix from 4.1.0): a
    transactional id's key, or an unknown one, which loading skips."""
    version = integer(inp.get("version", 0), "version")
    try:
        known = key_is_known(version, unknown_allowed="kafka-14869" not in w.protocol.lacks)
    except ValueError as exc:
        return {**_exception(str(exc)), "key": "EXCEPTION", "unknown_version": None}
    if known:
        return {"key": "transactional_id", "transactional_id": _tid(inp), "unknown_version": None}
    return {"key": "unknown", "unknown_version": version}



def _number(v: Any) -> int:
    try:
        return int(v)
    except (TypeError, ValueError):
        return 0


def features(inp: dict[str, Any], kind: str, at: str) -> list[tuple[str, str]]:
    """The features a TransactionLog step needs (``harness.needed_features``): a flexible value (version 1, written
    from transaction.version 1 on) is KAFKA-16192's, a metadata of transaction version 2 needs that version."""
    found: list[tuple[str, str]] = []
    if re.match(r"TransactionLog\.valueToBytes\b", kind) and _number(inp.get("transaction_version")) >= 1:
        found.append(("kafka-16192", f"{at}{kind} at transaction.version {inp['transaction_version']}"))
    if re.match(r"TransactionLog\.readTxnRecordValue\b", kind) and _number(inp.get("version")) >= 1:
        found.append(("kafka-16192", f"{at}{kind} of a version {inp['version']} value"))
    meta = inp.get("transaction_metadata")
    if re.match(r"(TransactionLog|TransactionMarkerChannelManager)\.", kind) and isinstance(meta, dict) \
            and _number(meta.get("client_transaction_version")) >= 2:
        found.append(("transaction-version-2", f"{at}{kind} of a transaction at client transaction version 2"))
    return found
