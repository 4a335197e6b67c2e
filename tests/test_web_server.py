"""The preview server over plain HTTP: loopback only, Host/Origin refusal, nothing
served outside the page's own files, errors as data, and the CLI command.

No browser here (tests/test_web_page.py and test_web_live.py drive Chromium).
"""

from __future__ import annotations

import http.client
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from promptmill import wires
from promptmill.cli.main import main
from promptmill.web.origin import host_ok, origin_ok

REPO = Path(__file__).resolve().parents[1]


def request(server, path, *, method="GET", host=None, headers=None, body=None):
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    try:
        conn.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
        conn.putheader("Host", host if host is not None else f"127.0.0.1:{server.port}")
        for k, v in (headers or {}).items():
            conn.putheader(k, v)
        data = json.dumps(body).encode() if body is not None else b""
        if body is not None:
            conn.putheader("Content-Type", "application/json")
        conn.putheader("Content-Length", str(len(data)))
        conn.endheaders(data)
        resp = conn.getresponse()
        return resp.status, resp.getheader("Content-Type") or "", resp.read()
    finally:
        conn.close()


@pytest.fixture
def server(starter_project, preview_server):
    return preview_server(starter_project, watch=False)


def test_listens_on_loopback_only(server):
    assert server.server_address[0] == "127.0.0.1"
    assert server.url == f"http://127.0.0.1:{server.port}/"


@pytest.mark.parametrize("host", ["127.0.0.1:{port}", "localhost:{port}", "[::1]:{port}", "LOCALHOST:{port}"])
def test_local_host_is_answered(server, host):
    status, ctype, body = request(server, "/", host=host.format(port=server.port))
    assert status == 200 and ctype.startswith("text/html")
    assert b"promptmill preview" in body


@pytest.mark.parametrize(
    "host",
    ["evil.example:{port}", "127.0.0.1.evil.example:{port}", "127.0.0.1:1{port}", "localhost", "", "127.0.0.1:{port}@evil.example", "[::1"],
)
def test_foreign_host_is_refused(server, host):
    """DNS rebinding: a page of evil.example resolved to 127.0.0.1 sends Host: evil.example."""
    for path in ("/", "/api/project", "/static/app.js"):
        status, _, body = request(server, path, host=host.format(port=server.port))
        assert status == 403, (host, path)
        assert b"forbidden" in body and b"ada" not in body.lower()


@pytest.mark.parametrize(
    "origin", ["http://evil.example", "http://127.0.0.1:1", "https://127.0.0.1:{port}", "null", "http://localhost.evil.example:{port}"]
)
def test_foreign_origin_is_refused(server, origin):
    origin = origin.format(port=server.port)
    status, _, _ = request(server, "/api/project", headers={"Origin": origin})
    assert status == 403
    status, _, _ = request(server, "/api/render", method="POST", headers={"Origin": origin}, body={"role": "helpdesk", "state": ""})
    assert status == 403


def test_own_origin_is_answered(server):
    status, _, _ = request(server, "/api/project", headers={"Origin": f"http://localhost:{server.port}"})
    assert status == 200


@pytest.mark.parametrize(
    "path",
    [
        "/static/../session.py",
        "/static/%2e%2e/app.py",
        "/static/..%2fapp.py",
        "/static/",
        "/static/static/app.js",
        "/app.py",
        "/static//etc/passwd",
        "/../pyproject.toml",
        "/static/index.html/..",
        "/promptmill.yaml",
    ],
)
def test_nothing_outside_the_static_files(server, path):
    status, _, body = request(server, path)
    assert status == 404, path
    assert b"import" not in body and b"prompts" not in body


def test_state_files_only_from_the_project_list(server):
    status, _, body = request(server, "/api/project")
    project = json.loads(body)
    assert project["examples"] == ["examples/helpdesk.state.yaml"]
    assert project["example_for"] == {"helpdesk": "examples/helpdesk.state.yaml"}
    ok = json.loads(request(server, "/api/state?path=examples/helpdesk.state.yaml")[2])
    assert "question: How do I rotate my API key?" in ok["text"]
    for bad in ("promptmill.yaml", "../demo/examples/helpdesk.state.yaml", "/etc/passwd", "prompts/roles/helpdesk.yaml"):
        got = json.loads(request(server, "/api/state?path=" + bad)[2])
        assert got["error"]["code"] == "PM813" and "text" not in got


def test_static_files_have_a_strict_policy(server):
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    conn.request("GET", "/")
    resp = conn.getresponse()
    resp.read()
    assert "script-src 'self'" in resp.getheader("Content-Security-Policy")
    assert resp.getheader("X-Content-Type-Options") == "nosniff"
    conn.close()


