"""Checks builds against the published bundle and manifest schemas (docs/bundle-format.md).

`BuildCheck` validates a bundle or a manifest with `jsonschema` (validators compiled once), each distinct
content once (keyed by its SHA-256), and keeps every failure with the test that made the build.
conftest.py's `_builds_match_the_schemas` hook installs `BuildCheck.watch` for the whole session: every build
a test writes (`compiling.api.install_build`) or compiles in memory (`compiling.api.compile_bundles`, behind
`build_in_memory` and `lint`) is checked, and the session fails at its end when one did not validate.
PROMPTMILL_BUNDLE_CONTRACT=0 turns the hook off; =report prints what it checked and the time it took.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from typing import Any

import pytest

SCHEMAS = Path(__file__).resolve().parents[1] / "compiler" / "promptmill" / "schemas"


@cache
def validator(kind: str) -> Any:
    """The compiled validator of `bundle` or `manifest` (checked against the metaschema once)."""
    from jsonschema import Draft202012Validator

    schema = json.loads((SCHEMAS / f"{kind}.schema.json").read_text("utf-8"))
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def problems(kind: str, data: Any) -> list[str]:
    """Every schema error of `data` as `at <json path>: <message>` (none: it validates)."""
    return [f"at {error.json_path}: {error.message[:300]}" for error in validator(kind).iter_errors(data)]


def is_bundle_file(rel: str) -> bool:
    """A build file that holds a role bundle (not a shipped tokenizer)."""
    return rel.startswith("roles/") and rel.endswith(".json")


# Lists of a bundle whose elements are checked one by one, each distinct element once.
PARTS = ("sections", "sources")


@cache
def _part_validator(part: str) -> Any:
    """The bundle schema's schema of one element of `part`, resolving references against the bundle schema."""
    whole = validator("bundle")
    return whole.evolve(schema=whole.schema["properties"][part]["items"])


class BuildCheck:
    """Validates the bundles and manifests it is shown, each distinct content once.

    A bundle is checked in parts: each element of its `sections` and `sources`, each distinct one once (the
    suite's builds share most of them: fragments, constraints, the same template in many tests, a chain of
    1,000 roles that each name the files of the roles before), then the rest of the bundle, each distinct rest
    once. A bundle with `parents` is checked whole."""

    def __init__(self) -> None:
        self.seen: set[tuple[str, str]] = set()
        self.failures: list[str] = []
        self.checked = 0  # distinct manifests, bundles (less their parts) and parts validated
        self.seconds = 0.0  # spent checking (serialising in-memory bundles, hashing, validating)

    def check(self, kind: str, text: bytes | str | dict, where: str) -> None:
        """Check a bundle or manifest given as JSON text or as its parsed data."""
        start = time.perf_counter()
        try:
            data = text if isinstance(text, dict) else json.loads(text)
            if kind == "bundle" and isinstance(data, dict) and "parents" not in data:
                parts = [part for part in PARTS if isinstance(data.get(part), list)]
                for part in parts:
                    for i, element in enumerate(data[part]):
                        self._validate(part, element, f"{where} {part}[{i}]")
                data = {**data, **dict.fromkeys(parts, [])}
            self._validate(kind, data, where)
        finally:
            self.seconds += time.perf_counter() - start

    def _validate(self, kind: str, data: Any, where: str) -> None:
        key = (kind, repr(data))  # exact: a repr tells 1 from 1.0 and true, as JSON data does
        if key in self.seen:
            return
        self.seen.add(key)
        self.checked += 1
        if kind in PARTS:
            found = [f"at {e.json_path}: {e.message[:300]}" for e in _part_validator(kind).iter_errors(data)]
            kind = "bundle"
        else:
            found = problems(kind, data)
        if found:
            test = os.environ.get("PYTEST_CURRENT_TEST", "?").rsplit(" (", 1)[0]
            self.failures.append(f"{test}: {kind} {where} does not match schemas/{kind}.schema.json:\n    " + "\n    ".join(found[:5]))

    def check_files(self, files: dict[str, bytes], manifest: bytes, build_dir: Any) -> None:
        for rel, data in files.items():
            if is_bundle_file(rel):
                self.check("bundle", data, f"{build_dir}/{rel}")
        self.check("manifest", manifest, f"{build_dir}/manifest.json")

    @contextmanager
    def watch(self) -> Iterator[BuildCheck]:
        """Check every build the compiler writes or compiles in memory while inside."""
        from promptmill.compiling import api
        from promptmill.core.diagnostics import has_errors
        from promptmill.runtime.bundle import _plain_bundle

        install: Callable[..., Any] = api.install_build
        compile_bundles: Callable[..., Any] = api.compile_bundles

        def checked_install(build_dir: Any, files: dict[str, bytes], manifest: bytes, *args: Any, **kwargs: Any) -> Any:
            self.check_files(files, manifest, build_dir)
            return install(build_dir, files, manifest, *args, **kwargs)

        def checked_compile(*args: Any, **kwargs: Any) -> Any:
            result = compile_bundles(*args, **kwargs)
            loaded = args[0] if args else kwargs.get("loaded")
            if has_errors(result[2]) or has_errors(getattr(loaded, "diagnostics", ())):
                return result  # a project with errors writes nothing and runs nothing (compile and build_in_memory refuse)
            for role, bundle in result[0].items():
                start = time.perf_counter()
                key = ("RoleBundle", repr(bundle))  # a third of the cost of its data: the same build again is cheap
                known = key in self.seen
                self.seen.add(key)
                data = None if known else _plain_bundle(bundle)  # what `to_json` writes, as data
                self.seconds += time.perf_counter() - start
                if data is not None:
                    self.check("bundle", data, f"of role '{role}' (compiled in memory)")
            return result

        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(api, "install_build", checked_install)
            patch.setattr(api, "compile_bundles", checked_compile)
            yield self


def hook_mode() -> str:
    """`0` (off), `report` (on, and say what it cost) or anything else (on)."""
    return os.environ.get("PROMPTMILL_BUNDLE_CONTRACT", "1")
