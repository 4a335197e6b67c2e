"""Git in tests: `git(root, *args)` runs git in a folder; the `git_identity` fixture (tests/conftest.py)
gives commits a fixed author and keeps the developer's own git configuration out."""

from __future__ import annotations

import subprocess
from pathlib import Path

# environment for reproducible commits: a fixed author, no global or system configuration
IDENTITY = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.com",
    "GIT_CONFIG_GLOBAL": "/dev/null",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)
