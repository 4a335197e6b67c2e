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

What is read and sent: only example states inside the project. A state file that is a symbolic
link out of the project is skipped with a warning naming it (never read, never sent); reads go
through `core.userfiles` (regular files only, `MAX_STATE_FILE_BYTES`). Before any request, each
provider asked for needs its key (Anthropic: ANTHROPIC_API_KEY or ANTHROPIC_AUTH_TOKEN; Gemini:
GEMINI_API_KEY or GOOGLE_API_KEY, or GOOGLE_GENAI_USE_VERTEXAI): else PM843 naming the variable and
nothing is sent. Each request waits at most `timeout` seconds (default `provider_timeout()`:
PROMPTMILL_PROVIDER_TIMEOUT, else 30) and is retried once (`RETRIES`: a refused connection, a
timeout, 408/429/5xx); the first failure ends the command: PM844 (unreachable, no answer in time)
or PM843 (refused), with the role, the model, the provider's address and the cause.
`write=True` refuses (PM010, nothing written) any measured ratio compile would refuse
(`runtime.models.ratio_problem`), and writes promptmill.ratios.json through the guard.
"""

from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

from ..compose import ratiosfile
from ..core.boundary import PROVIDER_TIMEOUT_ENV, environment_error, provider_timeout
from ..core.errors import ConfigError, PromptmillError
from ..core.userfiles import is_inside, read_bytes
from ..runtime.models import ratio_problem
from ..runtime.request import PromptRequest

RATIOS_FILE = ratiosfile.RATIOS_FILE
STATE_SUFFIXES = (".state.yaml", ".state.yml", ".state.json")
SKIPPED_DIRS = {".git", ".venv", "venv", "node_modules", "__pycache__", "build"}
RETRIES = 1  # one more try after a refused connection, a timeout or a 408/429/5xx; then the command ends
PROVIDERS = {  # provider -> (name shown, key variables (the first is the one to set), base-URL variable, default address)
    "anthropic": ("Anthropic", ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"), "ANTHROPIC_BASE_URL", "https://api.anthropic.com"),
    "gemini": ("Gemini", ("GEMINI_API_KEY", "GOOGLE_API_KEY"), "GOOGLE_GEMINI_BASE_URL", "https://generativelanguage.googleapis.com"),
}


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
    warnings: list[str] = field(default_factory=list)  # example states not read (a link out of the project)
    written: Path | None = None
    root: Path | None = None  # the project counted

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


def example_states(root: Path, warnings: list[str] | None = None) -> dict[str, Path]:
    """Role id -> its example state file (`ROLE.state.yaml|yml|json`) under `root`, the first by path.

    A state file whose real location is outside `root` (a symbolic link out of the project) is not
    taken: it is named in `warnings` and never read."""
    found: dict[str, Path] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIPPED_DIRS and not d.startswith("."))
        for name in sorted(filenames):
            for suffix in STATE_SUFFIXES:
                if name.endswith(suffix):
                    path = Path(dirpath) / name
                    if not is_inside(path, root):
                        if warnings is not None:
                            shown = path.relative_to(root).as_posix()
                            warnings.append(
                                f"{shown}: the example state is a symbolic link out of the project "
                                f"(to {os.path.realpath(path)}); not read, not sent to any provider"
                            )
                        continue
                    found.setdefault(name[: -len(suffix)], path)
    return found


def read_example(path: Path, root: Path) -> Any:
    """An example state's data, read through the guard (inside `root`, a regular file, at most 8 MiB)."""
    from ..source.loader import load_data_bytes
    from ..source.statefile import MAX_STATE_FILE_BYTES

    raw = read_bytes(path, limit=MAX_STATE_FILE_BYTES, root=root, what="example state")
    if all(not line.strip() or line.lstrip().startswith(b"#") for line in raw.splitlines()):
        return {}  # an empty (or comments-only) state file is an empty state
    data = load_data_bytes(raw, path.relative_to(root).as_posix(), json_text=path.suffix.lower() == ".json", max_bytes=MAX_STATE_FILE_BYTES)
    return {} if data is None else data


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
    timeout: float | None = None,
) -> CountsResult:
    """Render each role with an example state for each model and compare with the provider's count.

    Clients default to `anthropic.Anthropic()` and `google.genai.Client()` (they read their keys and
    base URLs from the environment), made only when a model of theirs is counted, with `timeout`
    seconds per request (default: PROMPTMILL_PROVIDER_TIMEOUT, else 30) and one retry."""
    from .api import build_in_memory

    wait = provider_timeout() if timeout is None else timeout
    runtime, _ = build_in_memory(path)
    root = Path(runtime.base_dir or path)
    result = CountsResult(root=root)
    states = example_states(root, result.warnings)
    plan: list[tuple[str, Path, str, str]] = []  # role, state, model, provider
    for role in runtime.roles:
        if role not in states:
            result.skipped.append(f"{role}: no example state")
            continue
        wanted = models or [m for m in [runtime.bundle(role).model] if m]
        if not wanted:
            result.skipped.append(f"{role}: names no model (pass --model)")
        plan += [(role, states[role], model, runtime.models.lookup(model).provider) for model in wanted]
    clients = {"anthropic": anthropic_client, "gemini": gemini_client}
    for role, _state, model, provider in plan:  # every key is checked before anything is sent
        if provider in PROVIDERS and clients[provider] is None:
            _check_key(provider, role, model)
    for role, state_path, model, provider in plan:
        req = runtime.render(role, read_example(state_path, root), model=model)
        if provider in PROVIDERS:
            if clients[provider] is None:
                clients[provider] = _client(provider, wait)
            actual = _ask(provider, clients[provider], req, role, model, wait)
        else:
            actual = req.tokens  # tiktoken is OpenAI's own tokenizer
        result.counts.append(Count(role, model, provider, req.tokens, req.estimated_tokens, actual, req.ratio))
    if write:
        result.written = write_ratios(root, result)
    return result


