"""Deprecated path of `genai_kwargs`: use `promptmill.genai_kwargs`; removed in the next release."""

from __future__ import annotations

import warnings

from ...wires.gemini import genai_kwargs

__all__ = ["genai_kwargs"]

warnings.warn(
    "promptmill.runtime.renderers.gemini is deprecated; use promptmill.genai_kwargs",
    DeprecationWarning,
    stacklevel=2,
)
