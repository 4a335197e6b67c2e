"""The promptmill command: click commands, previews, watch, state files, scaffolding and diagnostic reporters."""