def _check_key(provider: str, role: str, model: str) -> None:
    """PM843 naming the variable to set when the provider's SDK would find no key (nothing is sent)."""
    shown, keys, _, _ = PROVIDERS[provider]
    if provider == "gemini" and os.environ.get("GOOGLE_GENAI_USE_VERTEXAI", "").strip().lower() in ("1", "true"):
        return  # Vertex AI: Google Cloud credentials, not a key
    if any(os.environ.get(k, "").strip() for k in keys):
        return
    raise PromptmillError(
        f"counting role {role} for {model} asks {shown} for its count, and no {shown} API key is set "
        f"({' and '.join(keys)} are empty); nothing was sent",
        code="PM843",
        hint=f"set {keys[0]} (export {keys[0]}=...), or count other models only: --model MODEL",
    )


def _client(provider: str, wait: float) -> Any:
    try:
        if provider == "anthropic":
            import anthropic

            return anthropic.Anthropic(timeout=wait, max_retries=RETRIES)
        from google import genai
        from google.genai import types

        timeout_ms = max(1, int(wait * 1000))
        if not _sdk_retries(provider):  # google-genai before HttpRetryOptions: `_ask` retries itself
            return genai.Client(http_options=types.HttpOptions(timeout=timeout_ms))
        retry = types.HttpRetryOptions(attempts=RETRIES + 1, initial_delay=0.5, max_delay=2.0)
        return genai.Client(http_options=types.HttpOptions(timeout=timeout_ms, retry_options=retry))
    except ImportError as exc:
        raise ConfigError(f"counting {provider} tokens needs its SDK", code="PM010", hint="pip install anthropic google-genai") from exc
    except Exception as exc:  # the SDK's constructor refused its settings (Vertex AI without a project, ...)
        raise PromptmillError(f"cannot make the {PROVIDERS[provider][0]} client: {_cause(exc)}", code="PM010") from None


def _ask(provider: str, client: Any, req: PromptRequest, role: str, model: str, wait: float) -> int:
    """The provider's count; its failures as PM843 (refused) or PM844 (unreachable, no answer in time)."""
    shown, keys, url_var, default_url = PROVIDERS[provider]
    try:
        return _count_with_retry(provider, client, req, model)
    except PromptmillError:
        raise
    except Exception as exc:
        found = environment_error(exc)
        unreachable = _unreachable(exc)
        if found is None and not unreachable:
            raise
        address = os.environ.get(url_var, "").strip() or default_url
        doing = f"counting role {role} for {model} at {shown} ({address})"
        if unreachable or (found is not None and found.code == "PM844"):
            what = f"no answer within {wait:g} s" if _timed_out(exc) else "could not connect"
            raise PromptmillError(
                f"{doing}: {what}: {_cause(exc)}",
                code="PM844",
                hint=f"check the network and {url_var}; each request waits {wait:g} s (--timeout, or {PROVIDER_TIMEOUT_ENV}; "
                f"default 30) and is tried {RETRIES + 1} times",
            ) from None
        assert found is not None
        raise PromptmillError(
            f"{doing}: {found.message}",
            code=found.code,
            hint=f"check {keys[0]} and that it may use {model}; {found.hint or ''}".rstrip("; "),
        ) from None


