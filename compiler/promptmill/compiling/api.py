"""The compile-time API: `lint()`, `compile()`, `build_in_memory()`, and the steps they share,
`load_project()` and `compile_bundles()` (with the caches `Workspace` keeps, `compiling/workspace.py`).

    result = promptmill.lint("prompts")          # LintResult, never raises for template problems
    result = promptmill.compile(".")             # CompileResult; raises CompileError on errors
    result = promptmill.compile(".", check=True) # stale roles listed, nothing written

The pipeline: find the project, load every template along the search path,
validate each against its JSON Schema, index ids, compose each role along its
extends chain, compile it. Diagnostics are collected and returned once.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from ..compose.budgets import model_table, project_model_diagnostics
from ..compose.model import Role, Template, build_template
from ..compose.resolve import ComposedRole, Composer, Index, build_index
from ..core import userfiles
from ..core.diagnostics import Diagnostic, has_errors, sort_diagnostics
from ..core.errors import CompileError, PromptmillError
from ..core.version import __version__
from ..runtime.bundle import FORMAT_VERSION, Manifest, RoleBundle
from ..source.examples import listed_examples
from ..source.loader import DocPath, discover, invisible_characters, load_file, load_text
from ..source.project import CONFIG_NAME, Layer, Project, find_project, is_user_rules_file
from ..source.schemacheck import check_document
from .bundler import compile_role, source_hash, tokenizer_identity
from .freshness import current_inputs, dependency_hash, files_of, intact_roles, owned, project_inputs, read_manifest, tokenizer_inputs
from .writer import build_lock, check_build_folder, install_build, stale_files

if TYPE_CHECKING:  # pragma: no cover
    from ..runtime.engine import Runtime


@dataclass
class Loaded:
    """Every template of a project, loaded, validated and indexed."""

    project: Project
    templates: list[Template]
    index: Index
    diagnostics: list[Diagnostic]
    inputs: dict[str, str]  # source id -> sha256 of every file read
    files: int = 0
    examples: dict[str, tuple[str, ...]] = field(default_factory=dict)  # role id -> its `examples:` files, relative to the root


@dataclass(frozen=True)
class LintResult:
    diagnostics: tuple[Diagnostic, ...]
    files: int
    roles: int

    def ok(self, strict: bool = False) -> bool:
        return not has_errors(self.diagnostics, strict=strict)


@dataclass(frozen=True)
class CompileResult:
    build_dir: Path
    diagnostics: tuple[Diagnostic, ...]
    compiled: tuple[str, ...] = ()  # roles compiled in this run
    reused: tuple[str, ...] = ()  # roles whose sources did not change
    removed: tuple[str, ...] = ()  # stale files deleted
    stale: tuple[str, ...] = ()  # with check=True: what differs from a fresh compile
    up_to_date: bool = False  # nothing changed since the last compile
    files: int = 0
    bundles: dict[str, RoleBundle] = field(default_factory=dict, repr=False)


class DocKey(NamedTuple):
    """What a loaded file's entry in a `load_project` cache depends on."""

    cwd: str  # the working folder: display paths are relative to it
    root: str  # the project root
    layer: Layer
    path: str
    sha256: str  # of the file's bytes


class DocEntry(NamedTuple):
    """One file, loaded, schema-checked and modelled."""

    template: Template | None  # None when it has errors
    diagnostics: tuple[Diagnostic, ...]
    sha256: str | None  # of the bytes parsed (None: unreadable)
    source: str  # the stable source id


class RoleEntry(NamedTuple):
    """One role in a `compile_bundles` memo."""

    key: str  # the dependency hash it was compiled under
    bundle: RoleBundle | None  # None for an abstract role or one with errors
    diagnostics: tuple[Diagnostic, ...]


RoleMemo = dict[str, RoleEntry]  # role id -> how it compiled


