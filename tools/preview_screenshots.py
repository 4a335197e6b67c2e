"""Take the README's screenshots of `promptmill preview` in headless Chromium.

    python tools/preview_screenshots.py        # writes docs/img/preview-*.png

Runs the preview of this repository's own prompts (role executor, its example
state) on a free port and drives Debian's /usr/bin/chromium with Playwright;
the broken-edit shot edits a starter project in a temporary folder.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from playwright.sync_api import sync_playwright

from promptmill import compile as compile_project
from promptmill.cli.scaffold import init
from promptmill.web import make_server

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "docs" / "img"
CHROMIUM = os.environ.get("PROMPTMILL_CHROMIUM", "/usr/bin/chromium")
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def broken(browser) -> None:
    """A broken edit of a starter project (made in a temporary folder): diagnostics, last render kept."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "demo"
        init(root)
        compile_project(root)
        role = root / "prompts" / "roles" / "helpdesk.yaml"
        with make_server(root, role="helpdesk") as server:
            page = browser.new_context(viewport={"width": 1400, "height": 700}, bypass_csp=True).new_page()
            page.goto(server.url)
            page.wait_for_selector("body[data-rendered]")
            page.wait_for_function("document.getElementById('reload').textContent === 'auto-reload on · templates ok'")
            role.write_text(role.read_text().replace("trim: never", "trim: nevr"))
            page.wait_for_selector("#diagnostics:not([hidden])")
            page.screenshot(path=OUT / "preview-broken.png")


def main() -> None:
    os.chdir(ROOT)
    OUT.mkdir(parents=True, exist_ok=True)
    with make_server(ROOT, role="executor", state="prompts/examples/executor.state.yaml") as server, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = browser.new_context(viewport={"width": 1400, "height": 900}, bypass_csp=True).new_page()
        page.goto(server.url)
        page.wait_for_selector("body[data-rendered]")
        page.click("#tabs button[data-provider=anthropic]")
        page.click("#sections tr[data-section=subtask] td.sid")
        page.screenshot(path=OUT / "preview.png")

        page.click("#tabs button[data-provider=text]")
        page.click("#sections tr[data-section=subtask] td.sid")
        page.evaluate(
            "b => { const s = document.getElementById('budget'); s.value = b; s.dispatchEvent(new Event('input', {bubbles: true})); }", 700
        )
        page.wait_for_function("document.getElementById('head').textContent.includes(' / 700 usable tokens')")
        page.screenshot(path=OUT / "preview-budget.png")

        page.click("#budget-reset")
        original = page.input_value("#state")
        page.check("input[name=against][value=state]")
        page.fill("#compare-state", original)
        page.fill("#state", original.replace("Add type hints to the parser module", "Add type hints to the lexer and parser modules"))
        page.wait_for_function("document.getElementById('payload').textContent.includes('lexer and parser')")
        page.click("#compare-run")
        page.wait_for_selector("#compare-sections:not([hidden])")
        page.locator("#compare-sections").scroll_into_view_if_needed()
        page.evaluate("window.scrollTo(0, document.body.scrollHeight)")
        page.screenshot(path=OUT / "preview-compare.png")
        broken(browser)
        browser.close()
    for name in ("preview.png", "preview-budget.png", "preview-compare.png", "preview-broken.png"):
        print(f"wrote docs/img/{name} ({(OUT / name).stat().st_size // 1024} KiB)")


if __name__ == "__main__":
    main()
