"""Checks builds against the published bundle and manifest schemas (docs/bundle-format.md).

`BuildCheck` validates a bundle or a manifest with `jsonschema` (validators compiled once), each distinct
content once (keyed by its SHA-256), and keeps every failure with the test that made the build.
conftest.py's `_builds_match_the_schemas` hook installs `BuildCheck.watch` for the whole session: every build
a test writes (`compiling.api.install_build`) or compiles in memory (`compiling.api.compile_bundles`, behind
`build_in_memory` and `lint`) is checked, and the session fails at its end when one did not validate.
PROMPTMILL_BUNDLE_CONTRACT=0 turns the hook off (to measure what it costs).
"""

from __future__ import annotations

import hashlib
import json
import os
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


class BuildCheck:
    """Validates the bundles and manifests it is shown, each distinct content once."""

    def __init__(self) -> None:
        self.seen: set[bytes] = set()
        self.failures: list[str] = []
        self.checked = 0

    def check(self, kind: str, text: bytes | str, where: str) -> None:
        raw = text.encode("utf-8") if isinstance(text, str) else text
        digest = hashlib.sha256(raw).digest()
        if digest in self.seen:
            return
        self.seen.add(digest)
        self.checked += 1
        found = problems(kind, json.loads(raw))
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

        install: Callable[..., Any] = api.install_build
        compile_bundles: Callable[..., Any] = api.compile_bundles

        def checked_install(build_dir: Any, files: dict[str, bytes], manifest: bytes, *args: Any, **kwargs: Any) -> Any:
            self.check_files(files, manifest, build_dir)
            return install(build_dir, files, manifest, *args, **kwargs)

        def checked_compile(*args: Any, **kwargs: Any) -> Any:
            result = compile_bundles(*args, **kwargs)
            for role, bundle in result[0].items():
                self.check("bundle", bundle.to_json(), f"of role '{role}' (compiled in memory)")
            return result

        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(api, "install_build", checked_install)
            patch.setattr(api, "compile_bundles", checked_compile)
            yield self


def hook_enabled() -> bool:
    return os.environ.get("PROMPTMILL_BUNDLE_CONTRACT", "1") != "0"
