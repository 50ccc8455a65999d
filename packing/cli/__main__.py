"""``python -m packing.cli`` runs the ``vbp`` command."""

from packing.cli import main

main()
