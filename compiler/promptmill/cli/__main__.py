"""`python -m promptmill.cli`: the same as the `promptmill` command."""

from .main import main

main()
