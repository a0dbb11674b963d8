"""The model's stable interface: one function per Kafka request or event per actor.

``coordinator`` (the transaction coordinator: InitProducerId, EndTxn, AddPartitionsToTxn, the
timeout abort, transactional-id expiry, producer-id blocks), ``leader`` (a partition leader:
produce validation, markers, producer-id expiry, KIP-890 verification), ``client`` (the producer's
reactions to responses), ``group`` (the group coordinator: TxnOffsetCommit, OffsetFetch, the
offsets-partition marker). Each takes a state record, a request and a ``Protocol`` (the switch
values of one Kafka version) and returns ``(response, state)``; the state records are the
machines' own (``model.state``, ``model.group.metadata``). The conformance harness
(``model.conformance``) reaches the rules only through here, so a refactor of the machines does
not break it; the machines call the same rule functions underneath.
"""
