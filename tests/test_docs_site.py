"""The documentation site (mkdocs.yml, `make docs`), built and read as a reader would.

The generated reference pages (tools/gen_docs.py) are what the code says now; the site
builds with `mkdocs build --strict`, and a broken link or anchor fails that build; served
over HTTP on 127.0.0.1, headless Chromium opens the home page and the reference pages with no
console error and no failed or outside request, every internal link of the built site
resolves (200, and its #anchor exists on the target page), and the search box finds a page
offline. Screenshots go to $PROMPTMILL_ARTIFACTS/docs-site (default: the test's tmp folder).
"""

from __future__ import annotations

import functools
import importlib.util
import os
import subprocess
import sys
import threading
from collections import deque
from html.parser import HTMLParser
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.error import HTTPError
from urllib.parse import urldefrag, urljoin, urlparse
from urllib.request import urlopen

import pytest
import yaml

pytest.importorskip("mkdocs", reason="the documentation site needs the docs extra: pip install -e '.[docs]'")
pytest.importorskip("material", reason="the documentation site needs the docs extra: pip install -e '.[docs]'")

ROOT = Path(__file__).resolve().parents[1]
PAGES = [  # (path in the site, a text the page shows)
    ("index.html", "A first render"),
    ("tutorial.html", "Tutorial"),
    ("reference/cli.html", "promptmill render"),
    ("reference/api.html", "promptmill.load"),
    ("reference/error-codes.html", "PM000"),
    ("reference/models.html", "Context window"),
    ("reference/schemas.html", "role.schema.json"),
    ("performance-charts.html", "Batch throughput"),
]


def _gen_docs():
    spec = importlib.util.spec_from_file_location("gen_docs", ROOT / "tools" / "gen_docs.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _mkdocs(config: Path, site: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    cmd = [sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file", str(config), "--site-dir", str(site)]
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, env=env, timeout=600)


# -- the generated pages ---------------------------------------------------------------------------


