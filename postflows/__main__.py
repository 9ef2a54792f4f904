"""``python -m postflows``: the ``postflows`` command."""

from postflows.cli import main

main()
