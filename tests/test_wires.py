"""wires/: the registry, the Wire each name stands for, and the deprecated paths."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from promptmill.core.errors import ProviderError
from promptmill.runtime.registry import WIRES
from promptmill.runtime.wire import Wire
from promptmill.wires import WIRE_NAMES, batch_wires, get_wire
from providers_support import runtime, state

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("name", WIRE_NAMES)
def test_every_registered_name_is_a_wire_of_that_name(name: str) -> None:
    wire = get_wire(name)
    assert isinstance(wire, Wire)
    assert wire.name == name
    assert get_wire(name) is wire  # looked up once


def test_the_registry_lists_the_documented_wires_once() -> None:
    assert WIRE_NAMES[:5] == ("text", "live", "openai", "anthropic", "gemini")
    assert {"openai-responses", "bedrock", "anthropic-bedrock", "anthropic-vertex", "gemini-vertex"} <= set(WIRE_NAMES)
    assert tuple(WIRES) == WIRE_NAMES
    assert {"text", "openai", "anthropic", "gemini", "openai-responses", "bedrock"} <= set(batch_wires())
    assert not {"live", "anthropic-bedrock", "anthropic-vertex", "gemini-vertex"} & set(batch_wires())  # no batch format


@pytest.mark.parametrize(("name", "close"), [("openia", "'openai'"), ("Gemini", "'gemini'"), ("antropic", "'anthropic'")])
def test_an_unknown_wire_says_which_one_was_meant(name: str, close: str) -> None:
    with pytest.raises(ProviderError) as info:
        get_wire(name)
    assert info.value.code == "PM840"
    assert f"unknown provider '{name}'" in info.value.message
    assert f"did you mean {close}?" in (info.value.hint or "")
    assert "valid providers: text, live, openai, anthropic, gemini" in (info.value.hint or "")
    assert all(name in (info.value.hint or "") for name in WIRE_NAMES)


def test_a_wire_that_does_not_say_what_tools_cost_is_not_costed_as_another() -> None:
    # before the wires, a name added to the counting table alone had its tools counted as Gemini's
    class Bare(Wire):
        name = "bare"
        history_messages = True

    counter = runtime().counter("o200k_base")
    with pytest.raises(NotImplementedError, match="bare wire sends no tool declarations"):
        Bare().tool_cost(counter, [{"name": "ping", "description": "", "parameters": {"type": "object"}}])


def test_a_wire_that_is_not_registered_is_refused() -> None:
    with pytest.raises(ProviderError) as info:
        get_wire("watsonx")
    assert info.value.code == "PM840"
    assert "did you mean" not in (info.value.hint or "")
    with pytest.raises(ProviderError, match="PM840"):
        runtime().render("executor", state("executor.state.yaml"), provider="watsonx")


@pytest.mark.parametrize("name", WIRE_NAMES)
def test_a_request_holds_the_wire_it_was_fitted_for(name: str) -> None:
    req = runtime().render("executor", state("executor.state.yaml"), provider=name)
    assert req.wire is get_wire(name)
    assert req.provider == name
    assert req.to_payload() == req.wire.render(req)


def test_report_is_a_deprecated_alias_of_explain() -> None:
    req = runtime().render("executor", state("executor.state.yaml"), provider="openai")
    with pytest.warns(DeprecationWarning, match=r"report\(\) is deprecated; use explain\(\)"):
        old = req.report()
    assert old == req.explain()
    assert "sections:" in old


def test_the_old_genai_kwargs_path_still_works_and_warns() -> None:
    code = (
        "import warnings\n"
        "warnings.simplefilter('error', DeprecationWarning)\n"
        "try:\n"
        "    import promptmill.runtime.renderers.gemini\n"
        "except DeprecationWarning as exc:\n"
        "    print('warned:', exc)\n"
        "warnings.simplefilter('ignore', DeprecationWarning)\n"
        "import importlib, sys\n"
        "sys.modules.pop('promptmill.runtime.renderers.gemini', None)\n"
        "from promptmill.runtime.renderers.gemini import genai_kwargs as old\n"
        "from promptmill.wires.gemini import genai_kwargs as new\n"
        "print(old is new)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].startswith("warned: promptmill.runtime.renderers.gemini is deprecated"), lines
    assert lines[-1] == "True"


def test_a_reply_is_checked_with_the_four_fields_batch_collect_passes() -> None:
    # batch collect checks replies with a stand-in request (role, output, provider, state): the wire
    # is found by name, and OpenAI's strict mode nulls (an optional property sent as null) are removed
    from types import SimpleNamespace

    from promptmill.replies.parse import parse_reply

    bundle = runtime().bundle("companion-beat")
    assert bundle.output is not None and bundle.output.style == "native"
    reply = '{"action": "stay_quiet", "text": null, "reason": "it is late"}'
    for name in ("openai", "gemini"):
        stand_in = SimpleNamespace(role="companion-beat", output=bundle.output, provider=name, state=None)
        if name == "openai":
            assert parse_reply(stand_in, reply) == {"action": "stay_quiet", "reason": "it is late"}  # type: ignore[arg-type]
        else:  # no strict mode: a null is a wrong type
            with pytest.raises(Exception, match="PM861"):
                parse_reply(stand_in, reply)  # type: ignore[arg-type]


def test_the_providers_table_has_a_row_for_every_wire() -> None:
    # issue 24: every wire is listed with its request shape, cache and structured-output behaviour
    import re

    text = (ROOT / "docs" / "providers.md").read_text(encoding="utf-8")
    section = text.split("\n## ", 1)[0]  # the page's overview, before its first heading
    rows = re.findall(r"^\| `([a-z-]+)` \|(.*)\|$", section, re.M)
    names = [name for name, _ in rows]
    assert len(names) == len(set(names)) and set(names) == set(WIRE_NAMES)
    for name, rest in rows:
        cells = [c.strip() for c in rest.split(" | ")]
        assert len(cells) == 3 and all(cells), name