def test_the_generated_reference_pages_are_fresh():
    got = subprocess.run([sys.executable, "tools/gen_docs.py", "--check"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert got.returncode == 0, got.stderr
    gen = _gen_docs()
    for name in gen.PAGES:
        assert (ROOT / "docs" / "reference" / name).read_text(encoding="utf-8").startswith(gen.HEADER), name


def test_check_names_a_stale_page(tmp_path, monkeypatch, capsys):
    gen = _gen_docs()
    monkeypatch.setattr(gen, "OUT", tmp_path / "reference")
    monkeypatch.setattr(gen, "ROOT", tmp_path)
    assert gen.main([]) == 0  # writes every page
    (tmp_path / "reference" / "error-codes.md").write_text("# edited by hand\n", encoding="utf-8")
    assert gen.main(["--check"]) == 1
    assert capsys.readouterr().err.strip() == "stale (run python tools/gen_docs.py): reference/error-codes.md"
    assert gen.main(["--bogus"]) == 2


def test_the_generated_pages_cover_the_catalog_the_models_and_the_commands():
    from promptmill.cli.main import main
    from promptmill.core.codes import CODES

    codes = (ROOT / "docs" / "reference" / "error-codes.md").read_text(encoding="utf-8")
    assert all(f"| [{code}](../errors.md#" in codes for code in CODES)
    models = (ROOT / "docs" / "reference" / "models.md").read_text(encoding="utf-8")
    import json

    for row in json.loads((ROOT / "compiler" / "promptmill" / "data" / "models.json").read_text(encoding="utf-8"))["models"]:
        assert f"| `{row['pattern']}` | {row['provider']} | {row['context_window']:,} |" in models
    cli = (ROOT / "docs" / "reference" / "cli.md").read_text(encoding="utf-8")
    assert all(f"## promptmill {name}\n" in cli for name in main.list_commands(None))  # type: ignore[arg-type]


# -- the build -------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("site")
    got = _mkdocs(ROOT / "mkdocs.yml", out)
    assert got.returncode == 0, got.stderr[-3000:]
    assert "WARNING" not in got.stderr, got.stderr
    return out


def test_the_site_builds_strict(site):
    for path, _ in PAGES:
        assert (site / path).is_file(), path
    assert (site / "search" / "search_index.json").is_file()
    assert (site / "repo" / "schemas" / "role.schema.json").is_file()  # the schemas page's downloads


def _tiny_site(tmp_path: Path, pages: dict[str, str]) -> Path:
    """mkdocs.yml's own validation and hooks over a docs folder of `pages` (no nav, no API pages)."""
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    config.update(docs_dir=str(tmp_path / "docs"), plugins=["search"], hooks=[str(ROOT / "tools" / "mkdocs_hooks.py")])
    config.pop("nav")
    for name, text in pages.items():
        (tmp_path / "docs" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "docs" / name).write_text(text, encoding="utf-8")
    (tmp_path / "mkdocs.yml").write_text(yaml.safe_dump(config), encoding="utf-8")
    return tmp_path / "mkdocs.yml"


@pytest.mark.parametrize("link", ["b.md#no-such-heading", "#no-such-heading", "missing.md", "../README.md#no-such-section"])
def test_a_broken_internal_link_fails_the_strict_build(tmp_path, link):
    config = _tiny_site(tmp_path, {"index.md": f"# A\n\n[there]({link})\n", "b.md": "# B\n\n## Real heading\n"})
    got = _mkdocs(config, tmp_path / "site")
    assert got.returncode != 0
    assert f"WARNING -  Doc file 'index.md' contains a link '{link}'" in got.stderr, got.stderr


def test_the_hook_sends_readme_sections_to_their_pages_and_publishes_repository_files(tmp_path):
    text = "# A\n\n[budget](../README.md#the-token-budget) [policy](../SECURITY.md)\n\n```yaml prompts/r.yaml\nkind: role\n```\n"
    config = _tiny_site(tmp_path, {"index.md": text, "budget.md": "# The token budget\n"})
    (tmp_path / "SECURITY.md").write_text("# Security\n", encoding="utf-8")  # beside docs/, as in the repository
    got = _mkdocs(config, tmp_path / "site")
    assert got.returncode == 0, got.stderr
    html = (tmp_path / "site" / "index.html").read_text(encoding="utf-8")
    assert 'href="budget.html"' in html
    assert 'href="repo/SECURITY.html"' in html
    assert (tmp_path / "site" / "repo" / "SECURITY.html").is_file()
    assert '<span class="filename">prompts/r.yaml</span>' in html  # the fence's file is the code block's title


# -- read in Chromium ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def served(site):
    handler = functools.partial(_QuietHandler, directory=str(site))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:
        pass


@pytest.fixture
def artifacts(tmp_path) -> Path:
    out = Path(os.environ.get("PROMPTMILL_ARTIFACTS") or tmp_path) / "docs-site"
    out.mkdir(parents=True, exist_ok=True)
    return out


@pytest.fixture
def reader(chromium, served):
    """reader(path) -> a page of the site open in Chromium; its console errors, failed requests and
    requests that left 127.0.0.1 (aborted) are collected on it."""
    contexts = []
    origin = urlparse(served).netloc

    def open_(path: str):
        context = chromium.new_context(viewport={"width": 1280, "height": 900})
        contexts.append(context)
        page = context.new_page()
        page.problems = []

        def route(r):
            if urlparse(r.request.url).netloc != origin and not r.request.url.startswith(("data:", "blob:")):
                page.problems.append(f"outside request: {r.request.url}")
                return r.abort()
            return r.continue_()

        page.route("**/*", route)
        page.on("console", lambda m: m.type == "error" and page.problems.append(f"console: {m.text}"))
        page.on("pageerror", lambda e: page.problems.append(f"page error: {e}"))
        page.on("requestfailed", lambda r: page.problems.append(f"failed: {r.url} {r.failure}"))
        page.on("response", lambda r: r.status >= 400 and page.problems.append(f"{r.status}: {r.url}"))
        page.goto(served + path, wait_until="networkidle")
        return page

    yield open_
    for context in contexts:
        context.close()


@pytest.mark.parametrize("path, text", PAGES, ids=[p for p, _ in PAGES])
def test_a_page_opens_clean(reader, artifacts, path, text):
    page = reader(path)
    assert text in page.inner_text("article"), path
    page.screenshot(path=str(artifacts / (path.replace("/", "-").removesuffix(".html") + ".png")), full_page=False)
    assert page.problems == [], page.problems


def test_the_charts_and_screenshots_load(reader):
    page = reader("performance-charts.html")
    sizes = page.eval_on_selector_all("article img", "imgs => imgs.map(i => [i.getAttribute('src'), i.naturalWidth])")
    assert len(sizes) >= 2 and all(w > 0 for _, w in sizes), sizes
    home = reader("index.html")
    assert home.eval_on_selector_all("article img", "imgs => imgs.map(i => i.naturalWidth)") and all(
        w > 0 for w in home.eval_on_selector_all("article img", "imgs => imgs.map(i => i.naturalWidth)")
    )
    assert page.problems == [] and home.problems == []


def test_search_works_offline(reader, artifacts):
    page = reader("index.html")
    page.click("input.md-search__input")  # the header's search box (a wide window shows it)
    page.keyboard.type("budget")
    page.wait_for_selector(".md-search-result__item", timeout=15_000)
    titles = page.eval_on_selector_all(".md-search-result__item h1, .md-search-result__item h2", "hs => hs.map(h => h.textContent)")
    assert any("budget" in t.lower() for t in titles), titles
    page.screenshot(path=str(artifacts / "search-budget.png"))
    assert page.problems == [], page.problems


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if a.get("id"):
            self.ids.add(a["id"])
        if tag == "a" and a.get("name"):
            self.ids.add(a["name"])
        for key in ("href", "src"):
            if a.get(key) and tag in ("a", "link", "img", "script"):
                self.links.append(a[key])


def test_every_internal_link_resolves(served):
    """From the home page, every href and src to the same origin: 200, and each #anchor is an id on its page."""
    origin = urlparse(served).netloc
    parsed: dict[str, _Links] = {}
    bad: list[str] = []
    anchors: list[tuple[str, str, str]] = []  # (from page, target url, anchor)
    queue = deque([served + "index.html"])
    seen = {served + "index.html"}
    while queue:
        url = queue.popleft()
        try:
            with urlopen(url, timeout=30) as got:
                body, kind = got.read(), got.headers.get_content_type()
        except HTTPError as e:
            bad.append(f"{e.code}: {url}")
            continue
        if kind != "text/html":
            continue
        links = _Links()
        links.feed(body.decode("utf-8"))
        parsed[url] = links
        for href in links.links:
            target, anchor = urldefrag(urljoin(url, href))
            if urlparse(target).netloc != origin:
                continue
            if anchor:
                anchors.append((url, target, anchor))
            if target not in seen:
                seen.add(target)
                queue.append(target)
    for page, target, anchor in anchors:
        if target in parsed and anchor not in parsed[target].ids:
            bad.append(f"{page}: #{anchor} not on {target}")
    assert len(parsed) >= 30, sorted(parsed)  # every page of the nav was reached
    assert bad == [], bad
