"""The producer client: sequences, the in-flight window, retries, error handling per version."""
