"""Shared test settings and fixtures: a bounded hypothesis profile so the suite
stays fast, an empty user folder so a developer's own ~/.config/promptmill never
leaks into a test, `project`, the render cases' project, `make_project`, which
writes a project from a {path: text} mapping (use it instead of a builder of
your own), `assert_reply_error`, the checks on a refused model reply, and
`wire_server`, a local server that records what a real SDK client sends (tests/wire_server.py), and
`_builds_match_the_schemas`, which checks every build the suite makes against schemas/bundle.schema.json and
manifest.schema.json (tests/bundle_contract.py; PROMPTMILL_BUNDLE_CONTRACT=0 turns it off, =report says its cost).

Set HYPOTHESIS_PROFILE=long for a longer fuzzing run (see docs/testing.md).
"""

import os
import shutil
import textwrap
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from hypothesis.database import DirectoryBasedExampleDatabase

# PROMPTMILL_HYPOTHESIS_DB gives a run its own example database: .ci/run's run at the
# lowest versions uses one, since an old hypothesis replaying examples a newer one saved
# fails as "Flaky: Unreliable assumption" and wastes minutes on examples it cannot read.
_db = os.environ.get("PROMPTMILL_HYPOTHESIS_DB")
_own_db = {"database": DirectoryBasedExampleDatabase(_db)} if _db else {}
settings.register_profile("ci", max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow], **_own_db)
# `make test-fast`: the quick inner loop; the suite itself always runs "ci" or more
settings.register_profile("fast", max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow], **_own_db)
settings.register_profile("long", max_examples=5000, deadline=None, suppress_health_check=[HealthCheck.too_slow], **_own_db)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

RENDER_CASES = Path(__file__).parent / "cases" / "render"


@pytest.fixture(scope="session", autouse=True)
def _builds_match_the_schemas():
    """Every bundle and manifest a test compiles is checked against the published schemas; the
    session fails at its end, naming the test that made it, when one does not validate."""
    from bundle_contract import BuildCheck, hook_mode

    if hook_mode() == "0":
        yield None
        return
    check = BuildCheck()
    with check.watch():
        yield check
    if hook_mode() == "report":
        print(f"\nbundle contract: {check.checked} distinct bundles and manifests checked in {check.seconds:.2f} s")
    if check.failures:
        pytest.fail(f"{len(check.failures)} build(s) do not match the published schemas:\n" + "\n".join(check.failures), pytrace=False)


@pytest.fixture(autouse=True)
def _empty_user_dir(tmp_path_factory, monkeypatch):
    """Point PROMPTMILL_USER_DIR at an empty folder (tests may set their own)."""
    monkeypatch.setenv("PROMPTMILL_USER_DIR", str(tmp_path_factory.mktemp("promptmill-user")))


@pytest.fixture
def project(tmp_path, monkeypatch) -> Path:
    """A copy of tests/cases/render/project with its state.yaml, as the working directory."""
    root = tmp_path / "project"
    shutil.copytree(RENDER_CASES / "project", root)
    shutil.copy(RENDER_CASES / "state.yaml", root / "state.yaml")
    monkeypatch.chdir(root)
    return root


def write_files(root: Path, files: Mapping[str, str | bytes], *, dedent: bool = False) -> Path:
    """Write each {relative path: text or bytes} under `root` (folders made as needed); `root`.
    With dedent, text loses its common indentation and leading newlines (for indented literals)."""
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(textwrap.dedent(text).lstrip("\n") if dedent else text, encoding="utf-8")
    return root


@pytest.fixture
def make_project(tmp_path) -> Callable[..., Path]:
    """make_project({path: text}, root=tmp_path, dedent=False) -> root, a project written from
    the mapping (e.g. {"prompts/r.yaml": ROLE}); nothing is added that the mapping does not name."""

    def make(files: Mapping[str, str | bytes], root: Path | None = None, *, dedent: bool = False) -> Path:
        return write_files(tmp_path if root is None else root, files, dedent=dedent)

    return make


def _assert_reply_error(exc, code: str, paths: Iterable[str] = (), message: str | None = None) -> None:
    assert exc.code == code, str(exc)
    got = [p for p, _ in exc.errors]
    for path in paths:
        assert path in got, (path, exc.errors)
    if message:
        assert message in str(exc), str(exc)
    assert exc.summary in exc.repair_message()


