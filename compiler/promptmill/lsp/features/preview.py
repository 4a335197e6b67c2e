"""`promptmill/preview`, a request of promptmill's own: a role rendered for a wire and a state, as the
VS Code extension's preview panel and status bar show it (editors/vscode). The render is the runtime's,
from the bundles of the server's last lint (so unsaved buffers count), with the state read through the
server (an open buffer's unsaved text first): the editor never renders anything itself.

The figures are `promptmill render`'s: `text` and `tokens` are those of `render ROLE --state FILE
--format json` (with `--provider WIRE` when a wire is asked for), `budget_line` the line `render`
prints, `dropped` the previews' "dropped:" entries. A user's mistake (no such role, a state that does
not parse or fit, a budget that cannot be met, a project that never compiled) is `{"error": {...}}`.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ...core.errors import PromptmillError
from ...explain.account import budget_sum, dropped_entry
from ...runtime import registry
from ...runtime.bundle import RoleBundle
from ...runtime.engine import Runtime
from ...source.examples import example_stem, find_examples
from ...source.statefile import MAX_STATE_FILE_BYTES, read_state_stream

METHOD = "promptmill/preview"


def _error(exc: PromptmillError) -> dict[str, Any]:
    return {"code": exc.code, "message": exc.message, "hint": exc.hint}


def _share(tokens: int, budget: int) -> float:
    return round(100 * tokens / budget, 1) if budget > 0 else 0.0


def _text_param(params: Mapping[str, Any], key: str) -> str | None:
    value = params.get(key)
    return value if isinstance(value, str) and value else None


def preview(
    params: Any,
    *,
    bundles: Mapping[str, RoleBundle],
    root: Path,
    role_of_file: str | None,
    read: Callable[[Path], str | None],
    compiled: bool,
) -> dict[str, Any]:
    """The preview of a role. `params` (a JSON object): `role` (default: the role `uri`'s file defines,
    or the role an example state file is named after), `uri` (the active file), `wire` (default: the
    role's provider), `model`, `state` (an example state, relative to the project root; default: the
    first example named after the role, else the active file when it is a state file, else no state).
    `role_of_file` is the role the active file defines; `read` reads a file through the editor's
    buffers; `compiled` says whether the project compiled at least once."""
    if not isinstance(params, Mapping):
        params = {}
    examples = find_examples(root, skip=[root / "build", root / "snapshots"])
    wires = list(registry.WIRE_NAMES)
    out: dict[str, Any] = {"roles": sorted(bundles), "wires": wires, "states": examples}
    active = _text_param(params, "uri")
    active_state = None
    if active is not None and role_of_file is None:
        rel = _relative(active, root)
        if rel is not None and rel in examples:
            active_state = rel
    role = _text_param(params, "role") or role_of_file or (example_stem(active_state) if active_state else None)
    out["role"] = role
    if role is None:
        out["error"] = {
            "code": "PM802",
            "message": "no role here: the active file is neither a role nor one of a role's example states",
            "hint": "open a role's file (or its example state), or pick a role",
        }
        return out
    if role not in bundles:
        if compiled:
            out["error"] = {"code": "PM802", "message": f"role {role!r} is not compiled", "hint": "pick one of `roles`"}
        else:
            why = f"role {role!r} is not compiled: the project has not compiled yet"
            out["error"] = {"code": "PM001", "message": why, "hint": "fix the errors the Problems panel lists and it will"}
        return out
    state_rel = _text_param(params, "state")
    if state_rel is None:
        named = [e for e in examples if example_stem(e) == role]
        state_rel = named[0] if named else active_state
    out["state"] = state_rel
    wire = _text_param(params, "wire")
    model = _text_param(params, "model")
    try:
        state = _read_state(root, state_rel, read) if state_rel is not None else {}
        runtime = Runtime(dict(bundles), base_dir=root)
        runtime.check_wire(role, provider=wire, model=model)
        req = runtime.render(role, state, provider=wire, model=model)
    except PromptmillError as exc:
        out["error"] = _error(exc)
        return out
    share = _share(req.tokens, req.budget)
    out.update(
        {
            "wire": req.provider,
            "model": req.model,
            "tokenizer": req.tokenizer,
            "exact": req.exact,
            "tokens": req.tokens,
            "budget": req.budget,
            "share": share,
            "head": f"{req.role} → {req.provider}   {req.tokens} / {req.budget} tokens ({share:.1f}%)",
            "budget_line": f"budget {req.budget}: {budget_sum(req)}",
            "sections": [
                {
                    "id": s.id,
                    "status": s.status,
                    "tokens": s.tokens if s.present else None,
                    "share": _share(s.tokens, req.budget) if s.present else None,
                }
                for s in req.sections
            ],
            "dropped": [entry for s in req.sections if (entry := dropped_entry(s))],
            "text": req.text,
            "payload": req.text if req.provider == "text" else json.dumps(req.to_payload(), ensure_ascii=False, indent=2),
        }
    )
    return out


def _relative(uri_or_path: str, root: Path) -> str | None:
    from ..documents import path_of

    path = path_of(uri_or_path) if "://" in uri_or_path else Path(uri_or_path)
    if path is None:
        return None
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return None


def _read_state(root: Path, rel: str, read: Callable[[Path], str | None]) -> Any:
    """An example state, from the editor's buffer when open, else the file; inside the project only."""
    path = (root / rel).resolve()
    if not path.is_relative_to(root.resolve()):
        raise PromptmillError(
            f"{rel}: the state file must be inside the project", code="PM017", hint="pick a state file inside the project"
        )
    text = read(path)
    if text is None:  # the server reads regular files inside the workspace only, bounded (docs/rules.md)
        raise PromptmillError(
            f"{rel}: cannot read the state file: missing, not a regular UTF-8 text file, or too large",
            code="PM100",
            hint="pick one of `states`, or a regular file inside the project",
        )
    return read_state_stream(io.BytesIO(text.encode("utf-8")), max_bytes=MAX_STATE_FILE_BYTES, name=rel)