def test_state_errors_are_data_with_line_and_column(server):
    status, _, body = request(
        server, "/api/render", method="POST", body={"role": "helpdesk", "state": "customer: {name: Ada\nquestion: [\n"}
    )
    assert status == 200
    err = json.loads(body)["error"]
    assert err["code"] == "PM813" and (err["line"], err["col"]) == (2, 9)
    assert err["message"].startswith("state:2:9: ")
    json_err = json.loads(
        request(server, "/api/render", method="POST", body={"role": "helpdesk", "state": '{"customer": {"name": "Ada"},,}'})[2]
    )["error"]
    assert (json_err["code"], json_err["line"], json_err["col"]) == ("PM813", 1, 30)


def test_render_errors_are_data(server):
    got = json.loads(request(server, "/api/render", method="POST", body={"role": "helpdesk", "state": "question: 1"})[2])
    assert got["error"]["code"] == "PM810" and "state" in got["error"]["message"]
    got = json.loads(request(server, "/api/render", method="POST", body={"role": "helpdsk", "state": ""})[2])
    assert got["error"]["code"] == "PM802" and "helpdesk" in (got["error"]["hint"] or got["error"]["message"])
    status, _, body = request(server, "/api/render", method="POST", body={"role": "helpdesk", "state": "", "budget": "lots"})
    assert status == 400 and json.loads(body)["error"]["code"] == "PM010"
    status, _, _ = request(server, "/api/render", method="POST", headers={"Content-Type": "text/plain"})
    assert status == 415


def test_render_has_every_provider(server, starter_project):
    state = (starter_project / "examples/helpdesk.state.yaml").read_text()
    asked = {"role": "helpdesk", "state": state, "wires": list(reversed(wires.WIRE_NAMES))}
    got = json.loads(request(server, "/api/render", method="POST", body=asked)[2])
    assert got["provider"] == "openai"
    assert list(got["views"]) == list(wires.WIRE_NAMES)  # one view per wire asked for, in the registry's order
    openai = got["views"]["openai"]
    assert openai["budget_line"] == "budget 3500: max_tokens 4000 - reserve 500"
    assert openai["budget_figures"] == {
        "set": 3500,
        "usable": 3500,
        "role": 3500,
        "rows": [
            ["3500", "the budget you set: the role's, max_tokens 4000 − reserve 500"],
            ["3500", "usable, in o200k_base tokens: what the head, the bars and the total count against"],
        ],
    }
    assert [s["id"] for s in openai["sections"]][-2:] == ["articles", "question"]
    # the stable system run is the cached prefix; its last section carries the breakpoint
    cached = [s["id"] for s in openai["sections"] if s["cached"]]
    assert cached == openai["cache"]["sections"] and cached[-1] == openai["cache"]["breakpoint_after"]
    assert [s["id"] for s in openai["sections"] if s["breakpoint"]] == [cached[-1]]


def test_compare_against_the_build(server, starter_project):
    role = starter_project / "prompts/roles/helpdesk.yaml"
    role.write_text(role.read_text().replace("using the help-centre articles.", "using only the articles below, and cite them."))
    server.session.refresh()
    state = (starter_project / "examples/helpdesk.state.yaml").read_text()
    got = json.loads(request(server, "/api/compare", method="POST", body={"role": "helpdesk", "state": state, "against": "build"})[2])
    assert not got["same"]
    assert "-Answer the customer's question below using the help-centre articles." in got["diff"]
    assert "+Answer the customer's question below using only the articles below, and cite them." in got["diff"]
    task = next(r for r in got["sections"] if r["id"] == "task")
    assert task["delta"] == task["after"]["tokens"] - task["before"]["tokens"] > 0
    assert got["total"]["delta"] == got["total"]["after"] - got["total"]["before"]
    other = json.loads(
        request(
            server,
            "/api/compare",
            method="POST",
            body={"role": "helpdesk", "state": state, "against": "state", "other": state.replace("Ada", "Grace Hopper")},
        )[2]
    )
    assert "-Grace Hopper asks: How do I rotate my API key?" in other["diff"]
    assert next(r for r in other["sections"] if r["id"] == "question")["delta"] < 0


def test_guard_rules():
    assert host_ok("127.0.0.1:8765", 8765) and host_ok("localhost.:8765", 8765)
    assert not host_ok("127.0.0.1", 8765) and host_ok("127.0.0.1", 80)
    assert not host_ok("127.0.0.2:8765", 8765) and not host_ok(None, 8765) and not host_ok("0.0.0.0:8765", 8765)
    assert origin_ok(None, 8765) and origin_ok("http://[::1]:8765", 8765)
    assert not origin_ok("http://127.0.0.1:99999", 8765) and not origin_ok("file://", 8765)


