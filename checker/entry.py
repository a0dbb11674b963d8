"""The ``eoscheck`` console script: signal handling from the first line, then ``checker.cli``.

Importing the CLI takes a few tenths of a second; a Ctrl-C in that window printed a
KeyboardInterrupt traceback, and a SIGTERM killed the process without a word (exit -15). Here
both are turned into the CLI's one line before anything heavy is imported.
"""

from __future__ import annotations

import sys


def main() -> int:
    from .signals import Terminated, handle_termination

    try:
        with handle_termination():
            from .cli import main as run

            return run()
    except KeyboardInterrupt:
        print("eoscheck: interrupted", file=sys.stderr)
        return 130
    except Terminated as exc:
        print(f"eoscheck: terminated by {exc.name}", file=sys.stderr)
        return exc.exit_code


if __name__ == "__main__":
    sys.exit(main())
