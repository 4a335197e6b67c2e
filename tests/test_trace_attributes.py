"""PromptRequest.trace_attributes: which prompt made a request (issue 23 F), named after OpenTelemetry's
GenAI semantic conventions where they have a name."""

from __future__ import annotations

import promptmill
from promptmill import build_in_memory

ROLE = """\
kind: role
id: r
model: claude-opus-4-7
provider: anthropic
budget: {max_tokens: 600, reserve: 100}
inputs:
  type: object
  properties:
    notes: {type: string}
sections:
  - {id: persona, text: "You summarise notes."}
  - {id: notes, template: "{{ notes }}", priority: -1, trim: drop}
"""


def test_every_request_says_which_prompt_made_it(make_project, tmp_path):
    root = make_project({"prompts/r.yaml": ROLE})
    rt, _ = build_in_memory(root)
    req = rt.render("r", {"notes": "tide table " * 400})
    attrs = req.trace_attributes
    assert attrs["gen_ai.provider.name"] == "anthropic" and attrs["gen_ai.request.model"] == "claude-opus-4-7"
    assert attrs["gen_ai.request.max_tokens"] == 100
    assert attrs["promptmill.role.id"] == "r" and attrs["promptmill.version"] == promptmill.__version__
    assert attrs["promptmill.role.source_hash"] == rt.bundle("r").source_hash != ""
    assert attrs["promptmill.sections.dropped"] == ["notes"]
    assert (attrs["promptmill.tokens"], attrs["promptmill.budget"]) == (req.tokens, req.budget)
    assert attrs["promptmill.tokens.estimated"] == req.estimated_tokens and attrs["promptmill.ratio"] == 1.53
    assert attrs["promptmill.tokens.exact"] is False
    # the same source hash the build's manifest records, so a trace finds the exact prompt
    promptmill.compile(root, output=tmp_path / "b")
    loaded = promptmill.load(tmp_path / "b")
    assert loaded.render("r", {"notes": "x"}).trace_attributes["promptmill.role.source_hash"] == loaded.manifest.roles["r"].source_hash
    # other wires: Gemini is gcp.gemini; the text wire names no provider
    assert rt.render("r", {"notes": "x"}, model="gemini-2.5-flash").trace_attributes["gen_ai.provider.name"] == "gcp.gemini"
    assert "gen_ai.provider.name" not in rt.render("r", {"notes": "x"}, provider="text").trace_attributes
    for value in attrs.values():  # what an OpenTelemetry attribute can hold
        assert isinstance(value, str | int | float | bool) or all(isinstance(v, str) for v in value)


def test_a_span_per_render_when_tracing_is_on(make_project):
    """promptmill[otel]: spans seen through the SDK's in-memory exporter."""
    import pytest
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    from opentelemetry.trace import StatusCode

    from promptmill import StateError, trace_renders

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    root = make_project({"prompts/r.yaml": ROLE})
    rt, _ = build_in_memory(root)
    rt.render("r", {"notes": "x"})
    assert exporter.get_finished_spans() == ()  # off by default
    trace_renders(tracer_provider=provider)
    try:
        req = rt.render("r", {"notes": "tide table " * 400})
        with pytest.raises(StateError):
            rt.render("r", {"notes": 3})
    finally:
        trace_renders(False)
    rt.render("r", {"notes": "x"})
    ok, failed = exporter.get_finished_spans()
    assert ok.name == "promptmill.render r" and dict(ok.attributes) == {
        k: tuple(v) if isinstance(v, list) else v for k, v in req.trace_attributes.items()
    }
    assert failed.status.status_code == StatusCode.ERROR and failed.attributes["error.type"] == "PM810"