def test_cli_refuses_bad_arguments(starter_project, monkeypatch):
    monkeypatch.chdir(starter_project)
    runner = CliRunner()
    got = runner.invoke(main, ["preview", "helpdsk", "--port", "0"])
    assert got.exit_code == 1 and "error[PM802]" in got.output and "Traceback" not in got.output
    got = runner.invoke(main, ["preview", "--state", "missing.yaml", "--port", "0"])
    assert got.exit_code == 1 and "error[PM813]" in got.output and "no such file" in got.output
    got = runner.invoke(main, ["preview", "--state", "-", "--port", "0"])
    assert got.exit_code == 1 and "error[PM010]" in got.output


def test_cli_port_in_use(starter_project, preview_server, monkeypatch):
    taken = preview_server(starter_project, watch=False)
    monkeypatch.chdir(starter_project)
    got = CliRunner().invoke(main, ["preview", "--port", str(taken.port)])
    assert got.exit_code == 1 and f"error[PM010]: port {taken.port} on 127.0.0.1 is already in use" in got.output


def _start_preview(project: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.Popen:
    """`promptmill preview ARGS` started in `project` as a user would, its output read by the test."""
    exe = Path(sys.executable).with_name("promptmill")
    return subprocess.Popen(
        [str(exe), "preview", *args],
        cwd=project,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "NO_COLOR": "1", **(env or {})},
    )


def test_cli_serves_until_interrupted(starter_project):
    proc = _start_preview(starter_project, "helpdesk", "--state", "examples/helpdesk.state.yaml", "--port", "0")
    try:
        first = proc.stdout.readline()
        assert first.startswith("promptmill preview of demo: http://127.0.0.1:"), first
        port = int(first.rsplit(":", 1)[1].strip(" /\n"))
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        conn.request("GET", "/api/project")
        data = json.loads(conn.getresponse().read())
        assert data["role"] == "helpdesk" and data["state"] == "examples/helpdesk.state.yaml"
        conn.close()
    finally:
        time.sleep(0.2)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=20)
    assert proc.returncode == 0, err
    assert "stopped" in out and "Traceback" not in err