def _sdk_retries(provider: str) -> bool:
    """Does the provider's SDK retry by itself? Anthropic's always does (max_retries); google-genai since
    it has HttpRetryOptions (the lowest google-genai the ranges allow has none)."""
    if provider == "anthropic":
        return True
    from google.genai import types

    return hasattr(types, "HttpRetryOptions")


def _count_with_retry(provider: str, client: Any, req: PromptRequest, model: str) -> int:
    """The count, tried RETRIES more times after a failure to connect when the SDK does not retry itself."""
    attempts = 1 if _sdk_retries(provider) else RETRIES + 1
    for attempt in range(attempts):
        try:
            return anthropic_count(client, req, model) if provider == "anthropic" else gemini_count(client, req, model)
        except PromptmillError:
            raise
        except Exception as exc:
            if attempt + 1 == attempts or not _unreachable(exc):
                raise
            time.sleep(0.5)
    raise AssertionError("unreachable: the last attempt returns or raises")


_UNREACHABLE = {
    "ConnectError",
    "ConnectTimeout",
    "ReadTimeout",
    "WriteTimeout",
    "PoolTimeout",
    "TimeoutException",
    "NetworkError",
    "RemoteProtocolError",
    "ReadError",
    "WriteError",
    "TransportError",
    "UnsupportedProtocol",
    "InvalidURL",
}


def _unreachable(exc: BaseException) -> bool:
    """An HTTP library's own transport error (google-genai raises httpx's, unwrapped), or a socket's."""
    names = {cls.__name__ for cls in type(exc).__mro__}
    return (type(exc).__module__.split(".", 1)[0].startswith("httpx") and bool(names & _UNREACHABLE)) or isinstance(
        exc, (TimeoutError, ConnectionError)
    )


def _timed_out(exc: BaseException) -> bool:
    seen: BaseException | None = exc
    for _ in range(6):
        if seen is None:
            return False
        if isinstance(seen, TimeoutError) or any("Timeout" in cls.__name__ for cls in type(seen).__mro__):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def _cause(exc: BaseException) -> str:
    """The exception's words and those of what caused it ("Connection error.: [Errno 111] Connection refused")."""
    said: list[str] = []
    seen: BaseException | None = exc
    for _ in range(6):
        if seen is None:
            break
        first = (str(seen).splitlines() or [type(seen).__name__])[0].strip()[:300] or type(seen).__name__
        if first not in said:
            said.append(first)
        seen = seen.__cause__ or seen.__context__
    return ": ".join(said)


def write_ratios(root: Path, result: CountsResult) -> Path:
    """Merge the measured ratios into promptmill.ratios.json (through the guard: one rename, no link).

    PM010, and nothing written, when a measured ratio is one compile would refuse (`ratio_problem`)."""
    ratios = result.ratios()
    bad = [(model, ratio, ratio_problem(ratio)) for model, ratio in ratios.items() if ratio_problem(ratio) is not None]
    if bad:
        lines = []
        for model, _ratio, problem in bad:
            worst = max((c for c in result.counts if c.model == model), key=lambda c: abs(math.log(max(c.measured, 1e-300))))
            lines.append(f"{model}: {problem} (role {worst.role}: the provider counted {worst.actual} tokens, promptmill {worst.counted})")
        raise ConfigError(
            f"not writing {RATIOS_FILE}: compile would refuse the measured ratio of " + "; ".join(lines),
            code="PM010",
            hint="a count this far from promptmill's is not a tokenizer's difference: check that the provider at its address "
            "(ANTHROPIC_BASE_URL, GOOGLE_GEMINI_BASE_URL) is the real one and counts the model the role names; nothing was written",
        )
    raw = ratiosfile.read_raw(root)
    data: dict[str, Any] = {"ratios": {}}
    if raw is not None:
        try:
            data = ratiosfile.parse(raw, strict=False)  # a bad entry may be measured again and so replaced
        except ConfigError as exc:
            raise ConfigError(f"{exc.message}; not overwriting it", code="PM010", hint=exc.hint) from None
    roles: dict[str, int] = {}
    for c in result.counts:
        roles[c.model] = roles.get(c.model, 0) + 1
    for model, ratio in ratios.items():
        data["ratios"][model] = {
            "ratio": ratio,
            "source": f"measured by promptmill counts on {roles[model]} example state(s), {date.today().isoformat()}",
        }
    data["_comment"] = "Token ratios measured with each provider's counting endpoint (promptmill counts --write); compile reads them."
    return ratiosfile.write(root, data)


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
