"""The VS Code extension (editors/vscode) in a real VS Code: code-server from npm, on 127.0.0.1, with the
built .vsix installed, driven by Playwright in Debian's headless Chromium as a user drives it.

The starter project (`promptmill init`) is opened with no setting of the project's edited: the role gets
a diagnostic when broken, a hover with tokens on a section, a preview beside it whose text and tokens are
`promptmill render`'s, and the preview follows unsaved typing in the state file. With
PROMPTMILL_VSCODE_SHOTS=1 it rewrites the screenshots of docs/editors.md (docs/img/vscode/).

Needs code-server (editors/vscode/scripts/install-code-server.sh, cached; run here when missing) and the
.vsix (`make vscode`; built here when missing). Collected only with PROMPTMILL_VSCODE=1 (tests/conftest.py):
the first run installs code-server (5 minutes), later ones take about a minute; .ci/vscode runs it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import IO

import pytest

from promptmill.cli.scaffold import init
from test_lsp_preview import render_json  # the same `promptmill render --format json` the server side is checked against

REPO = Path(__file__).resolve().parent.parent
EXT = REPO / "editors" / "vscode"
VSIX = Path(os.environ.get("PROMPTMILL_VSIX", EXT / "promptmill.vsix"))
SHOTS = REPO / "docs" / "img" / "vscode"
CHROMIUM = os.environ.get("PROMPTMILL_CHROMIUM", "/usr/bin/chromium")
ROLE_FILE = "prompts/roles/helpdesk.yaml"
STATE = "examples/helpdesk.state.yaml"
WAIT = 60_000  # ms: the first lint compiles the project in a server started by the extension


def _need(why: str):
    pytest.fail(why, pytrace=False)  # asked for with PROMPTMILL_VSCODE=1: a missing part is a failure


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def code_server() -> str:
    if shutil.which("node") is None or shutil.which("npm") is None:
        _need("Node and npm are needed for code-server")
    out = subprocess.run([str(EXT / "scripts" / "install-code-server.sh")], capture_output=True, text=True, timeout=1200)
    assert out.returncode == 0, out.stderr[-3000:]
    return out.stdout.strip().splitlines()[-1]


@pytest.fixture(scope="module")
def vsix() -> Path:
    if not VSIX.exists():
        subprocess.run(["make", "--no-print-directory", "vscode"], cwd=REPO, check=True, timeout=900)
    return VSIX


def _home_with_promptmill(tmp_path: Path, on_path: bool | str) -> Path:
    """A HOME whose login profile puts the promptmill under test on PATH (when `on_path`).

    No Python extension and no setting: the extension's last resort, PATH, is what finds promptmill.
    VS Code takes its extensions' environment from a login shell (Debian's /etc/profile resets PATH),
    so PATH is set as a user sets it, in the profile of a HOME of the test's own. With `on_path` "no-pygls",
    that promptmill cannot import pygls (a package of that name that raises ImportError stands first)."""
    import promptmill

    bin_dir, home = tmp_path / "bin", tmp_path / "home"
    bin_dir.mkdir()
    home.mkdir()
    if on_path:
        source = str(Path(promptmill.__file__).resolve().parent.parent)
        if on_path == "no-pygls":
            hidden = tmp_path / "hide-pygls"
            (hidden / "pygls").mkdir(parents=True)
            (hidden / "pygls" / "__init__.py").write_text('raise ImportError("pygls is hidden by the test")\n')
            source = f"{hidden}:{source}"
        (bin_dir / "promptmill").write_text(
            f'#!/bin/sh\nPYTHONPATH={source}${{PYTHONPATH:+:$PYTHONPATH}} exec {sys.executable} -m promptmill.cli "$@"\n'
        )
        (bin_dir / "promptmill").chmod(0o755)
    for profile in (".profile", ".bashrc"):
        (home / profile).write_text(f'export PATH="{bin_dir}:$PATH"\n')
    return home


def _user_settings(data: Path) -> None:
    """The editor's own user settings (a fresh profile of this test, not the project's): no welcome page."""
    (data / "User").mkdir(parents=True)
    (data / "User" / "settings.json").write_text(
        json.dumps(
            {
                "workbench.startupEditor": "none",
                "security.workspace.trust.enabled": False,
                "telemetry.telemetryLevel": "off",
                "extensions.autoUpdate": False,
                "extensions.ignoreRecommendations": True,
                "workbench.tips.enabled": False,
                "editor.hover.delay": 100,
                "files.autoSave": "off",  # code-server saves after a delay by default; the test types unsaved
            }
        )
    )


def _serve(code_server: str, tmp_path: Path, project: Path, home: Path, log: IO[str]) -> tuple[subprocess.Popen[bytes], int]:
    """code-server on 127.0.0.1 with the .vsix installed, once it answers."""
    data, exts = tmp_path / "data", tmp_path / "extensions"
    _user_settings(data)
    installed = subprocess.run(
        [code_server, "--install-extension", str(VSIX), "--extensions-dir", str(exts), "--user-data-dir", str(data)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "successfully installed" in installed.stdout, installed.stdout + installed.stderr
    port = _free_port()
    args = ["--auth", "none", "--bind-addr", f"127.0.0.1:{port}", "--user-data-dir", str(data), "--extensions-dir", str(exts)]
    args += ["--disable-telemetry", "--disable-update-check", "--disable-workspace-trust", "--disable-getting-started-override"]
    env = {**os.environ, "HOME": str(home), "SHELL": "/bin/bash"}
    server = subprocess.Popen([code_server, *args, str(project)], env=env, stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 60
    while True:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2) as r:
                if r.status == 200:
                    return server, port
        except OSError:
            pass
        assert server.poll() is None, (tmp_path / "code-server.log").read_text()
        assert time.monotonic() < deadline, "code-server did not answer within 60 s"
        time.sleep(0.3)


@pytest.fixture
def workbench(tmp_path: Path, code_server: str, vsix: Path, request):
    """code-server with the .vsix, the starter project open, and a Playwright page on it; promptmill
    on PATH unless the test parametrizes the fixture with False."""
    if not os.path.exists(CHROMIUM):
        _need(f"no Chromium at {CHROMIUM} (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    project = tmp_path / "starter"
    init(project)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"]
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    subprocess.run([*git, "add", "-A"], cwd=project, check=True)
    subprocess.run([*git, "commit", "-qm", "starter"], cwd=project, check=True)  # for the diff command
    home = _home_with_promptmill(tmp_path, on_path=getattr(request, "param", True))
    with open(tmp_path / "code-server.log", "w") as log, sync_playwright() as pw:
        server, port = _serve(code_server, tmp_path, project, home, log)
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"])
        page = browser.new_page(viewport={"width": 1500, "height": 950})
        try:
            page.goto(f"http://127.0.0.1:{port}/?folder={project}")
            page.wait_for_selector(".monaco-workbench", timeout=WAIT)
            yield page, project
        finally:
            if os.environ.get("PROMPTMILL_VSCODE_DEBUG"):
                page.screenshot(path=str(tmp_path / "last.png"))
                print("code-server log and screenshot in", tmp_path)
            browser.close()
            server.terminate()
            server.wait(timeout=20)


def shot(page, name: str) -> None:
    if os.environ.get("PROMPTMILL_VSCODE_SHOTS") == "1":
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / f"{name}.png"))


def command(page, title: str) -> None:
    """Runs a command from the command palette by its title."""
    page.keyboard.press("F1")
    box = page.locator(".quick-input-widget input")
    box.wait_for(state="visible")
    box.fill(">" + title)
    page.locator(".quick-input-list .monaco-list-row", has_text=title).first.wait_for(timeout=WAIT)
    page.keyboard.press("Enter")


def open_file(page, rel: str) -> None:
    page.keyboard.press("Control+P")
    box = page.locator(".quick-input-widget input")
    box.wait_for(state="visible")
    box.fill(rel)
    page.locator(".quick-input-list .monaco-list-row", has_text=Path(rel).name).first.wait_for(timeout=WAIT)
    page.keyboard.press("Enter")
    page.locator(".tab.active", has_text=Path(rel).name).wait_for(timeout=WAIT)
    page.locator(".editor-group-container.active .monaco-editor textarea").first.focus()


def go_to(page, line: int, column: int) -> None:
    """Puts the cursor at LINE:COLUMN (1-based) of the active editor, with Go to Line."""
    page.keyboard.press("Control+G")
    box = page.locator(".quick-input-widget input")
    box.wait_for(state="visible")
    box.fill(f":{line}:{column}")
    page.keyboard.press("Enter")
    page.wait_for_timeout(150)


def where(text: str, needle: str) -> tuple[int, int]:
    """1-based line and column of the first `needle` in `text`."""
    for n, line in enumerate(text.splitlines(), 1):
        if needle in line:
            return n, line.index(needle) + 1
    raise AssertionError(f"{needle!r} is not in the file")


def preview_frame(page):
    return page.frame_locator("iframe.webview.ready").frame_locator("iframe#active-frame")


def check_diagnostic(page, role_text: str) -> None:
    """Break the role (an unknown fragment) without saving: its diagnostic appears; undone, it goes."""
    line, col = where(role_text, "system: [voice]")
    go_to(page, line, col + len("system: [voice"))
    page.keyboard.type("x")
    page.keyboard.press("Control+Shift+M")  # the Problems panel
    problem = page.locator(".markers-panel .monaco-list-row", has_text="voicex")
    problem.first.wait_for(timeout=WAIT)
    assert "voice" in problem.first.inner_text()
    shot(page, "diagnostic")
    page.keyboard.press("Control+J")  # the panel closed again
    page.locator(".editor-group-container.active .monaco-editor textarea").first.focus()
    page.keyboard.press("Control+Z")
    problem.first.wait_for(state="detached", timeout=WAIT)


def check_hover(page, role_text: str, want: dict) -> None:
    """Hover a section's id: its tokens and share of the budget with the example state."""
    line, col = where(role_text, "- id: articles")
    go_to(page, line, col + len("- id: ar"))
    page.keyboard.press("Control+K")
    page.keyboard.press("Control+I")
    hover = page.locator(".monaco-hover .hover-contents, .monaco-hover .rendered-markdown")
    hover = hover.filter(has_text=re.compile(r"section\s+articles"))
    hover.first.wait_for(timeout=WAIT)
    text = hover.first.inner_text()
    articles = next(s for s in want["sections"] if s["id"] == "articles")
    assert f"{articles['tokens']} of {want['budget']} tokens" in text, text
    shot(page, "hover")
    page.keyboard.press("Escape")


