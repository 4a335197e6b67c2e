"""The preview page in a real headless Chromium: the figures it shows are the CLI's.

Choose a role, drag the budget slider and see a section go from kept to
dropped with the tokens `promptmill render --budget` prints; each provider
tab (one per wire of the registry) has the payload of `render --format
PROVIDER`; the budget's numbers say what each is; an edited state is kept and
named so; dropped items are named by what they are; a hostile state stays
text; the first load is under a second. (Live edits: tests/test_web_live.py.)
"""

from __future__ import annotations

import json
import re
import sys
import types
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from promptmill import load
from promptmill.cli.main import main
from promptmill.runtime import registry as wires
from promptmill.wires.openai_chat import OpenAIChatWire

REPO = Path(__file__).resolve().parents[1]
EXECUTOR_STATE = "prompts/examples/executor.state.yaml"
ROW = re.compile(r"^(\S+)\s+(kept|trimmed|truncated|dropped|empty|skipped)\s+(\d+|-)\s")
PROVIDERS = wires.WIRE_NAMES  # a tab per wire of the registry


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


def budget_line(pretty: str) -> str:
    return next(line for line in pretty.splitlines() if line.startswith("budget "))


def page_head(page) -> str:
    """The page's head in the CLI's words: the page says which budget it counts against (`usable`)."""
    head = page.text_content("#head")
    assert " usable tokens (" in head, head
    return head.replace(" usable tokens (", " tokens (")


def set_budget(page, value: int) -> None:
    """Move the slider to `value` as a drag does (an `input` event) and wait for that render."""
    page.evaluate(
        "b => { const s = document.getElementById('budget'); s.value = b; s.dispatchEvent(new Event('input', {bubbles: true})); }", value
    )
    page.wait_for_function(f"document.getElementById('budget-value').textContent.startsWith('{value} set · ')")


def figures(page) -> list[tuple[str, str]]:
    """The budget's numbers on the page, each with what it is."""
    return [
        tuple(r) for r in page.eval_on_selector_all("#budget-figures tr", "rows => rows.map(r => [...r.cells].map(c => c.textContent))")
    ]


def rendered(page) -> int:
    value = page.evaluate("document.body.dataset.rendered")
    return int(value) if value and value.isdigit() else 0


@pytest.fixture(scope="module")
def repo_server():
    """One preview server over this repository's own prompts for the module's read-only tests: starting
    one compiles the project (about half a second), and nothing these tests do changes what it serves."""
    from promptmill.web import make_server

    server = make_server(REPO, port=0, watch=False).start()
    yield server
    server.close()


@pytest.fixture
def repo_page(repo_server, open_page, monkeypatch):
    """A new page over this repository's own prompts (read only), and the CLI run from its root."""
    monkeypatch.chdir(REPO)
    return open_page(repo_server.url)


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
    assert figures(page) == [
        ("4096", "the budget you set: the role's, max_tokens 5120 − reserve 1024"),
        ("4096", "usable, in o200k_base tokens: what the head, the bars and the total count against"),
    ]

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
    page.wait_for_function(f"document.getElementById('head').textContent.includes(' / {budget} usable tokens')")
    assert rendered(page) > before + 2, "the page re-renders while the slider moves"
    assert len(seen) > 2, seen

    rows = page_rows(page)
    dropped = dict((sid, (status, tokens)) for sid, status, tokens in rows)
    assert dropped["memory"] == ("dropped", "-")
    pretty = cli("executor", "--state", EXECUTOR_STATE, "--budget", str(budget))
    assert rows == cli_rows(pretty)
    assert page_head(page) == pretty.splitlines()[0]
    assert budget_line(pretty) == f"budget {budget}: render budget {budget} (below max_tokens 5120 - reserve 1024)"
    assert figures(page)[0] == (str(budget), "the budget you set (the role's is max_tokens 5120 − reserve 1024 = 4096)")
    assert figures(page)[-1][0] == str(budget)
    assert "memory (whole section)" in page.text_content("#dropped")
    total = next(line for line in pretty.splitlines() if line.startswith("total: "))
    assert page.text_content("#total") == total.replace(" tokens (", " usable tokens (")

    page.click("#budget-reset")
    page.wait_for_function("document.getElementById('head').textContent.includes(' / 4096 usable tokens')")
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
        assert page_head(page) == head
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
    page.wait_for_function("document.getElementById('head').textContent.startsWith('executor → anthropic ')")  # the tab renders when picked
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
    assert page.is_visible("#stale")  # ...and says it is not updated
    page.fill("#state", "customer: {name: Ada}\nquestion: 42\n")
    page.wait_for_function("document.getElementById('state-error').textContent.includes('PM810')")
    # a state that parses but does not fit the inputs: its state path, line and column, a caret under it
    shown = page.text_content("#state-error")
    assert shown.startswith("line 2, column 11 (state.question)\nstate: error[PM810]: "), shown
    assert shown.endswith("\n\n2 | question: 42\n" + " " * 14 + "^"), shown
    page.fill("#state", "customer: {name: Ada}\nquestion: Why?\n")
    page.wait_for_selector("#state-error", state="hidden")
    assert "Ada asks: Why?" in page.text_content("#payload")
    assert page.is_hidden("#stale")


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
    assert page_head(page) == pretty.splitlines()[0]
    page.select_option("#model", "")  # back to the role's own model
    page.wait_for_function("!document.getElementById('head').textContent.includes('claude-opus-4-7')")


