"""The preview page in a real headless Chromium: the figures it shows are the CLI's.

Choose a role, drag the budget slider and see a section go from kept to
dropped with the tokens `promptmill render --budget` prints; each provider
tab's payload is `render --format PROVIDER`; a hostile state stays text; the
first load is under a second. (Live edits: tests/test_web_live.py.)
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from promptmill.cli.main import main

REPO = Path(__file__).resolve().parents[1]
EXECUTOR_STATE = "prompts/examples/executor.state.yaml"
ROW = re.compile(r"^(\S+)\s+(kept|trimmed|truncated|dropped|empty|skipped)\s+(\d+|-)\s")
PROVIDERS = ("text", "openai", "anthropic", "gemini", "live")


def cli(*args: str) -> str:
    got = CliRunner().invoke(main, ["render", *args])
    assert got.exit_code in (0, 1), got.output
    return got.output


def cli_rows(pretty: str) -> list[tuple[str, str, str]]:
    return [m.groups() for line in pretty.splitlines() if (m := ROW.match(line))]


def page_rows(page) -> list[tuple[str, str, str]]:
    return [
        tuple(row)
        for row in page.eval_on_selector_all(
            "#sections tbody tr[data-section]",
            "rows => rows.map(r => [r.dataset.section, r.querySelector('.status').textContent, r.querySelector('.tokens').textContent])",
        )
    ]


def rendered(page) -> int:
    value = page.evaluate("document.body.dataset.rendered")
    return int(value) if value and value.isdigit() else 0


@pytest.fixture
def repo_page(preview_server, open_page, monkeypatch):
    """The page over this repository's own prompts (read only), and the CLI run from its root."""
    monkeypatch.chdir(REPO)
    server = preview_server(REPO, watch=False)
    return open_page(server.url)


def choose_executor(page):
    page.select_option("#role", "executor")
    page.wait_for_function("document.getElementById('head').textContent.startsWith('executor → ')")
    page.wait_for_function(f"document.getElementById('example').value === '{EXECUTOR_STATE}'")


def test_drag_the_budget_and_a_section_drops(repo_page):
    page = repo_page
    choose_executor(page)
    full = dict((sid, (status, tokens)) for sid, status, tokens in page_rows(page))
    assert full["memory"][0] == "kept"
    assert page_rows(page) == cli_rows(cli("executor", "--state", EXECUTOR_STATE))
    assert page.text_content("#budget-line") == "budget 4096: max_tokens 5120 - reserve 1024"

    # drag the slider's thumb with the mouse to about a sixth of its range
    box = page.locator("#budget").bounding_box()
    y = box["y"] + box["height"] / 2
    lo, hi = int(page.get_attribute("#budget", "min")), int(page.get_attribute("#budget", "max"))
    value = int(page.input_value("#budget"))
    thumb = box["x"] + 8 + (box["width"] - 16) * (value - lo) / (hi - lo)
    target = box["x"] + 8 + (box["width"] - 16) * (700 - lo) / (hi - lo)
    before = rendered(page)
    page.mouse.move(thumb, y)
    page.mouse.down()
    seen = set()
    for step in range(1, 13):
        page.mouse.move(thumb + (target - thumb) * step / 12, y)
        page.wait_for_timeout(40)
        seen.add(page.text_content("#head"))
    page.mouse.up()
    budget = int(page.input_value("#budget"))
    assert 600 < budget < 860, budget  # memory is dropped below 875 tokens, the rest still fits above 582
    page.wait_for_function(f"document.getElementById('head').textContent.includes(' / {budget} tokens')")
    assert rendered(page) > before + 2, "the page re-renders while the slider moves"
    assert len(seen) > 2, seen

    rows = page_rows(page)
    dropped = dict((sid, (status, tokens)) for sid, status, tokens in rows)
    assert dropped["memory"] == ("dropped", "-")
    pretty = cli("executor", "--state", EXECUTOR_STATE, "--budget", str(budget))
    assert rows == cli_rows(pretty)
    assert page.text_content("#head") == pretty.splitlines()[0]
    assert page.text_content("#budget-line") == pretty.splitlines()[2]
    assert "memory (whole section)" in page.text_content("#dropped")
    assert page.text_content("#total") == next(line for line in pretty.splitlines() if line.startswith("total: "))

    page.click("#budget-reset")
    page.wait_for_function("document.getElementById('head').textContent.includes(' / 4096 tokens')")
    assert dict((s, (st, t)) for s, st, t in page_rows(page)) == full


