"""Errors an engine raises when it cannot run as asked (not a verdict about the model).

The CLI turns any of them into one line on stderr and exit code 2, without knowing which engine
raised it: a missing JVM, an unreachable cluster, a checkpoint directory of another run.
"""


class EngineSetupError(Exception):
    """The engine cannot run here or with these options; the message is one line with the fix."""
