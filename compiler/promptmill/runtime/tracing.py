"""An optional OpenTelemetry span per render (`pip install 'promptmill[otel]'`).

Off until `trace_renders()` turns it on: until then the render path imports nothing from
OpenTelemetry and pays one global read. On, each `Runtime.render` runs inside a span named
`promptmill.render ROLE` whose attributes are the request's `trace_attributes` (OpenTelemetry
GenAI semantic-convention names where they exist); a render that fails ends its span with
an error status and the PM code. Only `opentelemetry-api` is used: the application's SDK,
if any, decides where spans go.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ..core.errors import ConfigError, PromptmillError

_tracer: Any = None  # an opentelemetry Tracer while renders are traced, else None


def _hook(on: bool) -> None:
    from . import engine

    engine._render_span = render_span if on else None


def trace_renders(enabled: bool = True, *, tracer_provider: Any = None) -> None:
    """Turn the span per render on (from `tracer_provider`, default the global one) or off."""
    global _tracer
    if not enabled:
        _tracer = None
        _hook(False)
        return
    try:
        from opentelemetry import trace
    except ImportError as exc:
        raise ConfigError("tracing renders needs opentelemetry-api", code="PM010", hint="pip install 'promptmill[otel]'") from exc
    from ..core.version import __version__

    _tracer = trace.get_tracer("promptmill", __version__, tracer_provider=tracer_provider)
    _hook(True)


def tracing() -> bool:
    return _tracer is not None


@contextmanager
def render_span(role: str) -> Iterator[Any]:
    """A span around one render (call only while `tracing()`); yields it, for the request's attributes."""
    from opentelemetry.trace import Status, StatusCode

    with _tracer.start_as_current_span(f"promptmill.render {role}", record_exception=False, set_status_on_exception=False) as span:
        span.set_attribute("promptmill.role.id", role)
        try:
            yield span
        except PromptmillError as exc:
            span.set_attribute("error.type", exc.code)
            span.set_status(Status(StatusCode.ERROR, exc.message))
            raise
