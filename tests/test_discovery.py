"""discover(): which files a prompts folder holds, in what order, and hostile symlinks."""

from __future__ import annotations

import os
import pathlib
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from promptmill.source.discovery import _matcher
from promptmill.source.loader import discover, load_file


def make(root: pathlib.Path, *names: str) -> None:
    for name in names:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("kind: fragment\n", encoding="utf-8")


def rel(root: pathlib.Path, paths: list[pathlib.Path]) -> list[str]:
    return [p.relative_to(root).as_posix() for p in paths]


def test_yaml_files_sorted_by_relative_posix_path(tmp_path: pathlib.Path):
    make(
        tmp_path,
        "b.yaml",
        "a/z.yml",
        "a/b/c.yaml",
        "a.yaml",
        "A.YAML",
        "notes.txt",
        "a-b.yaml",
        "a/b.json",
    )
    paths, diags = discover(tmp_path)
    assert diags == []
    assert rel(tmp_path, paths) == [
        "A.YAML",
        "a-b.yaml",
        "a.yaml",
        "a/b/c.yaml",
        "a/z.yml",
        "b.yaml",
    ]
    assert all(p.is_relative_to(tmp_path) for p in paths)


def test_hidden_files_and_folders_are_skipped(tmp_path: pathlib.Path):
    make(tmp_path, ".hidden.yaml", ".git/config.yaml", "roles/.draft/x.yaml", "roles/ok.yaml")
    assert rel(tmp_path, discover(tmp_path)[0]) == ["roles/ok.yaml"]


@pytest.mark.parametrize(
    "patterns, expected",
    [
        (["drafts"], ["keep.yaml", "roles/drafts/y.yaml", "roles/r.yaml", "roles/x.draft.yaml"]),
        (["drafts/**"], ["keep.yaml", "roles/drafts/y.yaml", "roles/r.yaml", "roles/x.draft.yaml"]),
        (["**/drafts"], ["keep.yaml", "roles/r.yaml", "roles/x.draft.yaml"]),
        (
            ["**/*.draft.yaml"],
            ["drafts/a.yaml", "keep.yaml", "roles/drafts/y.yaml", "roles/r.yaml"],
        ),
        (
            ["*.draft.yaml"],
            [
                "drafts/a.yaml",
                "keep.yaml",
                "roles/drafts/y.yaml",
                "roles/r.yaml",
                "roles/x.draft.yaml",
            ],
        ),
        (["roles/*"], ["drafts/a.yaml", "keep.yaml"]),
        (["roles/?.yaml", "drafts"], ["keep.yaml", "roles/drafts/y.yaml", "roles/x.draft.yaml"]),
        (["[dk]*"], ["roles/drafts/y.yaml", "roles/r.yaml", "roles/x.draft.yaml"]),
        (["./roles/**/*.yaml"], ["drafts/a.yaml", "keep.yaml"]),
    ],
)
def test_exclude_globs_match_relative_posix_paths(tmp_path: pathlib.Path, patterns, expected):
    make(
        tmp_path,
        "keep.yaml",
        "drafts/a.yaml",
        "roles/r.yaml",
        "roles/x.draft.yaml",
        "roles/drafts/y.yaml",
    )
    paths, diags = discover(tmp_path, exclude=patterns)
    assert diags == []
    assert rel(tmp_path, paths) == expected


def _reference_regex(pattern: str) -> str:
    """The backtracking translation the matcher replaced: same meaning, exponential on `**/` runs."""
    out, i = [], 0
    pattern = pattern.strip("/")
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return "".join(out)


@settings(max_examples=300)
@given(
    st.lists(st.sampled_from(["**/", "**", "*", "?", "a", "b", "/"]), max_size=6).map("".join),
    st.lists(st.sampled_from(["a", "b", "/", "ab"]), max_size=8).map("".join),
)
def test_the_linear_glob_matcher_means_what_the_regex_meant(pattern, path):
    assert _matcher([pattern])(path) == (re.fullmatch(_reference_regex(pattern), path) is not None)


def test_glob_matching():
    assert _matcher(["**/a/*.yaml"])("x/y/a/b.yaml") and _matcher(["**/a/*.yaml"])("a/b.yaml")
    assert not _matcher(["**/a/*.yaml"])("a/c/b.yaml")
    assert _matcher(["[!x]?"])("yz") and not _matcher(["[!x]?"])("xz") and not _matcher(["[!x]?"])("/z")


