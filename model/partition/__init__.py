"""The partition leader: producer state table, sequence/epoch validation, log, retention, expiry."""
