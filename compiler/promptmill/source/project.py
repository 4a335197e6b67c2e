"""The project: promptmill.yaml, its folders and the search path of template layers.

`find_project(path)` locates the configuration: `path` itself when it is a file,
else the first `promptmill.yaml` in `path` or one of its parents (a parent's only when `path`
lies inside that project's prompts folder). Without one,
`path` is the project root, its `prompts/` folder (or `path` itself when there
is none) holds the templates and `build/` receives the build.

Templates are looked up along layers, first match wins: the project's prompts
folder, each `search_path` folder, the user folder (`PROMPTMILL_USER_DIR`, by
default `$XDG_CONFIG_HOME/promptmill` or `~/.config/promptmill`), then the
library shipped inside promptmill. Only roles of the project's own prompts
folder are compiled into the build; the other layers provide ids to reference.

The user folder may also hold a user rules file, `promptmill.yaml` at its top:
it holds only `inject:` rules (the schema of the project's `inject:`), which
apply to every role of every project that uses the user folder, at layer 0 by
default. It is not a template; `Project.user_doc` holds it once loaded. The
rules are personal: `compile` leaves them out (`find_project(user_rules=False)`),
so the committed build is the one CI makes; they apply to this machine's
in-memory renders (`render` without `--build`), `watch` and `lint`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from importlib import resources
from pathlib import Path
from typing import Any

from ..core import userfiles
from ..core.diagnostics import Diagnostic, has_errors
from ..core.errors import PromptmillError
from ..core.suggest import suggest
from .loader import Document, load_file
from .schemacheck import check_document, load_schema

CONFIG_NAME = "promptmill.yaml"
CONFIG_READ_LIMIT = 1 << 20  # locating reads only the `prompts:` line: the first MiB is plenty
USER_RULES_SOURCE = "user:" + CONFIG_NAME  # the user rules file's stable source id
USER_RULES_KEYS = ("inject",)
DEFAULT_BUDGET = {"max_tokens": 8192, "reserve": 1024}


@dataclass(frozen=True)
class Layer:
    """One folder of templates on the search path."""

    name: str  # "project", "search:1", "user", "library"
    root: Path
    label: str  # prefix used for source ids in bundles ("" for the project)


@dataclass(frozen=True)
class Project:
    root: Path
    prompts_dir: Path
    build_dir: Path
    config: dict[str, Any] = field(default_factory=dict)
    config_doc: Document | None = None
    layers: tuple[Layer, ...] = ()
    user_doc: Document | None = None  # the user rules file (only `inject:`), when there is one

    @property
    def tokenizer(self) -> str | None:
        return self.config.get("tokenizer")

    @property
    def exclude(self) -> tuple[str, ...]:
        return tuple(self.config.get("exclude", ()))

    def display(self, path: Path) -> str:
        """How a file is named in diagnostics: relative to the cwd when possible.

        Symbolic links are kept as they are (a broken link is named, not its target).
        """
        absolute = Path(os.path.abspath(path))
        for cwd in (Path(os.path.abspath(Path.cwd())), Path.cwd().resolve()):
            try:
                return absolute.relative_to(cwd).as_posix()
            except ValueError:
                continue
        return absolute.as_posix()

    def source_id(self, layer: Layer, path: Path) -> str:
        """Stable name of a source file in bundles and the manifest."""
        rel = path.resolve().relative_to(layer.root.resolve()).as_posix()
        if layer.name == "project":
            try:
                return path.resolve().relative_to(self.root.resolve()).as_posix()
            except ValueError:
                return rel
        return f"{layer.label}{rel}"


def library_dir() -> Path:
    return Path(str(resources.files("promptmill").joinpath("library")))


def user_dir() -> Path:
    env = os.environ.get("PROMPTMILL_USER_DIR")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(base) / "promptmill"


def _prompts_setting(config_file: Path) -> str:
    """The `prompts:` value of a config file, read cheaply (for locating only)."""
    try:
        text = userfiles.read_bytes(config_file, limit=CONFIG_READ_LIMIT, what="config file").decode("utf-8", errors="replace")
    except PromptmillError:  # a FIFO, a device, too large, unreadable: loading it says what it is
        return "prompts"
    for line in text.splitlines():
        if line.startswith("prompts:"):
            return line.split(":", 1)[1].split("#", 1)[0].strip().strip("'\"") or "prompts"
    return "prompts"


def _locate(path: Path) -> Path | None:
    """The config file governing `path`: `path` itself when it is a file; else the first
    promptmill.yaml in `path` or a parent whose folder is `path` or whose prompts folder
    holds `path` (a folder elsewhere in a repository is a project of its own)."""
    if path.is_file():
        return path
    for folder in [path, *path.parents]:
        candidate = folder / CONFIG_NAME
        if candidate.is_file():
            if folder == path or path.is_relative_to((folder / _prompts_setting(candidate)).resolve()):
                return candidate
            return None
        if folder == path and os.path.lexists(candidate):
            return candidate  # a folder, FIFO, device or broken link: loading it says what it is (PM100)
    return None


def find_project(
    path: str | os.PathLike[str] = ".",
    *,
    build_dir: str | os.PathLike[str] | None = None,
    user_rules: bool = True,
) -> tuple[Project, list[Diagnostic]]:
    """Locate and load the project that `path` belongs to (see module docstring).

    `user_rules=False` leaves the user rules file unread: `compile` builds what
    every machine builds, and personal rules reach only this machine's
    in-memory renders, previews and lint."""
    start = Path(path)
    diags: list[Diagnostic] = []
    if not start.exists():
        diags.append(Diagnostic("PM011", "error", str(start), 0, 0, f"no such file or folder: {start}"))
        return Project(start, start, start / "build"), diags
    config_file = _locate(start.resolve())
    config: dict[str, Any] = {}
    doc: Document | None = None
    if config_file is not None:
        root = config_file.parent
        display = Project(root, root, root).display(config_file)
        doc, load_diags = load_file(config_file, display)
        diags.extend(load_diags)
        if doc is not None:
            schema_diags = check_document(doc, "project")
            diags.extend(schema_diags)
            if not schema_diags and isinstance(doc.data, dict):
                config = doc.data
        prompts = root / config.get("prompts", "prompts")
    else:
        root = start.resolve() if start.is_dir() else start.resolve().parent
        prompts = root / "prompts" if (root / "prompts").is_dir() else root
    build = Path(build_dir) if build_dir is not None else root / config.get("build", "build")
    if not prompts.is_dir():
        diags.append(Diagnostic("PM011", "error", str(prompts), 0, 0, f"prompts folder not found: {prompts}"))
    layers = [Layer("project", prompts, "")]
    for i, extra in enumerate(config.get("search_path", ()), start=1):
        folder = (root / extra).resolve()
        if not folder.is_dir():
            assert doc is not None  # search_path comes from the config file
            diags.append(Diagnostic.at(doc.pos(("search_path", i - 1)), "PM011", f"search_path folder not found: {extra}"))
            continue
        layers.append(Layer(f"search:{i}", folder, f"search{i}:"))
    user_doc: Document | None = None
    if config.get("user_dir", True):
        udir = user_dir()
        if udir.is_dir():
            layers.append(Layer("user", udir, "user:"))
            rules_file = udir / CONFIG_NAME
            if user_rules and rules_file.is_file() and (config_file is None or rules_file.resolve() != config_file.resolve()):
                user_doc, user_diags = load_user_rules(rules_file, Project(root, root, root).display(rules_file))
                diags.extend(user_diags)
    if config.get("library", True):
        layers.append(Layer("library", library_dir(), "promptmill:"))
    project = Project(root, prompts, build, config, doc, tuple(layers), user_doc)
    diags.extend(_build_overlap(project, from_config=build_dir is None))
    return project, diags


def _build_overlap(project: Project, *, from_config: bool) -> list[Diagnostic]:
    """PM010 when the build folder is a templates folder or holds one: a compile writes
    and garbage-collects its `roles/` folder, which there is the templates' own."""
    build = project.build_dir.resolve()
    for layer in project.layers:
        if layer.name != "project" and not layer.name.startswith("search:"):
            continue
        folder = layer.root.resolve()
        if folder == build or folder.is_relative_to(build):
            what = "is" if folder == build else "holds"
            where = "the prompts folder" if layer.name == "project" else f"the search_path folder {folder}"
            shown = project.config.get("build", project.build_dir) if from_config else project.build_dir
            message = f"the build folder {shown} {what} {where}: a compile would write into the templates"
            hint = "set `build:` to a folder of its own (the default is build/)" if from_config else "pass `-o` a folder of its own"
            if from_config and project.config_doc is not None and "build" in project.config:
                return [Diagnostic.at(project.config_doc.pos(("build",)), "PM010", message, hint=hint)]
            return [Diagnostic("PM010", "error", str(project.build_dir), 0, 0, message, hint=hint)]
    return []


