"""bench/charts.py, the benchmark scripts' SVG line charts (`--chart PATH`; docs/performance-charts.md)."""

from __future__ import annotations

import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from charts import line_chart, machine  # noqa: E402

SVG = "{http://www.w3.org/2000/svg}"


def test_a_chart_draws_each_series_with_its_points_legend_and_caption(tmp_path):
    series = {"promptmill": [(2000, 0.8), (20000, 3.1), (100000, 18.0)], "floor": [(2000, 0.37), (100000, 5.5)]}
    path = line_chart(
        tmp_path / "c.svg", series, title="t <1>", x_label="x", y_label="y", caption=["cmd --chart c.svg"], log_x=True, log_y=True
    )
    root = ET.parse(path).getroot()  # well-formed XML, the title escaped
    lines = root.findall(f"{SVG}polyline")
    assert [len(p.get("points", "").split()) for p in lines] == [3, 2]
    assert len(root.findall(f"{SVG}circle")) == 5
    texts = [t.text for t in root.iter(f"{SVG}text")]
    assert {"t <1>", "promptmill", "floor", "cmd --chart c.svg"} <= set(texts)
    assert {"1,000", "10,000", "100,000", "0.1", "1", "10", "100"} <= set(texts)  # powers of ten on log axes
    # a larger y is drawn higher (a smaller SVG y)
    ys = [float(xy.split(",")[1]) for xy in lines[0].get("points", "").split()]
    assert ys[0] > ys[1] > ys[2]


def test_whole_number_axes_have_whole_ticks(tmp_path):
    path = line_chart(tmp_path / "w.svg", {"rows/s": [(1, 1600), (2, 3000), (3, 3100), (4, 3050)]}, title="t", x_label="w", y_label="r")
    texts = [t.text for t in ET.parse(path).getroot().iter(f"{SVG}text")]
    assert {"1", "2", "3", "4"} <= set(texts) and "1.5" not in texts


@pytest.mark.parametrize(
    "series, log, message", [({}, False, "no points"), ({"a": [(0, 1), (1, 2)]}, True, "a log axis needs values above 0")]
)
def test_bad_input_is_refused_clearly(tmp_path, series, log, message):
    with pytest.raises(ValueError, match=message):
        line_chart(tmp_path / "x.svg", series, title="t", x_label="x", y_label="y", log_x=log)


def test_machine_names_the_cpu_and_cores():
    text = machine()
    assert " cores, " in text and "load average" in text
    cpuinfo = Path("/proc/cpuinfo").read_text().splitlines() if Path("/proc/cpuinfo").exists() else []
    model = next((line.split(":", 1)[1].strip() for line in cpuinfo if line.startswith("model name")), None)
    if model:  # Linux on x86 names its CPU there
        assert text.startswith(model)