def check_preview(page, want: dict):
    """The preview beside the editor: promptmill render's text, tokens, budget line and sections."""
    command(page, "promptmill: Open Preview to the Side")
    frame = preview_frame(page)
    head = frame.locator("#head")
    head.wait_for(timeout=WAIT)
    frame.locator("body[data-state=ok]").wait_for(timeout=WAIT)
    assert head.get_attribute("data-tokens") == str(want["tokens"])
    assert head.get_attribute("data-budget") == str(want["budget"])
    assert frame.locator("#text").inner_text() == want["text"]
    assert frame.locator("#budget").inner_text().startswith(f"budget {want['budget']}: max_tokens 4000 - reserve 500")
    assert frame.locator("#sections tr").count() == len(want["sections"])
    shot(page, "preview")
    return frame


def test_the_extension_in_code_server(workbench) -> None:
    page, project = workbench
    role_text = (project / ROLE_FILE).read_text(encoding="utf-8")
    open_file(page, ROLE_FILE)

    # the status bar: the role's tokens against its budget, from the language server
    want = render_json(project, "--state", STATE)
    page.locator(".statusbar-item", has_text=f"helpdesk: {want['tokens']}/{want['budget']} tokens").wait_for(timeout=WAIT)
    check_diagnostic(page, role_text)
    check_hover(page, role_text, want)
    frame = check_preview(page, want)

    # type in the state, unsaved: the preview follows, equal to a render of that text
    state_text = (project / STATE).read_text(encoding="utf-8")
    open_file(page, STATE)
    line, col = where(state_text, "name: Ada")
    go_to(page, line, col + len("name: Ada"))
    page.keyboard.type(" Lovelace")
    typed = project.parent / "typed.state.yaml"
    typed.write_text(state_text.replace("name: Ada", "name: Ada Lovelace"), encoding="utf-8")
    want_typed = render_json(project, "--state", str(typed))
    frame.locator("#head", has_text=f"{want_typed['tokens']} / ").wait_for(timeout=WAIT)
    assert "Ada Lovelace asks" in frame.locator("#text").inner_text()
    assert frame.locator("#text").inner_text() == want_typed["text"]
    assert (project / STATE).read_text(encoding="utf-8") == state_text  # not saved: the buffer was read
    page.locator(".statusbar-item", has_text=f"helpdesk: {want_typed['tokens']}/").wait_for(timeout=WAIT)
    shot(page, "preview-follows")
    check_commands(page)


