"""A directed graph without circles drawn as an SVG picture, with no dependency: layers top to bottom.

    svg = layered_svg(["a", "b", "c"], [("a", "b"), ("b", "c"), ("a", "c")], title="...")

The layout is the classic one for such graphs (Sugiyama's): each node goes one layer below the lowest
node that points at it; an edge that spans several layers passes through a bend point in each layer
between; the order of the nodes in a layer is improved by moving each to the mean position of its
neighbours (the barycenter), sweeping down and up a few times. Everything is deterministic: the same
graph gives the same bytes, so a generated picture can be checked for staleness.
"""

from __future__ import annotations

from collections.abc import Iterable
from xml.sax.saxutils import escape

FONT = 13  # px
CHAR = 7.4  # px per character at FONT in a sans-serif font (an estimate: the box is padded)
PAD_X, BOX_H, GAP_X, GAP_Y, MARGIN = 10, 26, 18, 58, 16
SWEEPS = 8


def reduced(edges: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The edges without those another path already implies (a -> c goes when a -> b -> c is there): the
    transitive reduction, which keeps what reaches what and drops most of the lines."""
    out: dict[str, set[str]] = {}
    for a, b in edges:
        out.setdefault(a, set()).add(b)
    reach: dict[str, set[str]] = {}

    def reachable(n: str) -> set[str]:
        if n not in reach:
            reach[n] = set()
            for m in out.get(n, ()):
                reach[n] |= {m} | reachable(m)
        return reach[n]

    return [(a, b) for a, b in edges if not any(b in reachable(m) for m in out[a] if m != b)]


def _layers(nodes: list[str], edges: list[tuple[str, str]]) -> dict[str, int]:
    """Longest path from the nodes nothing points at."""
    incoming: dict[str, list[str]] = {n: [] for n in nodes}
    for a, b in edges:
        incoming[b].append(a)
    layer: dict[str, int] = {}

    def depth(n: str, seen: tuple[str, ...] = ()) -> int:
        if n in layer:
            return layer[n]
        if n in seen:
            raise ValueError(f"the graph has a circle through {n!r}")
        layer[n] = 0 if not incoming[n] else 1 + max(depth(p, (*seen, n)) for p in incoming[n])
        return layer[n]

    for n in nodes:
        depth(n)
    return layer


def _chains(edges: list[tuple[str, str]], layer: dict[str, int]) -> tuple[list[list[str]], dict[str, int]]:
    """Each edge as the list of points it passes: its ends and a bend point in every layer between."""
    chains = []
    for a, b in edges:
        chain = [a]
        for k in range(layer[a] + 1, layer[b]):
            bend = f"\0{a}\0{b}\0{k}"
            layer[bend] = k
            chain.append(bend)
        chains.append([*chain, b])
    return chains, layer


def _order(layer: dict[str, int], chains: list[list[str]]) -> list[list[str]]:
    rows: list[list[str]] = [[] for _ in range(max(layer.values()) + 1)]
    for n in sorted(layer, key=lambda n: (n.startswith("\0"), n)):
        rows[layer[n]].append(n)
    up: dict[str, list[str]] = {n: [] for n in layer}
    down: dict[str, list[str]] = {n: [] for n in layer}
    for chain in chains:
        for x, y in zip(chain, chain[1:], strict=False):
            down[x].append(y)
            up[y].append(x)

    def sweep(rows_in: Iterable[int], near: dict[str, list[str]], ref: int) -> None:
        for r in rows_in:
            pos = {n: i for i, n in enumerate(rows[r + ref])}
            current = {n: i for i, n in enumerate(rows[r])}

            rows[r].sort(key=lambda n, pos=pos, current=current: _barycenter(n, near, pos, current))

    for _ in range(SWEEPS):
        sweep(range(1, len(rows)), up, -1)
        sweep(range(len(rows) - 2, -1, -1), down, 1)
    return rows


def _barycenter(n: str, near: dict[str, list[str]], pos: dict[str, int], current: dict[str, int]) -> tuple[float, int]:
    """Where `n` goes in its layer: the mean position of its neighbours in the next one (ties: where it is)."""
    ns = [pos[m] for m in near[n] if m in pos]
    return (sum(ns) / len(ns) if ns else current[n], current[n])


def _width(n: str, labels: dict[str, str]) -> float:
    return 0.0 if n.startswith("\0") else len(labels[n]) * CHAR + 2 * PAD_X


def layered_svg(nodes: list[str], edges: list[tuple[str, str]], *, title: str, labels: dict[str, str] | None = None) -> str:
    """The picture of `edges` (a -> b: an arrow from a down to b) between `nodes`, as SVG text; an edge
    that a path of other edges implies is not drawn (see `reduced`)."""
    labels = {n: (labels or {}).get(n, n) for n in nodes}
    nodes = sorted(set(nodes))
    edges = reduced(sorted(set(edges)))
    layer = _layers(nodes, edges)
    chains, layer = _chains(edges, layer)
    rows = _order(layer, chains)
    xy: dict[str, tuple[float, float]] = {}
    widths = [sum(_width(n, labels) for n in row) + GAP_X * (len(row) - 1) for row in rows]
    full = max(widths)
    for r, row in enumerate(rows):
        x = MARGIN + (full - widths[r]) / 2
        y = MARGIN + r * (BOX_H + GAP_Y)
        for n in row:
            w = _width(n, labels)
            xy[n] = (x + w / 2, y)
            x += w + GAP_X
    width, height = full + 2 * MARGIN, MARGIN * 2 + len(rows) * BOX_H + (len(rows) - 1) * GAP_Y
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" viewBox="0 0 {width:.0f} {height:.0f}"'
        f' role="img" aria-label="{escape(title)}" font-family="sans-serif" font-size="{FONT}">',
        f"<title>{escape(title)}</title>",
        '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse">'
        '<path d="M0,0 L10,5 L0,10 z" fill="#666"/></marker></defs>',
        '<rect width="100%" height="100%" fill="#fff"/>',
    ]
    for chain in chains:
        points = []
        for i, n in enumerate(chain):
            cx, top = xy[n]
            if n.startswith("\0"):
                points.append((cx, top + BOX_H / 2))
            else:
                points.append((cx, top + BOX_H if i == 0 else top))
        d = f"M{points[0][0]:.1f},{points[0][1]:.1f}"
        for (x0, y0), (x1, y1) in zip(points, points[1:], strict=False):
            mid = (y0 + y1) / 2
            d += f" C{x0:.1f},{mid:.1f} {x1:.1f},{mid:.1f} {x1:.1f},{y1:.1f}"
        out.append(f'<path d="{d}" fill="none" stroke="#999" stroke-width="1.2" marker-end="url(#arrow)"/>')
    for n in nodes:
        cx, top = xy[n]
        w = _width(n, labels)
        out.append(
            f'<g><rect x="{cx - w / 2:.1f}" y="{top:.1f}" width="{w:.1f}" height="{BOX_H}" rx="5" fill="#eef2fb" stroke="#4a5f8c"/>'
            f'<text x="{cx:.1f}" y="{top + BOX_H / 2 + FONT * 0.35:.1f}" text-anchor="middle" fill="#1d2433">{escape(labels[n])}</text></g>'
        )
    out.append("</svg>")
    return "\n".join(out) + "\n"
