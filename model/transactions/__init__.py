"""The transaction coordinator's transaction state machine and the transaction markers.

Rooms: ``codes`` (error codes, state ids, results), ``states`` (Kafka's valid-transition table),
``metadata`` (TransactionMetadata as an immutable record), ``add_partitions``
(AddPartitionsToTxn / AddOffsetsToTxn), ``end_txn`` (EndTxn validation and PrepareX; TV1 over ops,
TV2 on concrete metadata),
``timeout`` (the timed-out abort and the fence on InitProducerId), ``markers`` (WriteTxnMarkers on
the coordinator and on the partition leader), ``log`` (a partition's log, LSO and read_committed),
``failover`` (coordinator load after a failover), ``rules`` (the ops rules described for the prover).
"""