@pytest.fixture
def assert_reply_error() -> Callable[..., None]:
    """assert_reply_error(exc, code, paths, message): a ReplyError has this code, names each
    state path among its errors, says `message` (when given) and repeats its summary in the
    repair message sent back to the model."""
    return _assert_reply_error


# -- web preview (tests/test_web_*.py): a real headless Chromium ------------------------
# Debian's chromium (`apt-get install chromium`), driven by Playwright for Python;
# `playwright install` is never needed. The browser tests skip, saying why, when
# either is missing, and fail instead with PROMPTMILL_REQUIRE_BROWSER=1 (.ci/run
# sets it after installing both).
CHROMIUM = os.environ.get("PROMPTMILL_CHROMIUM", "/usr/bin/chromium")


def _no_browser(why: str):
    if os.environ.get("PROMPTMILL_REQUIRE_BROWSER"):
        pytest.fail(f"{why}; PROMPTMILL_REQUIRE_BROWSER is set", pytrace=False)
    pytest.skip(why)


CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture(scope="module")
def chromium():
    """One headless Chromium per test file. Not per session: Playwright's sync API leaves its event
    loop marked as running until it stops, so any later asyncio.run() in the same process (the LSP
    tests, run after the browser tests in one pytest-xdist worker) would fail."""
    if not os.path.exists(CHROMIUM):
        _no_browser(f"no Chromium at {CHROMIUM} (apt-get install chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _no_browser("playwright is not installed (pip install -e '.[dev]')")
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def open_page(chromium):
    """open_page(url) -> a new page at `url` once its first render is on screen; errors collected."""
    pages = []

    def open_(url: str, *, width: int = 1400, height: int = 1000):
        # bypass_csp: Playwright's waits evaluate strings, which the page's policy forbids; without
        # the policy the hostile-state test also shows the page itself never turns data into HTML
        context = chromium.new_context(viewport={"width": width, "height": height}, bypass_csp=True)
        page = context.new_page()
        page.errors = []
        page.on("pageerror", lambda exc: page.errors.append(str(exc)))
        page.goto(url)
        page.wait_for_selector("body[data-rendered]", timeout=10_000)
        pages.append(context)
        return page

    yield open_
    for context in pages:
        context.close()


@pytest.fixture
def starter_project(tmp_path):
    """`promptmill init` in a fresh folder, compiled (build/ committed, as users do)."""
    from promptmill import compile as compile_project
    from promptmill.cli.scaffold import init

    root = tmp_path / "demo"
    init(root)
    compile_project(root)
    return root


@pytest.fixture
def preview_server():
    """preview_server(project, **kw) -> a started web.PreviewServer on a free port, closed after."""
    from promptmill.web import make_server

    servers = []

    def start(project, **kw):
        server = make_server(project, **{"port": 0, **kw}).start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.close()


@pytest.fixture
def wire_server():
    """A running `tests.wire_server.WireServer`: point an SDK at `.url`, read `.requests`."""
    from wire_server import WireServer

    server = WireServer()
    server.start()
    yield server
    server.stop()


@pytest.fixture
def git_identity(monkeypatch):
    """Commits made in the test have a fixed author and ignore the developer's git configuration
    (run them with `git_support.git`); fails, not skips, where git is missing."""
    from git_support import IDENTITY

    if shutil.which("git") is None:
        pytest.fail("git is needed by this test")
    for key, value in IDENTITY.items():
        monkeypatch.setenv(key, value)


# -- the real VS Code (tests/test_vscode_extension.py) -------------------------------------
# It installs code-server from npm (5 minutes the first time, cached after) and drives it for a
# minute: collected only when asked for, PROMPTMILL_VSCODE=1, which .ci/vscode sets (not a skip:
# the suite does not collect it at all otherwise).
collect_ignore = [] if os.environ.get("PROMPTMILL_VSCODE") == "1" else ["test_vscode_extension.py"]


# -- no silent skips in CI ----------------------------------------------------------------
# .ci/run installs every extra (boto3, quicktok-v1, pygls, Ray, Spark, a browser), so a test that
# skips there is a missing install step, not an optional feature: PROMPTMILL_NO_SKIPS=1 turns
# every skip (a test's or a whole module's) into a failure that names the reason.
def _no_skips() -> bool:
    return os.environ.get("PROMPTMILL_NO_SKIPS") == "1"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if _no_skips() and report.skipped and not hasattr(report, "wasxfail"):
        report.outcome = "failed"
        report.longrepr = f"skipped with PROMPTMILL_NO_SKIPS=1: {report.longrepr}"


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    outcome = yield
    report = outcome.get_result()
    if _no_skips() and report.skipped:
        report.outcome = "failed"
        report.longrepr = f"skipped with PROMPTMILL_NO_SKIPS=1: {report.longrepr}"


# -- two processes, the longest files first ------------------------------------------------
# `-n 2 --dist loadfile` (the README's test command) gives each process one file at a time from a queue.
# xdist orders that queue by the number of tests in a file, which put the long files with few tests (Spark
# and Ray, the crash sweep, the release build) last: the run ended with one process alone on one of them.
# Here the queue starts with the files that take longest (seconds of one process, measured with
# --durations under -n 2; re-measure when a file grows), the rest after them in xdist's order, so the two
# processes end close together. A file missing from the list costs nothing but balance.
LONGEST_FIRST = (
    "test_batch_engines.py",
    "test_closed_output.py",
    "test_hostile_cases.py",
    "test_hostile_cases_more.py",
    "test_lsp_hostile.py",
    "test_schema_closures.py",
    "test_types_checkers.py",
)


def pytest_configure(config):
    if hasattr(config.option, "loadscopereorder"):  # pytest-xdist: keep the order set below
        config.option.loadscopereorder = False
    if not hasattr(config, "workerinput"):  # once, in the process that starts the workers
        _compile_the_package()


def _compile_the_package() -> None:
    """Write promptmill's bytecode before the suite starts its hundreds of `promptmill` processes.

    Where PYTHONDONTWRITEBYTECODE is set (it is on the machines CI runs on), a fresh clone never
    gets `__pycache__`, and every child process compiled the whole package again: 0.6 s of CPU
    more per `promptmill lint` with no bytecode at all, measured here. compileall writes it anyway;
    on later runs it only compares timestamps.
    """
    import compileall

    import promptmill

    compileall.compile_dir(Path(promptmill.__file__).parent, quiet=2)


def pytest_collection_modifyitems(config, items):
    rank = {name: i for i, name in enumerate(LONGEST_FIRST)}
    count: dict[str, int] = {}
    for item in items:
        count[item.path.name] = count.get(item.path.name, 0) + 1
    items.sort(key=lambda item: (rank.get(item.path.name, len(rank)), -count[item.path.name]))


# Where the suite's time goes, kept by CI: with PROMPTMILL_ARTIFACTS set, each test process writes
# durations-<worker>.json there (per test file: seconds of wall time, of this process's CPU and of its
# children's CPU, and the test count), so a slow run can be read afterwards without running it again.
_file_times: dict[str, list[float]] = {}


def _clock() -> tuple[float, float, float]:
    import resource
    import time

    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.monotonic(), own.ru_utime + own.ru_stime, children.ru_utime + children.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    if not os.environ.get("PROMPTMILL_ARTIFACTS"):
        yield
        return
    start = _clock()
    yield
    end = _clock()
    row = _file_times.setdefault(item.nodeid.split("::")[0], [0.0, 0.0, 0.0, 0])
    for i in range(3):
        row[i] += end[i] - start[i]
    row[3] += 1


def pytest_sessionfinish(session):
    folder = os.environ.get("PROMPTMILL_ARTIFACTS")
    if not folder or not _file_times:
        return
    import json

    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    rows = {
        f: {"wall": round(r[0], 2), "cpu": round(r[1], 2), "children_cpu": round(r[2], 2), "tests": r[3]} for f, r in _file_times.items()
    }
    out = Path(folder) / f"durations-{worker}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(dict(sorted(rows.items(), key=lambda kv: -kv[1]["wall"])), indent=1) + "\n", encoding="utf-8")
