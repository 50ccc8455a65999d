"""``python -m vbp.cli`` runs the ``vbp`` command."""

from vbp.cli import main

main()
