"""TEMPORARY stand-in (replaced by the validator branch). Same public API."""
from __future__ import annotations

from collections.abc import Iterable


class Validator:
    def __init__(self, schema: dict, *, lazy_paths: Iterable[tuple[str, ...]] = ()) -> None:
        import jsonschema
        self._v = jsonschema.Draft202012Validator(schema)
        self.fast = False

    def is_valid(self, instance) -> bool:
        return self._v.is_valid(instance)

    def errors(self, instance, root: str = "state"):
        out = []
        for e in self._v.iter_errors(instance):
            path = root + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in e.absolute_path)
            out.append((path, e.message))
        return sorted(out)

    def item_valid(self, lazy_path, item) -> bool:
        return True

    def item_errors(self, lazy_path, index, item, root="state"):
        return []


def check_schema(schema: dict):
    import jsonschema
    v = jsonschema.Draft202012Validator(jsonschema.Draft202012Validator.META_SCHEMA)
    return [("/".join(map(str, e.absolute_path)) or "(root)", e.message) for e in v.iter_errors(schema)]