def _load_one(
    project: Project,
    layer: Layer,
    path: Path,
    cache: dict[DocKey, DocEntry] | None,
    seen: dict[DocKey, DocEntry],
    overlay: Mapping[Path, bytes] | None = None,
) -> DocEntry:
    """Load, schema-check and model one file, reusing `cache` when its bytes did not change.

    A file in `overlay` (resolved path -> bytes, an editor's unsaved buffers) is read from there, not from disk."""
    text = None
    if overlay:  # resolve() costs a few stat calls: only for a file whose name an open buffer has
        text = overlay.get(path)
        if text is None and any(open_path.name == path.name for open_path in overlay):
            text = overlay.get(path.resolve())
    key: DocKey | None = None
    if cache is not None:
        try:
            raw = text if text is not None else userfiles.read_bytes(path, what="template")
            key = DocKey(os.getcwd(), str(project.root), layer, str(path), hashlib.sha256(raw).hexdigest())
        except PromptmillError:
            key = None  # load_file reports it
        if key is not None and key in cache:
            seen[key] = cache[key]
            return cache[key]
    source = project.source_id(layer, path)
    diags: list[Diagnostic] = []
    template = None
    doc, ldiags = load_file(path, project.display(path)) if text is None else load_text(text, project.display(path))
    diags.extend(ldiags)
    if doc is not None:
        diags.extend(invisible_characters(doc))
        sdiags = check_document(doc)
        diags.extend(sdiags)
        if not sdiags:
            template, tdiags = build_template(doc, layer, source)
            diags.extend(tdiags)
    entry = DocEntry(template, tuple(diags), doc.sha256 if doc is not None else None, source)
    if key is not None and (doc is None or doc.sha256 == key.sha256):  # not rewritten between the two reads
        seen[key] = entry
    return entry


def load_project(
    path: str | os.PathLike[str] = ".",
    *,
    build_dir: str | os.PathLike[str] | None = None,
    cache: dict[DocKey, DocEntry] | None = None,
    user_rules: bool = True,
    overlay: Mapping[Path, bytes] | None = None,
) -> Loaded:
    """Find the project at `path` and load all of its templates.

    With `cache` (a dict owned by the caller, see `Workspace`), files whose
    bytes did not change since the last call are not parsed again; on return
    the cache holds exactly the files of this call. `overlay` maps resolved
    paths to bytes read instead of the file's (a language server's open buffers).
    """
    project, diags = find_project(path, build_dir=build_dir, user_rules=user_rules)
    diags.extend(project_model_diagnostics(project))  # model rows and the default model, each at its key
    templates: list[Template] = []
    inputs: dict[str, str] = project_inputs(project)
    seen: dict[DocKey, DocEntry] = {}
    files = 0
    examples: dict[str, tuple[str, ...]] = {}
    config_path = (project.root / "promptmill.yaml").resolve()
    for layer in project.layers:
        if not layer.root.is_dir():
            continue
        exclude = project.exclude if layer.name == "project" else ()
        paths, ddiags = discover(layer.root, exclude=exclude)
        diags.extend(ddiags)
        for path in paths:
            if project.config_doc is not None and path.resolve() == config_path or is_user_rules_file(layer, path):
                continue
            if layer.name not in ("library", "user"):  # summaries count the project's own files
                files += 1
            template, ldiags, sha, source = _load_one(project, layer, path, cache, seen, overlay)
            diags.extend(ldiags)
            if sha is not None:
                inputs[source] = sha
            if template is not None:
                templates.append(template)
                if isinstance(template, Role) and layer.name == "project" and template.get("examples"):
                    diags.extend(_listed_examples(project, template, path, examples))
    if files == 0 and _bare_folder(project):
        diags.append(_no_project(project))
    if cache is not None:
        cache.clear()
        cache.update(seen)
    index, idiags = build_index(templates)
    diags.extend(idiags)
    return Loaded(project, templates, index, diags, inputs, files, examples)


