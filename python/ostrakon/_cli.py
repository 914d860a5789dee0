"""The `ostrakon` command installed with the package: the same CLI as the binary."""

from __future__ import annotations

import signal
import sys


def main() -> None:
    from . import _native

    # Ctrl-C stops the command as it stops the binary: Python's handler would only set a
    # flag that nothing reads while the command runs (`serve` installs its own).
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    sys.exit(_native.run_cli(["ostrakon", *sys.argv[1:]]))


if __name__ == "__main__":
    main()