# -- issue 24, item 8: the page says what it means ----------------------------------------------


def test_the_tabs_are_the_wire_registry(starter_project, preview_server, open_page, monkeypatch):
    """A wire listed in runtime/registry.py (here OpenAI chat under a test's own name) is a tab, with its payload."""
    fake = types.ModuleType("promptmill.wires.fake_chat")
    fake.WIRE = type("FakeChatWire", (OpenAIChatWire,), {"name": "fake-chat"})()
    monkeypatch.setitem(sys.modules, fake.__name__, fake)
    monkeypatch.setattr(wires, "_loaded", dict(wires._loaded))
    monkeypatch.setitem(wires.WIRES, "fake-chat", "promptmill.wires.fake_chat:WIRE")
    monkeypatch.setattr(wires, "WIRE_NAMES", (*wires.WIRE_NAMES, "fake-chat"))
    page = open_page(preview_server(starter_project, watch=False).url)
    tabs = page.eval_on_selector_all("#tabs button", "b => b.map(x => x.dataset.provider)")
    assert tabs == list(wires.WIRE_NAMES)
    page.click("#tabs button[data-provider=fake-chat]")
    page.wait_for_function("document.getElementById('payload-title').textContent.startsWith('fake-chat payload')")
    state = yaml.safe_load((starter_project / "examples/helpdesk.state.yaml").read_text())
    req = load(starter_project / "build").render("helpdesk", state, provider="fake-chat")
    assert page.text_content("#payload") == json.dumps(req.to_payload(), ensure_ascii=False, indent=2)
    assert page.text_content("#head").startswith(f"helpdesk → fake-chat   {req.tokens} / {req.budget} usable tokens")


@pytest.mark.parametrize("provider", ["anthropic", "gemini"])
def test_the_slider_the_head_and_the_budget_figures_agree(repo_page, provider):
    """Where counts are estimates, the slider's number is the budget set and the head's the usable one; each is named."""
    page = repo_page
    choose_executor(page)
    page.click(f"#tabs button[data-provider={provider}]")
    page.wait_for_function(f"document.getElementById('head').textContent.startsWith('executor → {provider} ')")
    pretty = cli("executor", "--state", EXECUTOR_STATE, "--provider", provider)
    # the CLI: "budget 2409: max_tokens 5120 - reserve 1024 - margin 410 = 3686 anthropic tokens, / ratio 1.53 = 2409 o200k_base tokens"
    m = re.fullmatch(
        r"budget (\d+): max_tokens (\d+) - reserve (\d+) - margin (\d+) = (\d+) (\w+) tokens, / ratio ([\d.]+) = (\d+) (\w+) tokens",
        budget_line(pretty),
    )
    assert m, budget_line(pretty)
    usable, max_tokens, reserve, margin, model_usable, unit, ratio, counted, tokenizer = m.groups()
    budget_set = int(max_tokens) - int(reserve)
    assert usable == counted and int(model_usable) == budget_set - int(margin)
    assert int(page.input_value("#budget")) == budget_set  # the slider sits at the budget set...
    assert page.text_content("#budget-value") == f"{budget_set} set · {usable} usable"  # ...and says so, with the head's figure
    assert f" / {usable} usable tokens (" in page.text_content("#head")
    assert page.text_content("#total").startswith(f"total: {page_head(page).split()[3]} of {usable} usable tokens")
    rows = figures(page)
    assert [n for n, _ in rows] == [str(budget_set), f"− {margin}", model_usable, f"÷ {ratio}", usable]
    assert rows[0][1] == f"the budget you set: the role's, max_tokens {max_tokens} − reserve {reserve}"
    assert rows[1][1].startswith("margin held back (10%): ") and "estimates" in rows[1][1]
    assert rows[2][1] == f"usable, in {unit} tokens"
    assert rows[-1][1].startswith(f"usable, in {tokenizer} tokens: what the head")
    # a lower budget: the slider's value is what was set, the rest follows from it as the CLI says
    set_budget(page, 3000)
    pretty = cli("executor", "--state", EXECUTOR_STATE, "--provider", provider, "--budget", "3000")
    usable = re.match(r"budget (\d+):", budget_line(pretty))[1]
    assert page.text_content("#budget-value") == f"3000 set · {usable} usable"
    assert page_head(page) == pretty.splitlines()[0]
    assert figures(page)[0][0] == "3000" and figures(page)[-1][0] == usable