def _listed_examples(project: Project, role: Role, path: Path, examples: dict[str, tuple[str, ...]]) -> list[Diagnostic]:
    """Record the files a role's `examples:` lists; PM011 at each entry that names no file in the project.

    Checked on every load (not cached with the document): the listed file may come or go on its own."""
    found: list[str] = []
    diags: list[Diagnostic] = []
    for i, rel, problem in listed_examples(path, project.root, role.get("examples")):
        if rel is not None:
            found.append(rel)
        else:
            diags.append(
                Diagnostic.at(
                    role.pos("examples", i),
                    "PM011",
                    f"role '{role.id}': {problem}",
                    hint="paths in `examples:` are relative to the role file; create the state file or correct the path",
                )
            )
    examples[role.id] = tuple(found)
    return diags


def _roles(loaded: Loaded) -> list[Role]:
    """Roles of the project's own prompts folder (the ones that get compiled)."""
    return [t for t in loaded.templates if isinstance(t, Role) and t.layer.name == "project" and loaded.index.get("role", t.id) is t]


def abstract_roles(loaded: Loaded) -> tuple[str, ...]:
    """Ids of the project's abstract roles (never built: a runtime names them when asked for one)."""
    return tuple(sorted(r.id for r in _roles(loaded) if r.abstract))


def compile_bundles(
    loaded: Loaded, reuse: dict[str, str] | None = None, *, memo: RoleMemo | None = None
) -> tuple[dict[str, RoleBundle], list[str], list[Diagnostic]]:
    """Compile every role; `reuse` maps role id -> source_hash of roles to skip when unchanged.

    Returns (bundles, ids of reused roles, diagnostics). Reused roles are not in `bundles`.
    With `memo` (a dict owned by the caller, see `Workspace`), a role whose
    sources did not change since the last call is taken from it, bundle and
    diagnostics alike, instead of being compiled again.
    """
    bundles: dict[str, RoleBundle] = {}
    reused: list[str] = []
    composer = Composer(loaded.index, loaded.project.config, loaded.project.config_doc, loaded.project.user_doc)
    diags: list[Diagnostic] = list(composer.diagnostics)
    fresh: RoleMemo = {}
    for role in _roles(loaded):
        composed, cdiags = composer.compose(role)
        diags.extend(cdiags)
        if composed is None:
            continue
        key = dependency_hash(composed, loaded.index, loaded.project) if memo is not None else None
        if key is not None and memo is not None and role.id in memo and memo[role.id].key == key:
            memoized = fresh[role.id] = memo[role.id]
            diags.extend(memoized.diagnostics)
            if memoized.bundle is not None:
                bundles[role.id] = memoized.bundle
            continue
        if role.abstract:
            _, rdiags = compile_role(composed, loaded.index, loaded.project)
            diags.extend(rdiags)
            if key is not None:
                fresh[role.id] = RoleEntry(key, None, tuple(rdiags))
            continue
        if reuse and role.id in reuse and dependency_hash(composed, loaded.index, loaded.project) == reuse[role.id]:
            reused.append(role.id)
            continue
        bundle, rdiags = compile_role(composed, loaded.index, loaded.project)
        if role.get("extends_when"):
            bundle, rdiags = _with_parent_choice(composer, loaded, role, composed, bundle, rdiags)
        diags.extend(rdiags)
        if key is not None:
            fresh[role.id] = RoleEntry(key, bundle, tuple(rdiags))
        if bundle is not None:
            bundles[role.id] = bundle
    if memo is not None:
        memo.clear()
        memo.update(fresh)
    return bundles, reused, diags