def test_each_provider_tab_is_the_cli_payload(repo_page):
    page = repo_page
    choose_executor(page)
    for provider in PROVIDERS:
        page.click(f"#tabs button[data-provider={provider}]")
        page.wait_for_function(f"document.querySelector('#tabs [aria-selected=true]').dataset.provider === '{provider}'")
        payload = cli("executor", "--state", EXECUTOR_STATE, "--format", provider)
        pretty = cli("executor", "--state", EXECUTOR_STATE, "--provider", provider)
        if payload.startswith("promptmill: error["):  # the provider cannot take this role: the page says the same
            code = re.search(r"error\[(PM\d+)\]", payload)[1]
            assert f"error[{code}]" in page.text_content("#render-error")
            continue
        shown = page.text_content("#payload")
        assert shown == (payload if provider == "text" else payload.rstrip("\n")), provider
        head = pretty.splitlines()[0]
        tokens = int(re.search(r"(\d+) / \d+ tokens", head)[1])
        assert page.text_content("#payload-tokens") == f"{tokens} tokens"
        assert page.text_content("#head") == head
        assert page_rows(page) == cli_rows(pretty)


def test_copy_button_copies_the_payload(repo_page):
    page = repo_page
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    choose_executor(page)
    page.click("#tabs button[data-provider=openai]")
    page.click("#copy")
    page.wait_for_function("document.getElementById('copy').textContent === 'copied'")
    assert page.evaluate("navigator.clipboard.readText()") == page.text_content("#payload")


def test_cache_prefix_and_breakpoint_are_marked(repo_page):
    page = repo_page
    choose_executor(page)
    page.click("#tabs button[data-provider=anthropic]")
    cached = page.eval_on_selector_all("#sections tr.cached", "rows => rows.map(r => r.dataset.section)")
    marked = page.eval_on_selector_all("#sections tr.breakpoint", "rows => rows.map(r => r.dataset.section)")
    assert cached[:3] == [
        "context:system:agent/core/identity",
        "context:system:agent/core/behaviour",
        "context:system:agent/core/environment",
    ]
    assert marked == [cached[-1]]


def test_hostile_state_is_shown_as_text(starter_project, preview_server, open_page):
    page = open_page(preview_server(starter_project, watch=False).url)
    hostile = (
        'customer: {name: "</div></td></tr></table><b id=pwn>bold</b>"}\n'
        'question: "<script>window.__pwned = 1</script><img src=x onerror=\\"window.__pwned = 2\\">"\n'
    )
    page.fill("#state", hostile)
    page.wait_for_function("document.getElementById('payload').textContent.includes('window.__pwned = 1')")
    page.click("#sections tr[data-section=question] td.sid")
    text = page.text_content("#sections tr.text pre")
    assert text == (
        '</div></td></tr></table><b id=pwn>bold</b> asks: <script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">'
    )
    page.wait_for_timeout(200)
    assert page.evaluate("window.__pwned") is None
    assert page.evaluate("document.getElementById('pwn')") is None
    assert page.evaluate("document.querySelectorAll('script').length") == 1
    assert page.evaluate("document.querySelectorAll('img').length") == 0
    assert page.input_value("#state") == hostile
    assert page.errors == []


def test_state_errors_show_line_and_column_and_keep_the_render(starter_project, preview_server, open_page):
    page = open_page(preview_server(starter_project, watch=False).url)
    payload = page.text_content("#payload")
    page.fill("#state", "customer: {name: Ada}\nquestion: [unclosed\n")
    page.wait_for_selector("#state-error:not([hidden])")
    shown = page.text_content("#state-error")
    assert shown.startswith("line 3, column 1\nstate: error[PM813]: state:3:1: ")
    assert page.text_content("#payload") == payload  # the last good render stays
    page.fill("#state", "customer: {name: Ada}\nquestion: 42\n")
    page.wait_for_function("document.getElementById('state-error').textContent.includes('PM810')")
    page.fill("#state", "customer: {name: Ada}\nquestion: Why?\n")
    page.wait_for_selector("#state-error", state="hidden")
    assert "Ada asks: Why?" in page.text_content("#payload")


def test_first_load_under_a_second(preview_server, open_page, monkeypatch):
    monkeypatch.chdir(REPO)
    server = preview_server(REPO, role="executor", watch=False)
    times = []
    for _ in range(3):
        page = open_page(server.url)
        assert page.text_content("#head").startswith("executor → text")
        times.append(int(page.evaluate("document.body.dataset.firstRenderMs")))
        assert page.errors == []
    assert min(times) < 1000, times
    assert sorted(times)[1] < 1000, times


def test_the_model_picker_renders_for_that_model_as_the_cli_does(repo_page):
    page = repo_page
    choose_executor(page)
    page.select_option("#model", "claude-opus-4-7")
    page.wait_for_function("document.getElementById('head').textContent.includes('ratio 1.53 for claude-opus-4-7')")
    assert page.evaluate("document.querySelector('#tabs [aria-selected=true]').dataset.provider") == "anthropic"
    pretty = cli("executor", "--state", EXECUTOR_STATE, "--model", "claude-opus-4-7")
    assert page.text_content("#head") == pretty.splitlines()[0]
    page.select_option("#model", "")  # back to the role's own model
    page.wait_for_function("!document.getElementById('head').textContent.includes('claude-opus-4-7')")
