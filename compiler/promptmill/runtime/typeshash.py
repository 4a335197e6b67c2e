"""The hash of what a generated types module describes (`promptmill types`).

`types_hash` digests, for every role of a build, its inputs schema and its output
contract (id and schema), and nothing else: a template's wording can change
without changing the types an application sees, and then the hash stays the
same. The generated module carries the hash it was made from and compares it
with the runtime it renders through (a warning, once, when they differ);
`compiling/typegen.py` writes it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .bundle import RoleBundle

if TYPE_CHECKING:
    from .engine import Runtime


def typed_surface(bundle: RoleBundle) -> dict[str, Any]:
    """What the types of one role depend on: its inputs schema and its contract, per parent choice too."""
    out: dict[str, Any] = {"inputs": bundle.inputs}
    if bundle.output is not None:
        out["contract"] = bundle.output.id
        out["reply"] = bundle.output.schema
    if bundle.parents:
        out["parents"] = [typed_surface(choice.bundle) for choice in bundle.parents]
    return out


def types_hash(build: Mapping[str, RoleBundle] | Runtime) -> str:
    """SHA-256 (hex) of every role's typed surface, in role order: of a loaded `Runtime`
    or of bundles by role id."""
    bundles = build if isinstance(build, Mapping) else {role: build.bundle(role) for role in build.roles}
    data = {role: typed_surface(bundles[role]) for role in sorted(bundles)}
    text = json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    # surrogatepass: the same bytes as UTF-8 for any real text; a lone surrogate (a bundle written by
    # hand with a "\udc80" escape) still hashes instead of failing
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
