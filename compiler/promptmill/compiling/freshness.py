"""Whether a build is current: what a role's bundle depends on, what a build was made from,
and which bundles of the previous build can be reused as they are.

`promptmill compile` first compares the sha256 of every source file with the
inputs the manifest records (no parsing: an unchanged project costs a folder
walk); otherwise it compiles, and skips each role whose dependency hash equals
the `source_hash` of its intact bundle in the old build.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path

from ..compose.budgets import RATIOS_FILE, effective_tokenizer, measured_ratios
from ..compose.resolve import ComposedRole, Index
from ..core import userfiles
from ..core.errors import PromptmillError
from ..core.version import __version__
from ..runtime.bundle import Manifest, ManifestEntry, RoleBundle, manifest_from_dict
from ..runtime.tokenizers import DEFAULT_TOKENIZER
from ..source.loader import discover
from ..source.project import USER_RULES_SOURCE, Project, is_user_rules_file
from .bundler import source_hash, tokenizer_identity
from .writer import bundle_path


def project_inputs(project: Project) -> dict[str, str]:
    """The inputs every role depends on, by manifest input name: promptmill.yaml, the measured
    ratios file and the user's rules file (each present only when the project has it)."""
    out: dict[str, str] = {}
    if project.config_doc is not None:
        out["promptmill.yaml"] = project.config_doc.sha256
    ratios = measured_ratios(project)[1]
    if ratios is not None:
        out[RATIOS_FILE] = ratios
    if project.user_doc is not None:
        out[USER_RULES_SOURCE] = project.user_doc.sha256
    return out


def dependency_hash(composed: ComposedRole, index: Index, project: Project) -> str | None:
    """The source_hash the role would get, computed without compiling it (None if unsure)."""
    if composed.role.get("extends_when"):
        return None  # its candidate chains are compiled each time
    deps: set[tuple[str, str]] = {(r.source_file, r.doc.sha256) for r in composed.chain}
    deps.update(project_inputs(project).items())
    for entry in composed.context:
        deps.add((entry.fragment.source_file, entry.fragment.doc.sha256))
    for s in composed.sections:
        refs = [("constraints", c) for c in s.get("constraints", ()) or ()]
        if s.get("fragment"):
            refs.append(("fragment", s.get("fragment")))
        for kind, tid in refs:
            t = index.get(kind, tid)
            if t is None:
                return None
            deps.add((t.source_file, t.doc.sha256))
    out = composed.setting("output")
    if out is not None:
        t = index.get("output", out)
        if t is None:
            return None
        deps.add((t.source_file, t.doc.sha256))
    # the tokenizer is part of the hash; resolve it the way the compiler does
    tokenizer, _, _ = effective_tokenizer(composed, project)
    return source_hash(sorted(deps), tokenizer_identity(tokenizer or DEFAULT_TOKENIZER, project))


def intact_roles(old: Manifest | None, build_dir: Path) -> dict[str, str] | None:
    """Role id -> source_hash of each bundle of the old build that is still as written (None when
    there is no old build or another promptmill version made it: nothing is reused)."""
    if old is None or old.promptmill_version != __version__:
        return None
    return {rid: e.source_hash for rid, e in old.roles.items() if _intact(build_dir, e)}


def _intact(build_dir: Path, entry: ManifestEntry) -> bool:
    try:
        data = userfiles.read_bytes(build_dir / entry.file, root=build_dir, what="bundle")
    except PromptmillError:  # missing, a link out of the build, not a regular file: compiled again
        return False
    return hashlib.sha256(data).hexdigest() == entry.sha256


def read_manifest(build_dir: Path) -> Manifest | None:
    """The build's manifest, or None when there is none or it cannot be used."""
    try:
        return manifest_from_dict(json.loads(userfiles.read_bytes(build_dir / "manifest.json", root=build_dir, what="manifest")))
    except (PromptmillError, ValueError, RecursionError):  # unusable: the compile writes a new one
        return None