def check_commands(page) -> None:
    """Lint and Test run the CLI into the "promptmill" output; Diff against HEAD opens the Markdown report."""
    command(page, "promptmill: Lint")
    output = page.locator(".output-view, .panel .monaco-editor").filter(has_text="(exit 0)")
    output.first.wait_for(timeout=WAIT)
    text = output.first.inner_text().replace("\xa0", " ")  # the output view's spaces are non-breaking
    assert "$ promptmill lint\nno problems in 4 files\n(exit 0)" in text, text
    assert "rror" not in text, text  # nothing went wrong between the extension and its server
    command(page, "promptmill: Test (compare with the snapshots)")
    # the output view's spaces are non-breaking (\s) and its lines are divs (no newline between them)
    tested = page.locator(".output-view, .panel .monaco-editor")
    tested = tested.filter(has_text=re.compile(r"\$\spromptmill\stest\s*1\ssnapshot\sin\ssnapshots/:\s1\spassed\s*\(exit\s0\)"))
    tested.first.wait_for(timeout=WAIT)
    command(page, "promptmill: Diff against a Git Revision")
    box = page.locator(".quick-input-widget input")
    box.wait_for(state="visible")
    assert box.input_value() == "HEAD"
    page.keyboard.press("Enter")
    page.locator(".tab", has_text="promptmill-diff-HEAD.md").first.wait_for(timeout=WAIT)
    report = page.frame_locator("iframe.webview.ready >> nth=-1").frame_locator("iframe#active-frame")
    report.locator("h3", has_text="promptmill diff").wait_for(timeout=WAIT)
    shot(page, "diff")


