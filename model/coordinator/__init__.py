"""The transaction coordinator: InitProducerId, transaction metadata, the transaction log, failover."""
