"""The ``__transaction_state`` record as ``TransactionLog`` writes and reads it: key and value versions,
the tombstone, and the checks on the way in and out (the fields a record holds: ``txn_log``).

Read at 1eb7644 (``core/.../TransactionLog.scala``, ``TransactionLogKey.json`` / ``TransactionLogValue.json``) and at
4.2.0-rc1 (the same Scala object; the generated classes in ``transaction-coordinator``):

- the value is written at version 0 (not flexible) while ``transaction.version`` is 0 and at version 1 (flexible, the
  highest) from transaction.version 1 on (``TransactionVersion.transactionLogValueVersion``, KIP-890 / KAFKA-16192,
  first tag 4.0.0); version 1's tagged fields (PreviousProducerId, NextProducerId, ClientTransactionVersion; 4.2.0-rc1
  adds NextProducerEpoch for KIP-939) are not in a version 0 record, and of them only ClientTransactionVersion is set;
- an Empty transaction is written without partitions (null), and one with partitions is an IllegalStateException;
- a null value (tombstone) reads as no metadata; a value version outside 0..1 is an IllegalStateException;
- the key: at 1eb7644 .. 4.0.x a version outside 0..0 reads as an unknown key, which loading skips; from 4.1.0 the
  prefix is the coordinator record type, ``TRANSACTION_LOG`` = 0, and any other reads as an unknown one
  (KAFKA-18207 / KAFKA-18882, ``readTxnRecordKey`` returns the short it read): the same answer for every key.
"""

from __future__ import annotations

from typing import NamedTuple

from ..state import TxnLogValue, TxnMetadata
from ..transactions.codes import TxnState
from .txn_log import to_log_value

#: TransactionLogKey's one version, and the coordinator record type the 4.1.0+ prefix names
KEY_VERSION = 0
#: TransactionLogValue's versions: 0 not flexible, 1 (the highest) flexible
VALUE_VERSIONS = (0, 1)
FLEXIBLE_FROM = 1


def value_version(transaction_version_level: int) -> int:
    """``TransactionVersion.transactionLogValueVersion``: version 1 from transaction.version 1 on."""
    return 1 if transaction_version_level >= 1 else 0


class WrittenValue(NamedTuple):
    version: int
    value: TxnLogValue


def write_value(meta: TxnMetadata, transaction_version_level: int) -> WrittenValue:
    """``TransactionLog.valueToBytes`` for the transition ``meta`` (raises ValueError where Kafka throws
    IllegalStateException: an Empty transaction with partitions). A version 0 record has no tagged field, so
    the client's transaction version is not in it."""
    if meta.state == TxnState.EMPTY and meta.partitions:
        raise ValueError("an Empty transaction is not expected to have partitions")
    version = value_version(transaction_version_level)
    value = to_log_value(meta)
    return WrittenValue(version, value if version >= FLEXIBLE_FROM else value._replace(tv=0))


def read_value(version: int | None, value: TxnLogValue) -> TxnLogValue | None:
    """``TransactionLog.readTxnRecordValue``: None for a tombstone (``version`` None); ValueError for a version it
    does not know (IllegalStateException). The value read keeps the fields the record holds."""
    if version is None:
        return None
    if version not in VALUE_VERSIONS:
        raise ValueError(f"Unknown version {version} from the transaction log message value")
    return value


def key_is_known(version: int, *, unknown_allowed: bool = True) -> bool:
    """``TransactionLog.readTxnRecordKey``: a key is a transactional id's only at version (record type) 0; another is an
    unknown key from KAFKA-14869 (3.4.1, 3.5.0; ``unknown_allowed``), before which it is an IllegalStateException
    (ValueError)."""
    if version != KEY_VERSION and not unknown_allowed:
        raise ValueError(f"Unknown version {version} from the transaction log message")
    return version == KEY_VERSION
