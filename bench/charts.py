"""A small SVG line-chart writer for the benchmark scripts' `--chart PATH` (no plotting library).

    from charts import line_chart, machine
    line_chart("out.svg", {"promptmill": [(10, 0.8), (200, 3.1)]}, title=..., x_label=..., y_label=...,
               caption=["python bench/bench_x.py --chart out.svg", machine()], log_x=True)

Each series is a polyline with a marker at each point and its name in the legend; axes get
"nice" ticks (powers of ten on a log axis). The caption lines go under the plot: the command
that made the chart and the machine it ran on. The SVG is plain text (no scripts, no fonts
to fetch), so a documentation site shows it offline.
"""

from __future__ import annotations

import math
import os
import platform
from collections.abc import Mapping, Sequence
from html import escape
from pathlib import Path

# colour-blind-safe palette (Okabe and Ito), then greys
COLOURS = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#999999", "#666666", "#882255"]
W, H = 760, 440
LEFT, RIGHT, TOP = 70, 200, 40


def machine() -> str:
    """The CPU model (/proc/cpuinfo), the cores Python sees, the OS and the load average when the chart
    is drawn (above 0 on a machine shared with other work): for a chart's caption."""
    model = platform.processor() or "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    system = f"{platform.system()} {platform.release().split('-')[0]}, Python {platform.python_version()}"
    return f"{model}, {os.cpu_count()} cores, {system}; load average {os.getloadavg()[0]:.1f} when drawn"


def _ticks(lo: float, hi: float, log: bool, whole: bool = False) -> list[float]:
    if log:
        return [10.0**e for e in range(math.floor(math.log10(lo)), math.ceil(math.log10(hi)) + 1)]
    span = hi - lo or abs(hi) or 1.0
    step = 10 ** math.floor(math.log10(span / 5))
    for mult in (1, 2, 5, 10):
        if span / (step * mult) <= 6:
            step *= mult
            break
    if whole:  # counts (workers, rows): no tick between two whole numbers
        step = max(step, 1)
    start = math.floor(lo / step) * step
    return [start + i * step for i in range(int(math.ceil((hi - start) / step)) + 1)]


def _label(v: float) -> str:
    if v >= 1000:
        return f"{v:,.0f}"
    if v >= 1 or v == 0:
        return f"{v:g}"
    return f"{v:.3g}"


def line_chart(
    path: str | Path,
    series: Mapping[str, Sequence[tuple[float, float]]],
    *,
    title: str,
    x_label: str,
    y_label: str,
    caption: Sequence[str] = (),
    log_x: bool = False,
    log_y: bool = False,
    dashed: Sequence[str] = (),
) -> Path:
    """Write an SVG line chart of `series` (name -> [(x, y), ...]) to `path`; returns the path."""
    points = [(x, y) for pts in series.values() for x, y in pts]
    if not points:
        raise ValueError("line_chart: no points to draw")
    if (log_x and min(x for x, _ in points) <= 0) or (log_y and min(y for _, y in points) <= 0):
        raise ValueError("line_chart: a log axis needs values above 0")
    whole_x = all(float(x).is_integer() for x, _ in points)
    xt = _ticks(min(x for x, _ in points), max(x for x, _ in points), log_x, whole_x)
    yt = _ticks(0 if not log_y else min(y for _, y in points), max(y for _, y in points), log_y)
    bottom = 70 + 16 * len(caption)
    pw, ph = W - LEFT - RIGHT, H - TOP - bottom
    height = H

    def sx(x: float) -> float:
        a, b, v = (math.log10(xt[0]), math.log10(xt[-1]), math.log10(x)) if log_x else (xt[0], xt[-1], x)
        return LEFT + (v - a) / ((b - a) or 1) * pw

    def sy(y: float) -> float:
        a, b, v = (math.log10(yt[0]), math.log10(yt[-1]), math.log10(y)) if log_y else (yt[0], yt[-1], y)
        return TOP + ph - (v - a) / ((b - a) or 1) * ph

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{height}" viewBox="0 0 {W} {height}" '
        'font-family="sans-serif" font-size="12">',
        f"<title>{escape(title)}</title>",
        f'<rect width="{W}" height="{height}" fill="#ffffff"/>',
        f'<text x="{LEFT}" y="22" font-size="15" font-weight="bold">{escape(title)}</text>',
    ]
    for x in xt:
        out.append(f'<line x1="{sx(x):.1f}" y1="{TOP}" x2="{sx(x):.1f}" y2="{TOP + ph}" stroke="#e5e5e5"/>')
        out.append(f'<text x="{sx(x):.1f}" y="{TOP + ph + 16}" text-anchor="middle">{_label(x)}</text>')
    for y in yt:
        out.append(f'<line x1="{LEFT}" y1="{sy(y):.1f}" x2="{LEFT + pw}" y2="{sy(y):.1f}" stroke="#e5e5e5"/>')
        out.append(f'<text x="{LEFT - 6}" y="{sy(y) + 4:.1f}" text-anchor="end">{_label(y)}</text>')
    out.append(f'<rect x="{LEFT}" y="{TOP}" width="{pw}" height="{ph}" fill="none" stroke="#333333"/>')
    out.append(f'<text x="{LEFT + pw / 2:.1f}" y="{TOP + ph + 36}" text-anchor="middle">{escape(x_label)}</text>')
    out.append(
        f'<text x="16" y="{TOP + ph / 2:.1f}" text-anchor="middle" transform="rotate(-90 16 {TOP + ph / 2:.1f})">{escape(y_label)}</text>'
    )
    for i, (name, pts) in enumerate(series.items()):
        colour = COLOURS[i % len(COLOURS)]
        dash = ' stroke-dasharray="6 4"' if name in dashed else ""
        coords = " ".join(f"{sx(x):.1f},{sy(y):.1f}" for x, y in sorted(pts))
        out.append(f'<polyline points="{coords}" fill="none" stroke="{colour}" stroke-width="2"{dash}/>')
        out += [f'<circle cx="{sx(x):.1f}" cy="{sy(y):.1f}" r="3.5" fill="{colour}"/>' for x, y in pts]
        ly = TOP + 10 + 20 * i
        out.append(f'<line x1="{LEFT + pw + 14}" y1="{ly}" x2="{LEFT + pw + 38}" y2="{ly}" stroke="{colour}" stroke-width="2"{dash}/>')
        out.append(f'<text x="{LEFT + pw + 44}" y="{ly + 4}">{escape(name)}</text>')
    for j, line in enumerate(caption):
        out.append(f'<text x="{LEFT}" y="{TOP + ph + 58 + 16 * j}" font-size="11" fill="#444444">{escape(line)}</text>')
    out.append("</svg>")
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("\n".join(out) + "\n", encoding="utf-8")
    return target
