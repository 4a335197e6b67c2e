"""`promptmill init`: write a starter project that lints, compiles and renders as is.

The files come from the `starter/` folder shipped in the package. A path
component spelled `dot-NAME` there is written as `.NAME` (`dot-github` ->
`.github`): packaging globs skip hidden files and folders, so the shipped copy
has none. `@PROMPTMILL_VERSION@` in a file becomes the installed version.

The JSON Schemas are written to `.promptmill/schemas/` from the installed
package (the same text `promptmill schema KIND` prints). Every template starts
with a `# yaml-language-server: $schema=` modeline pointing there by a relative
path, and `.vscode/settings.json` maps the template folders to the same files,
so YAML editors offer completion and hover help offline. `.vscode/extensions.json`
recommends promptmill's own VS Code extension (editors/vscode: the language server,
the preview) and the YAML extension (docs/editors.md).

Nothing is written when any target file exists, unless `force=True`.
"""

from __future__ import annotations

import os
from importlib import resources
from importlib.abc import Traversable
from pathlib import Path

from ..core import userfiles
from ..core.choices import SCHEMA_NAMES
from ..core.errors import ScaffoldError
from ..core.version import __version__
from ..source.schemacheck import schema_text

SCHEMA_DIR = ".promptmill/schemas"
VERSION_MARK = "@PROMPTMILL_VERSION@"
ROLE = "helpdesk"
STATE = "examples/helpdesk.state.yaml"


def _walk(folder: Traversable, prefix: str) -> dict[str, bytes]:
    files: dict[str, bytes] = {}
    for entry in folder.iterdir():
        name = "." + entry.name[4:] if entry.name.startswith("dot-") else entry.name
        rel = f"{prefix}{name}"
        if entry.is_dir():
            if entry.name != "__pycache__":
                files.update(_walk(entry, rel + "/"))
        else:
            files[rel] = entry.read_bytes().replace(VERSION_MARK.encode(), __version__.encode())
    return files


def schema_files() -> dict[str, bytes]:
    """Every shipped JSON Schema as `{"<name>.schema.json": bytes}`."""
    return {f"{name}.schema.json": schema_text(name).encode("utf-8") for name in SCHEMA_NAMES}


def scaffold_files() -> dict[str, bytes]:
    """The starter project as `{relative posix path: bytes}`, sorted by path."""
    files = _walk(resources.files("promptmill").joinpath("starter"), "")
    files.update({f"{SCHEMA_DIR}/{name}": data for name, data in schema_files().items()})
    return dict(sorted(files.items()))


def write_files(root: str | os.PathLike[str], files: dict[str, bytes], *, force: bool = False) -> list[Path]:
    """Write `files` under `root`; refuse (PM013, nothing written) when any exists and not `force`."""
    base = Path(root)
    if base.exists() and not base.is_dir():
        raise ScaffoldError(f"{base} is a file, not a folder", hint="give a folder name, new or existing")
    targets = [(base / rel, data) for rel, data in files.items()]
    if not force:
        existing = [path for path, _ in targets if path.exists() or path.is_symlink()]
        if existing:
            shown = "\n  ".join(path.as_posix() for path in existing[:20])
            more = f"\n  ... and {len(existing) - 20} more" if len(existing) > 20 else ""
            raise ScaffoldError(
                f"not writing anything: {len(existing)} file(s) already exist:\n  {shown}{more}",
                hint="move them aside, or pass --force to overwrite them",
            )
    written = []
    try:
        base.mkdir(parents=True, exist_ok=True)  # the folder named: the root every file must stay inside
        for path, data in targets:
            userfiles.make_folder(path.parent, root=base)  # PM017 when a folder in it links out
            if path.is_symlink():
                path.unlink()  # --force: replace the link itself, never write through it
            userfiles.write_bytes(path, data, root=base, what="starter file")
            written.append(path)
    except OSError as exc:
        raise ScaffoldError(f"cannot write {exc.filename or base}: {exc.strerror or exc}") from None
    return written


def init(path: str | os.PathLike[str] = ".", *, force: bool = False) -> list[Path]:
    """Create a starter project in `path` (created when missing); return the files written.

    The project has a role (`helpdesk`), a constraint set, an output contract,
    a fragment, an example state, a GitHub Actions workflow, a pre-commit
    configuration and the editor schema association. Raises `ScaffoldError`
    (PM013) and writes nothing when a file exists, unless `force`.
    """
    return write_files(path, scaffold_files(), force=force)


def write_schemas(folder: str | os.PathLike[str], *, force: bool = False) -> list[Path]:
    """Write every shipped JSON Schema into `folder` (e.g. to refresh `.promptmill/schemas`)."""
    return write_files(folder, schema_files(), force=force)