def _with_parent_choice(
    composer: Composer, loaded: Loaded, role: Role, composed: ComposedRole, bundle: RoleBundle | None, diags: list[Diagnostic]
) -> tuple[RoleBundle | None, list[Diagnostic]]:
    """`bundle` with every `extends_when` candidate compiled (see promptmill.compose.extends.candidate_roles):
    a diagnostic of any candidate chain fails the role, each reported once."""
    from ..compose.extends import candidate_roles
    from ..lints.conditions import check_condition
    from ..runtime.bundle import ParentChoice, SourceRef

    found = list(diags)
    choices = []
    for parent, when, candidate in candidate_roles(role):
        ccomposed, cdiags = composer.compose(candidate)
        found.extend(cdiags)
        if ccomposed is None:
            continue
        i = candidate.candidate

        def report(loc: DocPath, code: str, message: str, hint: str | None, i: int = i) -> None:
            found.append(Diagnostic.at(role.pos("extends_when", i, "when", *loc), code, message, hint=hint))

        check_condition(when, ccomposed.inputs or {}, ccomposed.facts, report, shared=False)
        cbundle, cdiags = compile_role(ccomposed, loaded.index, loaded.project)
        found.extend(cdiags)
        if cbundle is not None:
            choices.append(ParentChoice(parent, when, cbundle))
    found = list(dict.fromkeys(found))  # a candidate chain repeats the role's own diagnostics
    if bundle is None or any(d.severity == "error" for d in found):
        return None, found
    refs = {(s.file, s.sha256) for b in (bundle, *(c.bundle for c in choices)) for s in b.sources}
    sources = sorted(refs)
    bundle = replace(
        bundle,
        parents=tuple(choices),
        default_parent=composed.role.extends,
        sources=tuple(SourceRef(f, h) for f, h in sources),
        source_hash=source_hash(sources, tokenizer_identity(bundle.tokenizer, loaded.project)),
    )
    return bundle, found


def _bare_folder(project: Project) -> bool:
    """No promptmill.yaml and no prompts/ folder: the folder itself is the prompts folder."""
    return project.config_doc is None and project.prompts_dir == project.root and project.root.is_dir()


def _no_project(project: Project) -> Diagnostic:
    """PM011 for a folder that holds no project at all (most likely the wrong folder)."""
    hint = "run the command in a project folder or pass its path; `promptmill init` starts a new project"
    if (project.root / "manifest.json").is_file():
        hint = f"{project.root} looks like a build folder: pass it with --build (or load it with promptmill.load)"
    return Diagnostic(
        "PM011",
        "error",
        str(project.root),
        0,
        0,
        f"no project here: {project.root} has no promptmill.yaml, no prompts/ folder and no template files",
        hint=hint,
    )


def lint(path: str | os.PathLike[str] = ".") -> LintResult:
    """Check every template of the project at `path`; never writes anything.

    `path` a template file (not promptmill.yaml): that file is checked as part of
    the project that holds it (its references resolve against the project), and
    only its own findings are reported."""
    target = Path(path)
    if target.name != CONFIG_NAME and os.path.lexists(target) and not target.is_dir():
        return _lint_file(target)
    loaded = load_project(path)
    _, _, diags = compile_bundles(loaded)
    all_diags = tuple(sort_diagnostics(loaded.diagnostics + diags))
    return LintResult(all_diags, loaded.files, len(_roles(loaded)))


def _lint_file(target: Path) -> LintResult:
    """Lint one template file as part of its project: the project's findings in that file only."""
    project, _ = find_project(target.parent)
    real = target.resolve()
    layer = project.layers[0]
    paths, _ = discover(layer.root, exclude=project.exclude) if layer.root.is_dir() else ([], [])
    if real not in {p.resolve() for p in paths}:  # not one of the project's templates: checked on its own
        doc, diags = load_file(target, project.display(target))
        if doc is not None:
            diags.extend(invisible_characters(doc))
            diags.extend(check_document(doc))
        note = Diagnostic(
            "PM011",
            "info",
            project.display(target),
            0,
            0,
            f"not a template of the project at {project.root}: outside its prompts folder {project.display(layer.root)} or excluded;"
            " checked on its own (syntax and schema only)",
        )
        return LintResult(tuple(sort_diagnostics([*diags, note])), 1, 0)
    loaded = load_project(target.parent)
    _, _, diags = compile_bundles(loaded)
    names = {loaded.project.display(target), loaded.project.display(real)}
    mine = [d for d in loaded.diagnostics + diags if d.file in names]
    source = loaded.project.source_id(layer, target)
    return LintResult(tuple(sort_diagnostics(mine)), 1, sum(1 for t in _roles(loaded) if t.source_file == source))