def test_picking_typed_in_the_page_keeps_what_was_typed(starter_project, preview_server, open_page):
    page = open_page(preview_server(starter_project, role="helpdesk", watch=False).url)
    assert page.input_value("#example") == "examples/helpdesk.state.yaml"
    from_file = page.input_value("#state")
    page.select_option("#example", "")  # "(typed in the page)": starts from the text on screen, erases nothing
    assert page.input_value("#state") == from_file
    typed = "customer: {name: Grace}\nquestion: Can I pay yearly?\n"
    page.fill("#state", typed)
    page.wait_for_function("document.getElementById('payload').textContent.includes('Grace asks: Can I pay yearly?')")
    page.select_option("#example", "examples/helpdesk.state.yaml")
    page.wait_for_function("document.getElementById('payload').textContent.includes('Ada asks')")
    assert page.input_value("#state") == from_file
    page.select_option("#example", "")  # and back: what was typed is there again
    assert page.input_value("#state") == typed
    page.wait_for_function("document.getElementById('payload').textContent.includes('Grace asks: Can I pay yearly?')")


def picked(page) -> str:
    return page.eval_on_selector("#example", "s => s.options[s.selectedIndex].textContent")


def test_an_edited_state_file_is_named_edited_until_discarded(starter_project, preview_server, open_page):
    page = open_page(preview_server(starter_project, role="helpdesk", watch=False).url)
    name = "examples/helpdesk.state.yaml"
    original = page.input_value("#state")
    assert picked(page) == name and page.is_hidden("#state-revert")
    page.fill("#state", original.replace("Ada", "Linus"))
    page.wait_for_function("document.getElementById('payload').textContent.includes('Linus asks')")
    assert picked(page) == f"{name} (edited)"  # the picker no longer claims the file is what renders
    page.select_option("#example", "")
    page.select_option("#example", name)  # the edits of the file are kept too
    page.wait_for_function("document.getElementById('payload').textContent.includes('Linus asks')")
    assert page.input_value("#state") == original.replace("Ada", "Linus") and picked(page) == f"{name} (edited)"
    page.click("#state-revert")  # "discard edits": the file again
    page.wait_for_function("document.getElementById('payload').textContent.includes('Ada asks')")
    assert page.input_value("#state") == original and picked(page) == name and page.is_hidden("#state-revert")
    page.fill("#state", original + " ")  # typing back to the file's text is no edit
    page.fill("#state", original)
    assert picked(page) == name


@pytest.mark.parametrize("watch", [True, False])
def test_the_reload_badge_and_the_tabs_share_no_word(starter_project, preview_server, open_page, watch):
    page = open_page(preview_server(starter_project, watch=watch).url)
    page.wait_for_function("document.getElementById('reload').textContent.includes('templates ok')")
    badge = page.text_content("#reload")
    assert badge == ("auto-reload on" if watch else "auto-reload off") + " · templates ok"
    tabs = page.eval_on_selector_all("#tabs button", "b => b.map(x => x.dataset.provider)")
    assert "live" in tabs and not set(re.findall(r"[\w-]+", badge)) & set(tabs)


