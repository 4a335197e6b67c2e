"""Reviewing prompt changes: snapshots of every rendered prompt (`snapshots.py`), the result of
comparing them (`testreport.py`), and what a change between two revisions did (`diff.py`).

Nothing is imported here, so the CLI can name the formats without loading the compiler.
"""

TEST_FORMATS = ("text", "json", "github", "junit")  # `promptmill test --format`
DIFF_FORMATS = ("markdown", "json", "text")  # `promptmill diff --format`