def is_user_rules_file(layer: Layer, path: Path) -> bool:
    """True for the user rules file of the user layer (it is not a template)."""
    return layer.name == "user" and path.name == CONFIG_NAME and path.parent == layer.root


def load_user_rules(path: Path, display: str) -> tuple[Document | None, list[Diagnostic]]:
    """Load and check the user rules file: only `inject:`, with the project's rule schema.

    Returns the document (None when it cannot be used or is empty) and its
    diagnostics; a file that is empty or only comments holds no rules.
    """
    doc, diags = load_file(path, display)
    if doc is None:
        empty = bool(diags) and all(d.code == "PM103" for d in diags)  # empty or only comments: no rules
        return None, [] if empty else diags
    data = doc.data
    if not isinstance(data, dict):
        got = "a list" if isinstance(data, list) else "a scalar"
        return None, diags + [Diagnostic.at(doc.pos(()), "PM200", f"the user rules file must be a mapping with `inject:` rules, got {got}")]
    for key in data:
        if key in USER_RULES_KEYS:
            continue
        shown = str(key)
        if shown in _project_keys():
            hint = f"'{shown}' is a project setting: set it in the project's {CONFIG_NAME}"
        else:
            hint = "did you mean 'inject'?" if suggest(shown, USER_RULES_KEYS) else "only `inject:` rules belong here"
        diags.append(
            Diagnostic.at(
                doc.key_pos((key,)),
                "PM202",
                f"unknown key '{shown}' in the user rules file; it holds only `inject:` rules",
                hint=hint,
            )
        )
    rules = replace(doc, data={k: v for k, v in data.items() if k in USER_RULES_KEYS})
    diags.extend(check_document(rules, "project"))  # the project's `inject:` item schema
    return (None if has_errors(diags) else rules), diags


def _project_keys() -> tuple[str, ...]:
    return tuple(load_schema("project")["properties"])