def compile(  # shadows the builtin on purpose: the public name is promptmill.compile
    path: str | os.PathLike[str] = ".",
    *,
    output: str | os.PathLike[str] | None = None,
    check: bool = False,
    force: bool = False,
) -> CompileResult:
    """Compile the project at `path` into its build folder (or `output`).

    Unchanged roles are reused from the existing build unless `force`. With
    `check`, nothing is written: `stale` lists what a compile would change.
    Raises `CompileError` (with every diagnostic) when a template has errors;
    the previous build is then left untouched. A compile that writes holds the
    build lock from reading the old build to the end (see `promptmill.compiling.writer`).
    The user rules file (`$PROMPTMILL_USER_DIR/promptmill.yaml`) is personal and
    never compiled in: a build made on one machine equals the one CI makes.
    """
    project, pdiags = find_project(path, build_dir=output, user_rules=False)  # personal rules stay out of builds
    pdiags += project_model_diagnostics(project)  # before the up-to-date shortcut: a bad row is never "up to date"
    if not has_errors(pdiags) and _bare_folder(project) and not discover(project.root, exclude=project.exclude)[0]:
        pdiags.append(_no_project(project))  # before the lock: no build/ folder appears in the wrong folder
    if has_errors(pdiags):
        raise CompileError(sort_diagnostics(pdiags))
    check_build_folder(project.build_dir, project.root, named=output is not None)
    if check:
        return _compile(path, project, output, check=True, force=force)
    with build_lock(project.build_dir):
        return _compile(path, project, output, check=False, force=force)


def _compile(
    path: str | os.PathLike[str], project: Project, output: str | os.PathLike[str] | None, *, check: bool, force: bool
) -> CompileResult:
    build_dir = project.build_dir
    old = read_manifest(build_dir)
    reuse = None if force or check else intact_roles(old, build_dir)
    if old is not None and reuse is not None and len(reuse) == len(old.roles):
        current = current_inputs(project, set(old.tokenizers.values()))
        if current is not None and current == old.inputs:
            return CompileResult(build_dir, (), reused=tuple(old.roles), up_to_date=True, files=len(current))
    loaded = load_project(path, build_dir=output, user_rules=False)
    bundles, reused, diags = compile_bundles(loaded, reuse)
    all_diags = sort_diagnostics(loaded.diagnostics + diags)
    if has_errors(all_diags):
        raise CompileError(all_diags)
    files, entries, tokenizers = files_of(bundles, old, loaded.project, reused)
    inputs = {**loaded.inputs, **tokenizer_inputs(loaded.project, set(tokenizers.values()))}
    manifest = Manifest(
        entries,
        __version__,
        dict(sorted(inputs.items())),
        tokenizers,
        format_version=FORMAT_VERSION,
        abstract=abstract_roles(loaded),
    )
    manifest_bytes = manifest.to_json().encode("utf-8")
    listed = owned(old)
    if check:
        from .typegen import check_types_file

        stale = stale_files(build_dir, files, manifest_bytes, listed)
        types_stale = check_types_file(loaded.project.root, loaded.project.config, bundles)  # PM019
        all_diags += [types_stale] if types_stale is not None else []
        return CompileResult(build_dir, tuple(all_diags), stale=tuple(stale), files=loaded.files, bundles=bundles)
    removed = install_build(build_dir, files, manifest_bytes, listed)
    return CompileResult(
        build_dir,
        tuple(all_diags),
        compiled=tuple(sorted(bundles)),
        reused=tuple(sorted(reused)),
        removed=tuple(removed),
        files=loaded.files,
        bundles=bundles,
    )


def build_in_memory(path: str | os.PathLike[str] = ".") -> tuple[Runtime, list[Diagnostic]]:
    """Compile without writing: (Runtime, diagnostics). Raises CompileError on errors."""
    from ..runtime.engine import Runtime

    loaded = load_project(path)
    bundles, _, diags = compile_bundles(loaded)
    all_diags = sort_diagnostics(loaded.diagnostics + diags)
    if has_errors(all_diags):
        raise CompileError(all_diags)
    return Runtime(bundles, base_dir=loaded.project.root, abstract=abstract_roles(loaded), models=model_table(loaded.project)), all_diags
