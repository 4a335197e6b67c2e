"""`promptmill counts`: promptmill's token estimates checked against each provider's own count.

Each role with an example state (`ROLE.state.yaml|yml|json` anywhere under the project, as the
preview finds them) is rendered for each model asked for (default: the role's own `model:`), and
the request is sent to the provider's token-counting endpoint through its official SDK:
Anthropic `client.messages.count_tokens`, Gemini `client.models.count_tokens`. OpenAI's count is
promptmill's own (tiktoken is OpenAI's tokenizer). An estimate below the provider's count fails.
`write=True` stores the measured ratio of each model (the largest over its roles, rounded up) in
promptmill.ratios.json, which compile reads: later renders use the team's measured ratio.

The Gemini Developer API counts `contents` only (google-genai refuses `system_instruction`,
`tools` and `generation_config` there): the system instruction is sent as a first user turn, and
tool declarations and a response schema are not counted by the provider, so for a role with them
the estimate, which includes them, errs high and the measured ratio low. The measured ratio is the
provider's count over promptmill's count of the request (`req.tokens`, before the ratio).
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

from ..compose.budgets import RATIOS_FILE
from ..core.errors import ConfigError, PromptmillError
from ..runtime.request import PromptRequest

STATE_SUFFIXES = (".state.yaml", ".state.yml", ".state.json")
SKIPPED_DIRS = {".git", ".venv", "venv", "node_modules", "__pycache__", "build"}


@dataclass(frozen=True)
class Count:
    """One role rendered for one model: promptmill's estimate against the provider's count."""

    role: str
    model: str
    provider: str
    counted: int  # promptmill's count with the model's encoding (before the ratio)
    estimate: int  # counted x ratio: what the budget holds
    actual: int  # the provider's count
    ratio: float  # the ratio the estimate used

    @property
    def under(self) -> bool:
        return self.estimate < self.actual

    @property
    def measured(self) -> float:
        return self.actual / self.counted if self.counted else 1.0


@dataclass
class CountsResult:
    counts: list[Count] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # roles without an example state, or models with no endpoint
    written: Path | None = None

    @property
    def ok(self) -> bool:
        return not any(c.under for c in self.counts)

    def ratios(self) -> dict[str, float]:
        """The measured ratio of each estimated model: the largest over its roles, rounded up to 0.01."""
        out: dict[str, float] = {}
        for c in self.counts:
            if c.provider in ("anthropic", "gemini"):
                out[c.model] = max(out.get(c.model, 0.0), math.ceil(c.measured * 100) / 100)
        return out


def example_states(root: Path) -> dict[str, Path]:
    """Role id -> its example state file (`ROLE.state.yaml|yml|json`) under `root`, the first by path."""
    found: dict[str, Path] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIPPED_DIRS and not d.startswith("."))
        for name in sorted(filenames):
            for suffix in STATE_SUFFIXES:
                if name.endswith(suffix):
                    found.setdefault(name[: -len(suffix)], Path(dirpath) / name)
    return found


def anthropic_count(client: Any, req: PromptRequest, model: str) -> int:
    payload = req.to_anthropic(model=model)
    keep = {k: payload[k] for k in ("system", "messages", "tools", "tool_choice") if k in payload}
    return int(client.messages.count_tokens(model=model, **keep).input_tokens)


def gemini_count(client: Any, req: PromptRequest, model: str) -> int:
    """The provider's count of the request's system instruction (as a first user turn) and contents."""
    payload = req.to_gemini()
    contents = list(payload.get("contents") or [])
    system = payload.get("system_instruction")
    if system:
        contents.insert(0, {"role": "user", "parts": list(system.get("parts") or [])})
    return int(client.models.count_tokens(model=model, contents=contents).total_tokens or 0)


def counts(
    path: str | os.PathLike[str] = ".",
    *,
    models: list[str] | None = None,
    write: bool = False,
    anthropic_client: Any = None,
    gemini_client: Any = None,
) -> CountsResult:
    """Render each role with an example state for each model and compare with the provider's count.

    Clients default to `anthropic.Anthropic()` and `google.genai.Client()` (they read their keys and
    base URLs from the environment) and are made only when a model of theirs is counted."""
    from ..source.statefile import read_state
    from .api import build_in_memory

    runtime, _ = build_in_memory(path)
    root = runtime.base_dir or Path(path)
    states = example_states(Path(root))
    result = CountsResult()
    for role in runtime.roles:
        if role not in states:
            result.skipped.append(f"{role}: no example state")
            continue
        state = read_state(states[role])
        wanted = models or [m for m in [runtime.bundle(role).model] if m]
        if not wanted:
            result.skipped.append(f"{role}: names no model (pass --model)")
        for model in wanted:
            info = runtime.models.lookup(model)
            req = runtime.render(role, state, model=model)
            if info.provider == "anthropic":
                if anthropic_client is None:
                    anthropic_client = _client("anthropic")
                actual = anthropic_count(anthropic_client, req, model)
            elif info.provider == "gemini":
                if gemini_client is None:
                    gemini_client = _client("gemini")
                actual = gemini_count(gemini_client, req, model)
            else:
                actual = req.tokens  # tiktoken is OpenAI's own tokenizer
            result.counts.append(Count(role, model, info.provider, req.tokens, req.estimated_tokens, actual, req.ratio))
    if write:
        result.written = _write_ratios(Path(root), result)
    return result


def _client(provider: str) -> Any:
    try:
        if provider == "anthropic":
            import anthropic

            return anthropic.Anthropic()
        from google import genai

        return genai.Client()
    except ImportError as exc:
        raise ConfigError(f"counting {provider} tokens needs its SDK", code="PM010", hint="pip install anthropic google-genai") from exc
    except Exception as exc:  # a missing API key, raised by the SDK's constructor
        raise PromptmillError(f"cannot make the {provider} client: {exc}", code="PM010") from exc


def _write_ratios(root: Path, result: CountsResult) -> Path:
    """Merge the measured ratios into promptmill.ratios.json (written whole, then renamed into place)."""
    path = root / RATIOS_FILE
    data: dict[str, Any] = {"ratios": {}}
    if path.is_file():
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            assert isinstance(data.get("ratios"), dict)
        except (ValueError, AssertionError, AttributeError):
            raise ConfigError(f"{path} is not a file of measured ratios; not overwriting it", code="PM010") from None
    roles: dict[str, int] = {}
    for c in result.counts:
        roles[c.model] = roles.get(c.model, 0) + 1
    for model, ratio in result.ratios().items():
        data["ratios"][model] = {
            "ratio": ratio,
            "source": f"measured by promptmill counts on {roles[model]} example state(s), {date.today().isoformat()}",
        }
    data["_comment"] = "Token ratios measured with each provider's counting endpoint (promptmill counts --write); compile reads them."
    text = json.dumps(dict(sorted(data.items())), indent=2, sort_keys=True) + "\n"
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
    return path


def format_counts(result: CountsResult) -> str:
    """One line per role and model: estimate, actual, and whether the estimate holds."""
    lines = []
    for c in result.counts:
        verdict = "UNDER" if c.under else "ok"
        lines.append(
            f"{c.role:<24} {c.model:<22} estimate {c.estimate:>7} (x{c.ratio:g})  actual {c.actual:>7}  "
            f"measured ratio {c.measured:.3f}  {verdict}"
        )
    lines += [f"skipped {s}" for s in result.skipped]
    under = sum(c.under for c in result.counts)
    lines.append(
        f"{len(result.counts)} counts, {under} under the provider's count" + (f"; wrote {result.written}" if result.written else "")
    )
    return "\n".join(lines) + "\n"
