"""mkdocs hooks (mkdocs.yml, `hooks:`): links that read right on GitHub also work on the site.

Pages under docs/ link to files of the repository outside docs/ (`../SECURITY.md`,
`../schemas/bundle.schema.json`) and, while the README's sections move into pages, to
README sections (`../README.md#web-preview`). On the site:

- a link to a README section goes to the page that section moved to (README_SECTIONS);
  a README anchor missing from the table is left alone, so `mkdocs build --strict` fails on it;
- a repository file outside docs/ is published under `repo/` in the site (a .md file as a page),
  and the link points there.
"""

from __future__ import annotations

import os
import posixpath
import re
from pathlib import Path
from typing import Any

REPO_PREFIX = "repo/"
# README section anchor -> the docs page it moved to
README_SECTIONS = {
    "tutorial": "tutorial.md",
    "1-install": "tutorial.md",
    "2-create-a-project": "tutorial.md",
    "3-lint-compile-render": "tutorial.md",
    "4-break-it-and-fix-it": "tutorial.md",
    "5-use-it-from-python": "tutorial.md",
    "6-editor-support": "tutorial.md",
    "templates": "templates.md",
    "compile-lint-and-ci": "ci.md",
    "reviewing-prompt-changes": "reviewing.md",
    "the-runtime": "runtime.md",
    "typed-application-code": "typed.md",
    "the-token-budget": "budget.md",
    "providers": "providers.md",
    "batch-rendering": "batch.md",
    "composing-prompts": "composition.md",
    "previewing-prompts": "preview.md",
    "web-preview": "preview.md",
    "performance": "performance.md",
    "limits-and-rules": "limits.md",
    "errors": "errors.md",
    "testing": "testing.md",
    "repository-layout": "layout.md",
    "public-and-internal-module-paths": "layout.md",
    "the-shipped-prompts": "library.md",
}
# a Markdown link or image target: ](target) with no spaces, not a URL or an in-page anchor
LINK = re.compile(r"\]\((?!https?:|mailto:|#)([^)\s]+)\)")
# a fence naming its file (```yaml prompts/r.yaml): the file becomes the block's title
FENCE_WITH_PATH = re.compile(r"^(\s*)```(\w+) ([^\s\"]+)$", re.M)


def _dirs(config: Any) -> tuple[Path, Path]:
    """(the repository: mkdocs.yml's folder, docs_dir)."""
    return Path(config["config_file_path"]).resolve().parent, Path(config["docs_dir"]).resolve()


def _source(src_uri: str, root: Path, docs_dir: Path) -> Path:
    """The file a site page is made from: docs/<uri>, or the repository file published under repo/."""
    if src_uri.startswith(REPO_PREFIX):
        return root / src_uri[len(REPO_PREFIX) :]
    return docs_dir / src_uri


def _site_uri(src_uri: str, target: str, root: Path, docs_dir: Path) -> tuple[str, str] | None:
    """(site uri, #anchor or '') of a relative link on page `src_uri`; None to leave it as written."""
    path, _, anchor = target.partition("#")
    if not path:
        return None
    resolved = Path(os.path.normpath(_source(src_uri, root, docs_dir).parent / path))
    if resolved.is_relative_to(docs_dir):
        return resolved.relative_to(docs_dir).as_posix(), anchor
    if not resolved.is_relative_to(root):
        return None
    rel = resolved.relative_to(root).as_posix()
    if rel == "README.md":
        if anchor not in README_SECTIONS:
            return None  # unmapped: mkdocs reports the broken link
        return README_SECTIONS[anchor], ""
    if not resolved.is_file():
        return None
    return REPO_PREFIX + rel, anchor


def _rewrite(src_uri: str, target: str, root: Path, docs_dir: Path) -> str:
    found = _site_uri(src_uri, target, root, docs_dir)
    if found is None:
        return target
    uri, anchor = found
    return posixpath.relpath(uri, posixpath.dirname(src_uri) or ".") + (f"#{anchor}" if anchor else "")


def on_files(files: Any, config: Any) -> Any:
    """Publish each repository file outside docs/ that a page links to under repo/ (kept out of the nav)."""
    from mkdocs.structure.files import File, InclusionLevel

    root, docs_dir = _dirs(config)
    wanted: set[str] = set()
    for file in list(files):
        if file.src_uri.endswith(".md") and file.abs_src_path is not None:
            for target in LINK.findall(Path(file.abs_src_path).read_text(encoding="utf-8")):
                found = _site_uri(file.src_uri, target, root, docs_dir)
                if found and found[0].startswith(REPO_PREFIX):
                    wanted.add(found[0])
    for uri in sorted(wanted):
        source = str(_source(uri, root, docs_dir))
        files.append(File.generated(config, uri, abs_src_path=source, inclusion=InclusionLevel.NOT_IN_NAV))
    return files


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    root, docs_dir = _dirs(config)
    markdown = FENCE_WITH_PATH.sub(r'\1```\2 title="\3"', markdown)
    return LINK.sub(lambda m: "](" + _rewrite(page.file.src_uri, m.group(1), root, docs_dir) + ")", markdown)