def owned(old: Manifest | None) -> frozenset[str]:
    """The build files the previous manifest lists (garbage collection may remove these)."""
    if old is None:
        return frozenset()
    return frozenset([e.file for e in old.roles.values()] + [name[3:] for name in old.tokenizers if name.startswith("hf:")])


def tokenizer_inputs(project: Project, paths: Iterable[str]) -> dict[str, str]:
    """sha256 of each tokenizer file a build ships, by its manifest input name ("missing" if unreadable)."""
    out = {}
    for rel in paths:
        try:
            data = userfiles.read_bytes(project.root / rel, root=project.root, what="tokenizer file")
            out[f"tokenizer:{rel}"] = hashlib.sha256(data).hexdigest()
        except PromptmillError:
            out[f"tokenizer:{rel}"] = "missing"
    return out


def current_inputs(project: Project, tokenizer_paths: Iterable[str] = ()) -> dict[str, str] | None:
    """sha256 of every source file, read without parsing (None if unreadable)."""
    out: dict[str, str] = tokenizer_inputs(project, tokenizer_paths)
    cfg = project.root / "promptmill.yaml"
    out.update(project_inputs(project))
    for layer in project.layers:
        if not layer.root.is_dir():
            continue
        paths, _ = discover(layer.root, exclude=project.exclude if layer.name == "project" else ())
        for path in paths:
            if project.config_doc is not None and path.resolve() == cfg.resolve() or is_user_rules_file(layer, path):
                continue
            try:
                out[project.source_id(layer, path)] = hashlib.sha256(userfiles.read_bytes(path, what="template")).hexdigest()
            except PromptmillError:
                return None
    return out


def _ship_tokenizer(bundle: RoleBundle, project: Project, files: dict[str, bytes], tokenizers: dict[str, str]) -> RoleBundle:
    """Copy a Hugging Face tokenizer file into the build, so the build is self-contained."""
    if not bundle.tokenizer.startswith("hf:"):
        return bundle
    data = userfiles.read_bytes(project.root / bundle.tokenizer[3:], root=project.root, what="tokenizer file")
    rel = f"tokenizers/{hashlib.sha256(data).hexdigest()[:16]}.json"
    files[rel] = data
    tokenizers[f"hf:{rel}"] = bundle.tokenizer[3:]
    return replace(bundle, tokenizer=f"hf:{rel}")


def files_of(
    bundles: dict[str, RoleBundle], old: Manifest | None, project: Project, reused: list[str]
) -> tuple[dict[str, bytes], dict[str, ManifestEntry], dict[str, str]]:
    """The files of a new build (path -> bytes), its manifest entries and shipped tokenizers: fresh bundles,
    and the files of `reused` roles read back from the old build."""
    build_dir = project.build_dir
    files: dict[str, bytes] = {}
    entries: dict[str, ManifestEntry] = {}
    tokenizers: dict[str, str] = {}
    for role_id, bundle in bundles.items():
        bundle = _ship_tokenizer(bundle, project, files, tokenizers)
        data = bundle.to_json().encode("utf-8")
        rel = bundle_path(role_id, data)
        files[rel] = data
        entries[role_id] = ManifestEntry(rel, hashlib.sha256(data).hexdigest(), bundle.source_hash, tuple(s.file for s in bundle.sources))
    for role_id in reused:
        entry = old.roles[role_id]  # type: ignore[union-attr]
        files[entry.file] = userfiles.read_bytes(build_dir / entry.file, root=build_dir, what="bundle")
        entries[role_id] = entry
        name = json.loads(files[entry.file]).get("tokenizer", "")
        if name.startswith("hf:tokenizers/") and (build_dir / name[3:]).is_file():
            files[name[3:]] = userfiles.read_bytes(build_dir / name[3:], root=build_dir, what="tokenizer file")
            tokenizers[name] = old.tokenizers.get(name, "")  # type: ignore[union-attr]
    return files, dict(sorted(entries.items())), dict(sorted(tokenizers.items()))