def test_cross_site_fetches_are_refused_but_the_page_opens(server):
    cross = {"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "no-cors"}
    for path in ("/api/project", "/static/app.js", "/api/events"):
        assert request(server, path, headers=cross)[0] == 403, path
    opened = {"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "navigate"}
    assert request(server, "/", headers=opened)[0] == 200
    assert request(server, "/api/project", headers=opened)[0] == 403
    assert request(server, "/api/project", headers={"Sec-Fetch-Site": "same-origin"})[0] == 200


def test_a_folder_inside_the_project_previews_the_project(starter_project, preview_server):
    server = preview_server(starter_project / "prompts" / "roles", watch=False)
    project = json.loads(request(server, "/api/project")[2])
    assert project["project"] == "demo" and project["roles"] == ["helpdesk"]
    assert project["examples"] == ["examples/helpdesk.state.yaml"]


def test_cli_open_hands_the_url_to_the_browser(starter_project, tmp_path):
    """`--open` starts the user's browser (`$BROWSER`, as Python's webbrowser reads it) on
    the preview's URL: here a script that writes down the URL it was given."""
    seen = tmp_path / "opened.txt"
    browser = tmp_path / "browser.sh"
    browser.write_text(f'#!/bin/sh\nprintf "%s" "$1" > "{seen}"\n')
    browser.chmod(0o755)
    proc = _start_preview(starter_project, "helpdesk", "--port", "0", "--open", env={"BROWSER": str(browser)})
    try:
        first = proc.stdout.readline()
        url = first.rsplit(" ", 1)[1].strip()
        deadline = time.monotonic() + 20
        while not (seen.exists() and seen.read_text()) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert seen.read_text() == url
        port = int(url.rsplit(":", 1)[1].strip("/"))
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        conn.request("GET", "/")
        page = conn.getresponse()
        assert page.status == 200 and b"promptmill" in page.read()
        conn.close()
    finally:
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=20)
    assert proc.returncode == 0 and "Traceback" not in err, err


def test_a_body_over_the_limit_is_refused_unread(server):
    from promptmill.web.app import MAX_BODY

    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    try:
        conn.putrequest("POST", "/api/render", skip_host=True, skip_accept_encoding=True)
        conn.putheader("Host", f"127.0.0.1:{server.port}")
        conn.putheader("Content-Type", "application/json")
        conn.putheader("Content-Length", str(MAX_BODY + 1))
        conn.endheaders()
        resp = conn.getresponse()
        assert resp.status == 413 and str(MAX_BODY) in resp.read().decode()
    finally:
        conn.close()


# -- hostile clients and example states (issue 22) ------------------------------------------------------------


def _hang_up(port: int, data: bytes, *, reset: bool = False, read: bool = False) -> None:
    """Send `data` on a raw socket and go away: closed, or reset (RST) when `reset`, after reading a little when `read`."""
    import socket
    import struct

    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    try:
        sock.sendall(data)
        if read:
            sock.recv(16)
        if reset:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    finally:
        sock.close()


def _post_head(port: int, length: int) -> bytes:
    return (
        f"POST /api/render HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\nContent-Length: {length}\r\n\r\n"
    ).encode()


def test_clients_that_hang_up_leave_no_traceback_and_the_server_keeps_serving(starter_project):
    proc = _start_preview(starter_project, "--port", "0")
    try:
        first = proc.stdout.readline()
        port = int(first.rsplit(":", 1)[1].strip(" /\n"))
        get = f"GET {{}} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n"
        _hang_up(port, _post_head(port, 1000) + b'{"role": "h')  # mid-body, closed
        _hang_up(port, _post_head(port, 1000) + b'{"role": "h', reset=True)  # mid-body, reset
        _hang_up(port, _post_head(port, 40) + b'{"role": "helpdesk", "state": ""}      ', reset=True)  # before the answer
        _hang_up(port, get.format("/static/app.js").encode(), reset=True, read=True)  # mid-response
        _hang_up(port, get.format("/api/project").encode(), reset=True)
        _hang_up(port, get.format("/api/events").encode(), reset=True, read=True)
        _hang_up(port, b"GET /api/proj", reset=True)  # mid-request-line
        time.sleep(1.0)
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        conn.request("GET", "/api/project")
        resp = conn.getresponse()
        assert resp.status == 200 and json.loads(resp.read())["roles"] == ["helpdesk"]
        conn.close()
    finally:
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=20)
    assert proc.returncode == 0, err
    assert "Traceback" not in err and "Exception" not in err and "Error" not in err, err


@pytest.fixture
def outside(tmp_path):
    secret = tmp_path / "elsewhere" / "secret.state.yaml"
    secret.parent.mkdir()
    secret.write_text("token: hunter2\n")
    return secret


def test_an_example_state_linked_outside_the_project_is_neither_listed_nor_served(starter_project, preview_server, outside):
    examples = starter_project / "examples"
    (examples / "leak.state.yaml").symlink_to(outside)
    (examples / "zero.state.json").symlink_to("/dev/zero")
    (examples / "alias.state.yaml").symlink_to(examples / "helpdesk.state.yaml")  # a link inside the project is fine
    server = preview_server(starter_project, watch=False)
    project = json.loads(request(server, "/api/project")[2])
    assert project["examples"] == ["examples/alias.state.yaml", "examples/helpdesk.state.yaml"]
    for name in ("examples/leak.state.yaml", "examples/zero.state.json", str(outside)):
        body = request(server, "/api/state?path=" + name)[2]
        got = json.loads(body)
        assert got["error"]["code"] == "PM813" and b"hunter2" not in body, name
    assert "question: How do I rotate" in json.loads(request(server, "/api/state?path=examples/alias.state.yaml")[2])["text"]
    watched = {p.resolve() for p in server.session.watch_paths()}
    assert (examples / "alias.state.yaml").resolve() in watched and outside.resolve() not in watched


def test_the_state_file_given_on_the_command_line_is_served_wherever_it_is(starter_project, preview_server, outside):
    """--state is the user's own choice, not something found in the project."""
    server = preview_server(starter_project, state=outside, watch=False)
    project = json.loads(request(server, "/api/project")[2])
    assert project["state"] == outside.as_posix() and outside.as_posix() in project["examples"]
    assert "hunter2" in json.loads(request(server, "/api/state?path=" + outside.as_posix())[2])["text"]


def test_an_example_state_that_is_a_fifo_is_refused_without_waiting_for_a_writer(starter_project, preview_server):
    """Read through core/userfiles: regular files only, a FIFO is named so at once (it used to be read as empty)."""
    os.mkfifo(starter_project / "examples" / "pipe.state.yaml")
    server = preview_server(starter_project, watch=False)
    got = json.loads(request(server, "/api/state?path=examples/pipe.state.yaml")[2])
    assert got["error"]["code"] == "PM100" and "FIFO" in got["error"]["message"] and "text" not in got


