"""Contract checks beyond JSON Schema, run on a reply that already matches the schema.

Paths are dotted, with `[]` for every element of a list: `subtasks[].id`,
`subtasks[].depends_on[]`. Each check returns `(reply_path, message)` pairs:

- unique: the values at `path` are distinct;
- references: every value at `path` occurs among the values at `target`;
- acyclic: the items of the list `nodes`, identified by `key`, whose `edges`
  list the keys they depend on, form no cycle;
- preserve: every item of the render-state list `from` that matches `where`
  reappears unchanged in the reply list `into`, matched by `key` (a replanner
  must not rewrite completed subtasks).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ..runtime import conditions

Errors = list[tuple[str, str]]


def select(data: Any, path: str, root: str = "reply") -> list[tuple[str, Any]]:
    """`(concrete path, value)` for every value at `path` (missing branches are skipped)."""
    found: list[tuple[str, Any]] = [(root, data)]
    for segment in path.split("."):
        if not segment:
            continue
        each = segment.endswith("[]")
        name = segment[:-2] if each else segment
        nxt: list[tuple[str, Any]] = []
        for where, value in found:
            if name:
                if not isinstance(value, Mapping) or name not in value:
                    continue
                where, value = f"{where}.{name}", value[name]
            if each:
                if isinstance(value, list):
                    nxt.extend((f"{where}[{i}]", v) for i, v in enumerate(value))
            else:
                nxt.append((where, value))
        found = nxt
    return found


def _key(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)


def _show(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 80 else text[:77] + "..."


def _unique(check: Mapping[str, Any], data: Any) -> Errors:
    seen: dict[str, str] = {}
    out = []
    for where, value in select(data, check["path"]):
        k = _key(value)
        if k in seen:
            out.append((where, check.get("message") or f"{_show(value)} repeats {seen[k]}; values at {check['path']} must be unique"))
        else:
            seen[k] = where
    return out


def _references(check: Mapping[str, Any], data: Any) -> Errors:
    allowed = {_key(v) for _, v in select(data, check["target"])}
    return [
        (where, check.get("message") or f"{_show(value)} is not one of the values at {check['target']}")
        for where, value in select(data, check["path"])
        if _key(value) not in allowed
    ]


def _acyclic(check: Mapping[str, Any], data: Any) -> Errors:
    key, edges = check["key"], check["edges"]
    graph: dict[str, list[str]] = {}
    where_of: dict[str, str] = {}
    label: dict[str, Any] = {}
    for where, node in select(data, check["nodes"] + ("" if check["nodes"].endswith("[]") else "[]")):
        if not isinstance(node, Mapping) or key not in node:
            continue
        k = _key(node[key])
        label[k] = node[key]
        where_of.setdefault(k, where)
        deps = node.get(edges) or []
        graph.setdefault(k, []).extend(_key(d) for d in deps if isinstance(deps, list))
    state: dict[str, int] = {}  # 1 on the stack, 2 done
    out: Errors = []
    for start in graph:
        if state.get(start):
            continue
        stack: list[tuple[str, int]] = [(start, 0)]
        trail = [start]
        state[start] = 1
        while stack:
            node, i = stack[-1]
            nexts = graph.get(node, [])
            if i >= len(nexts):
                stack.pop()
                trail.pop()
                state[node] = 2
                continue
            stack[-1] = (node, i + 1)
            dep = nexts[i]
            if dep not in graph:
                continue
            if state.get(dep) == 1:
                cycle = trail[trail.index(dep) :] + [dep]
                text = " -> ".join(str(label[c]) for c in cycle)
                out.append((where_of[dep], check.get("message") or f"dependency cycle: {text}"))
                continue
            if not state.get(dep):
                state[dep] = 1
                stack.append((dep, 0))
                trail.append(dep)
    return out


def _preserve(check: Mapping[str, Any], data: Any, state: Any) -> Errors:
    source = check["from"]
    if state is None:
        return []
    items = conditions.lookup({"state": state}, source)
    if not isinstance(items, list):
        return []
    key = check["key"]
    into = check["into"].removesuffix("[]")
    reply_items: dict[Any, tuple[str, Any]] = {}
    for where, item in select(data, into + "[]"):
        if isinstance(item, Mapping) and key in item:
            reply_items.setdefault(_key(item[key]), (where, item))
    out = []
    where_cond = check.get("where")
    for i, item in enumerate(items):
        if not isinstance(item, Mapping) or key not in item:
            continue
        if where_cond is not None and not conditions.evaluate(where_cond, item):
            continue
        ident = f"{key} {_show(item[key])} ({source}[{i}])"
        found = reply_items.get(_key(item[key]))
        if found is None:
            out.append((f"reply.{into}", check.get("message") or f"item with {ident} must be kept, but it is missing"))
            continue
        where, got = found
        changed = [f for f in sorted(set(item) | set(got)) if _key(item.get(f)) != _key(got.get(f))]
        if changed:
            detail = "; ".join(f"{f}: {_show(item.get(f))} -> {_show(got.get(f))}" for f in changed[:4])
            out.append((where, check.get("message") or f"item with {ident} must stay unchanged, but {detail}"))
    return out


def run_checks(checks: tuple[Mapping[str, Any], ...], data: Any, state: Any) -> Errors:
    """Every failure of every check, in check order."""
    out: Errors = []
    for check in checks:
        kind = check.get("check")
        if kind == "unique":
            out += _unique(check, data)
        elif kind == "references":
            out += _references(check, data)
        elif kind == "acyclic":
            out += _acyclic(check, data)
        elif kind == "preserve":
            out += _preserve(check, data, state)
    return out
