"""``python -m icml26`` is the ``icml26`` command."""

from icml26.cli import main

main()