def test_symlinked_files_and_folders_inside_root_are_followed(tmp_path: pathlib.Path):
    make(tmp_path, ".shared/common.yaml", "roles/main.yaml")
    (tmp_path / "roles" / "shared").symlink_to(tmp_path / ".shared")
    (tmp_path / "alias.yaml").symlink_to(tmp_path / "roles" / "main.yaml")
    paths, diags = discover(tmp_path)
    assert diags == []
    assert rel(tmp_path, paths) == ["alias.yaml", "roles/main.yaml", "roles/shared/common.yaml"]


def test_symlink_loop_is_skipped_with_a_warning(tmp_path: pathlib.Path):
    make(tmp_path, "roles/a.yaml")
    (tmp_path / "roles" / "again").symlink_to(tmp_path / "roles")
    (tmp_path / "roles" / "up").symlink_to(tmp_path)
    (tmp_path / "one.yaml").symlink_to(tmp_path / "two.yaml")
    (tmp_path / "two.yaml").symlink_to(tmp_path / "one.yaml")
    paths, diags = discover(tmp_path)
    assert rel(tmp_path, paths) == ["roles/a.yaml"]
    assert sorted((d.code, d.severity, d.file, d.line, d.col) for d in diags) == sorted(
        ("PM110", "warning", (tmp_path / name).as_posix(), 0, 0) for name in ("roles/again", "roles/up", "one.yaml", "two.yaml")
    )
    assert all("loop" in d.message for d in diags)


def test_links_escaping_root_are_skipped(tmp_path: pathlib.Path):
    root, outside = tmp_path / "prompts", tmp_path / "outside"
    make(outside, "secret.yaml", "folder/inner.yaml")
    make(root, "ok.yaml")
    (root / "out").symlink_to(outside / "folder")
    (root / "secret.yaml").symlink_to(outside / "secret.yaml")
    paths, diags = discover(root)
    assert rel(root, paths) == ["ok.yaml"]
    assert {(d.code, pathlib.Path(d.file).name) for d in diags} == {
        ("PM110", "out"),
        ("PM110", "secret.yaml"),
    }
    assert all("outside the prompts folder" in d.message for d in diags)


def test_two_links_to_one_folder_list_it_once(tmp_path: pathlib.Path):
    make(tmp_path, ".lib/x.yaml")
    (tmp_path / "a").symlink_to(tmp_path / ".lib")
    (tmp_path / "b").symlink_to(tmp_path / ".lib")
    paths, diags = discover(tmp_path)
    assert rel(tmp_path, paths) == ["a/x.yaml"]
    assert [(d.code, pathlib.Path(d.file).name) for d in diags] == [("PM110", "b")]


def test_many_links_do_not_explode(tmp_path: pathlib.Path):
    for level in range(20):  # each folder links twice to the next: 2**20 paths if followed naively
        folder = tmp_path / f"d{level}"
        make(folder, "f.yaml")
        for name in ("l1", "l2"):
            (folder / name).symlink_to(tmp_path / f"d{level + 1}")
    make(tmp_path, "d20/f.yaml")
    paths, diags = discover(tmp_path)
    assert len(paths) == 21
    assert {d.code for d in diags} == {"PM110"}


def test_root_as_symlink_and_missing_root(tmp_path: pathlib.Path):
    make(tmp_path, "real/a.yaml")
    (tmp_path / "link").symlink_to(tmp_path / "real")
    assert rel(tmp_path / "link", discover(tmp_path / "link")[0]) == ["a.yaml"]
    paths, diags = discover(tmp_path / "missing")
    assert paths == [] and [d.code for d in diags] == ["PM011"]


def test_broken_link_and_vanished_file_reach_load_file_as_pm100(tmp_path: pathlib.Path):
    make(tmp_path, "gone.yaml")
    (tmp_path / "broken.yaml").symlink_to(tmp_path / "nowhere.yaml")
    paths, diags = discover(tmp_path)
    assert diags == [] and rel(tmp_path, paths) == ["broken.yaml", "gone.yaml"]
    (tmp_path / "gone.yaml").unlink()
    for path in paths:
        doc, problems = load_file(path)
        assert doc is None and [d.code for d in problems] == ["PM100"]


def test_non_regular_entries_are_skipped_and_a_file_root_is_returned(tmp_path: pathlib.Path):
    make(tmp_path, "a.yaml")
    (tmp_path / "sub").write_text("not a folder")
    os.mkfifo(tmp_path / "pipe.yaml")  # not a regular file: discover skips it
    paths, diags = discover(tmp_path)
    assert rel(tmp_path, paths) == ["a.yaml"] and diags == []
    paths, diags = discover(tmp_path / "sub")
    assert paths == [tmp_path / "sub"]  # a file given as root is returned as is
