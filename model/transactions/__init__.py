"""The transaction coordinator's transaction state machine and the transaction markers.

Rooms: ``codes`` (state ids, results; re-exports ``model.errors``), ``states`` (Kafka's valid-transition table),
``metadata`` (TransactionMetadata as an immutable record), ``add_partitions``
(AddPartitionsToTxn / AddOffsetsToTxn), ``end_txn`` (EndTxn validation and PrepareX; TV1 over ops,
TV2 on concrete metadata),
``timeout`` (the timed-out abort and the fence on InitProducerId), ``markers`` (WriteTxnMarkers on
the coordinator and on the partition leader), ``log`` (a partition's log, LSO and read_committed),
``failover`` (coordinator load after a failover), ``rules`` (the part-2 subset of
``model.proof_rules.RULES``). Error codes, the metadata record and the ``__transaction_state``
record are part 1's (``model.errors``, ``model.state``).
"""
