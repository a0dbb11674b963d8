"""The group coordinator and its consumers, as the exactly-once loop needs them.

Rooms: ``metadata`` (GroupMetadata as an immutable record), ``membership`` (join, session timeout,
rebalance to a new generation), ``txn_offset_commit`` (TxnOffsetCommit validation, KIP-447 fencing in
three Kafka versions), ``pending_offsets`` (transactional offsets pending until the marker),
``offset_fetch`` (OffsetFetch with require_stable, and the consumer's backoff and retry).
"""