def test_a_client_that_stalls_mid_body_is_dropped_silently(starter_project, preview_server, monkeypatch, capfd):
    import socket

    from promptmill.web import app

    assert app._Handler.timeout is not None and 0 < app._Handler.timeout <= 120  # without one, the thread waits forever
    monkeypatch.setattr(app._Handler, "timeout", 0.5)  # 60 s in use
    server = preview_server(starter_project, watch=False)
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=10)
    try:
        sock.sendall(_post_head(server.port, 1000) + b'{"role": "h')
        assert sock.recv(100) == b""  # the server gave up on it and closed the connection, without an answer
    finally:
        sock.close()
    assert request(server, "/api/project")[0] == 200
    err = capfd.readouterr().err
    assert "Traceback" not in err and "Exception" not in err, err


def test_render_for_a_model_from_the_picker(server, starter_project):
    """The page's model picker (issue 23): /api/project lists the table, /api/render takes a model."""
    project = json.loads(request(server, "/api/project")[2])
    assert "claude-opus-4-7" in project["models"] and "gpt-4o" in project["models"]
    state = (starter_project / "examples/helpdesk.state.yaml").read_text()
    body = {"role": "helpdesk", "state": state, "model": "claude-opus-4-7"}
    got = json.loads(request(server, "/api/render", method="POST", body=body)[2])
    assert (got["provider"], got["model"]) == ("anthropic", "claude-opus-4-7")
    anthropic = got["views"]["anthropic"]
    assert anthropic["count_note"] == "estimated, ratio 1.53 for claude-opus-4-7" and anthropic["ratio"] == 1.53
    assert "estimated, ratio 1.53 for claude-opus-4-7" in anthropic["head"]
    assert list(got["views"]) == ["anthropic"]  # the tab shown: the model's provider
    both = json.loads(request(server, "/api/render", method="POST", body={**body, "wires": ["openai", "anthropic"]})[2])
    assert both["views"]["openai"]["count_note"] in ("exact", "estimate")  # the other tabs: the role's own model
    bad = json.loads(request(server, "/api/render", method="POST", body={**body, "model": "claud-opus-4-7"})[2])
    assert bad["error"]["code"] == "PM502" and "did you mean" in bad["error"]["hint"]
    cmp = json.loads(request(server, "/api/compare", method="POST", body={**body, "against": "build"})[2])
    assert "error" not in cmp and cmp["provider"] == "anthropic"


def test_the_project_names_the_tabs_and_whether_saves_reload(starter_project, preview_server):
    """The page's tabs are the wire registry's names, read when asked; the badge knows whether the server watches."""
    watching = json.loads(request(preview_server(starter_project), "/api/project")[2])
    assert watching["providers"] == list(wires.WIRE_NAMES) and watching["watching"] is True
    still = preview_server(starter_project, watch=False)
    assert json.loads(request(still, "/api/project")[2])["watching"] is False


def test_an_estimated_budget_names_each_of_its_numbers(server, starter_project):
    state = (starter_project / "examples/helpdesk.state.yaml").read_text()
    body = {"role": "helpdesk", "state": state, "budget": 2000, "wires": ["anthropic"]}
    anthropic = json.loads(request(server, "/api/render", method="POST", body=body)[2])["views"]["anthropic"]
    f = anthropic["budget_figures"]
    assert (f["set"], f["usable"], f["role"]) == (2000, anthropic["budget"], 3500)
    margin = round(0.1 * 2000)
    assert f["rows"] == [
        ["2000", "the budget you set (the role's is max_tokens 4000 − reserve 500 = 3500)"],
        [f"− {margin}", "margin held back (10%): anthropic's token counts are estimates"],
        [str(2000 - margin), "usable, in anthropic tokens"],
        [f"÷ {anthropic['ratio']:g}", "ratio: anthropic tokens per o200k_base token (any anthropic model)"],
        [str(anthropic["budget"]), "usable, in o200k_base tokens: what the head, the bars and the total count against"],
    ]
    # the same figures, and the same unit, as the CLI's line
    assert anthropic["budget_line"].startswith(
        f"budget {f['usable']}: render budget 2000 (below max_tokens 4000 - reserve 500)"
        f" - margin {margin} = {2000 - margin} anthropic tokens"
    )
    assert anthropic["head"].startswith(f"helpdesk → anthropic   {anthropic['tokens']} / {f['usable']} usable tokens (")