def test_dropped_items_are_named_by_what_they_are(repo_page):
    page = repo_page
    choose_executor(page)
    page.evaluate("() => { const s = document.getElementById('budget'); s.value = 800; s.dispatchEvent(new Event('input')); }")
    page.wait_for_function("document.getElementById('head').textContent.includes(' / 800 ')")
    state = yaml.safe_load((REPO / EXECUTOR_STATE).read_text())
    req = load(REPO / "build").render("executor", state, budget=800)
    sections = {s.id: s for s in req.sections}
    assert sections["memory"].status == "dropped" and sections["tools"].items_dropped
    dropped = page.text_content("#dropped")
    for i in sections["memory"].items_dropped:
        entry = state["memory"][i]
        first = " ".join(entry["summary"].split()[:3])
        assert f"state.memory[{i}] {entry['type']}: “{first}" in dropped, (i, dropped)
    for i in sections["tools"].items_dropped:
        assert f"state.tools[{i}] {state['tools'][i]['name']}" in dropped
    names = ", ".join(state["tools"][i]["name"] for i in sections["tools"].items_dropped)
    kept = len(state["tools"]) - len(sections["tools"].items_dropped)
    note = page.text_content("#sections tr[data-section=tools] + tr.note")
    assert note == f"kept {kept} of {len(state['tools'])} items; dropped {names}"
    assert "[" not in page.text_content("#sections tbody")  # no list of indices


def test_compare_follows_the_tab(repo_page):
    page = repo_page
    choose_executor(page)
    page.click("#compare-run")
    page.wait_for_selector("#compare-sections:not([hidden])")
    assert page.text_content("#compare-sections tr.total td") == "total (text)"
    page.click("#tabs button[data-provider=openai]")
    page.wait_for_function("document.querySelector('#compare-sections tr.total td').textContent === 'total (openai)'")


def test_a_tab_that_cannot_render_shows_its_error_alone(repo_page):
    page = repo_page
    choose_executor(page)
    set_budget(page, 700)  # the text tab fits; anthropic's usable budget (700 less the margin, ÷ 1.53) does not
    page.click("#tabs button[data-provider=anthropic]")
    page.wait_for_selector("#render-error:not([hidden])")
    error = page.text_content("#render-error")
    assert error.startswith("anthropic: error[PM830]: ") and "note: the budget named here is the usable one" in error
    assert page.text_content("#head") == "" and page.is_hidden("#panel-sections") and page.is_hidden("#payload")
    page.click("#tabs button[data-provider=text]")  # and back: the text tab's render is whole again
    page.wait_for_function("document.getElementById('head').textContent.startsWith('executor → text   ')")
    assert page.is_visible("#panel-sections") and page.is_hidden("#render-error") and page.text_content("#payload")


def test_a_single_info_is_called_an_info_not_a_warning(starter_project, preview_server, open_page):
    role = starter_project / "prompts/roles/helpdesk.yaml"
    role.write_text(role.read_text().replace("  reserve: 500\n", "  reserve: 500\n  tokenizer: approx\n"))
    page = open_page(preview_server(starter_project, watch=False).url)
    page.wait_for_selector("#diagnostics:not([hidden])")
    shown = page.text_content("#diagnostics")
    assert shown.startswith("1 info\nprompts/roles/helpdesk.yaml:"), shown
    assert "warning" not in shown and "info[PM505]" in shown


def test_only_the_tab_shown_is_rendered(starter_project, preview_server, open_page):
    """Each keystroke renders the wire of the tab shown, not every wire; another tab is rendered when picked."""
    page = open_page(preview_server(starter_project, watch=False).url)
    bodies = []
    page.on("request", lambda r: bodies.append(json.loads(r.post_data)) if r.url.endswith("/api/render") else None)
    page.click("#tabs button[data-provider=anthropic]")
    page.wait_for_function("document.getElementById('payload-title').textContent.startsWith('anthropic payload')")
    page.fill("#state", page.input_value("#state").replace("Ada", "Grace"))
    page.wait_for_function("document.getElementById('payload').textContent.includes('Grace asks')")
    assert bodies and all(b.get("wires") == ["anthropic"] for b in bodies), bodies
    assert json.loads(page.text_content("#payload"))["model"]  # the anthropic body, not another wire's
    assert page.get_attribute("#tabs button[data-provider=anthropic]", "aria-selected") == "true"