@pytest.mark.parametrize("workbench", [False], indirect=True, ids=["no-promptmill"])
def test_without_promptmill_one_message_with_the_install_command(workbench) -> None:
    """No promptmill anywhere the extension looks: one notification naming where it looked and the
    install command, no stack trace."""
    page, _ = workbench
    toast = page.locator(".notification-toast", has_text="promptmill is not installed")
    toast.first.wait_for(timeout=WAIT)
    text = toast.first.inner_text()
    assert "Install it with: pip install 'promptmill[lsp]'" in text, text
    assert "Traceback" not in text and "ENOENT" not in text
    assert page.locator(".notification-toast").filter(has_text="promptmill").count() == 1
    shot(page, "missing")


@pytest.mark.parametrize("workbench", ["no-pygls"], indirect=True, ids=["no-lsp-extra"])
def test_without_the_lsp_extra_one_message_with_the_install_command(workbench) -> None:
    """promptmill on PATH without its [lsp] extra: one notification saying so, with the install command."""
    page, _ = workbench
    toast = page.locator(".notification-toast", has_text="[lsp] extra")
    toast.first.wait_for(timeout=WAIT)
    text = toast.first.inner_text()
    assert "missing on PATH. Install it with: pip install 'promptmill[lsp]'" in text, text
    assert "Traceback" not in text
    assert page.locator(".notification-toast").filter(has_text="promptmill").count() == 1
