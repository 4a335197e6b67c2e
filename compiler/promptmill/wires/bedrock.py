"""Amazon Bedrock Converse: `system` blocks, `messages` of content blocks, `toolConfig`, `cachePoint`.

The payload is the keyword arguments of boto3's `bedrock-runtime` `converse`:

    client = boto3.client("bedrock-runtime", region_name="us-east-1")
    client.converse(**req.to_bedrock(model="us.anthropic.claude-sonnet-4-5-20250929-v1:0"))

`modelId` is the render's model (`model=`, else the role's `model:`) when known. `system` is a
list of `{"text": ...}` blocks (the stable prefix, then the rest); turns alternate user and
assistant and open with the user, consecutive messages of one role merged into one turn of several
blocks. `inferenceConfig.maxTokens` is the budget's reserve. Native tools go in `toolConfig.tools`
as `toolSpec`s with `inputSchema.json`; a `native` contract becomes a forced call of its return tool
(`toolChoice: {tool: {name}}`), as on the `anthropic` wire.

Caching: with the role's `cache: true`, a `{"cachePoint": {"type": "default"}}` block follows the
last block of the leading stable run (system blocks, then message blocks), and another follows the
tools when every tool declaration is stable. Only for models whose model-table row has cache
breakpoints (every Claude row), or when no model is named (a render for Claude); a model the table
does not know gets none, since Bedrock refuses a cache point a model does not support.

Counting: Bedrock serves mostly Claude, whose tokenizer is not public, so the count is the
`anthropic` wire's estimate (the model row's ratio and the provider's margin, Claude's tool-use
prompt). `promptmill batch --provider bedrock` writes Bedrock batch-inference lines whose
`modelInput` is the model's own InvokeModel body: for Claude the `anthropic-bedrock` body.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..core.errors import ConfigError
from ..runtime.wire import BatchLimits
from ._chat import split
from .anthropic import AnthropicWire
from .anthropic_bedrock import WIRE as CLAUDE_BODY

if TYPE_CHECKING:
    from ..runtime.request import PromptRequest

CACHE_POINT = {"cachePoint": {"type": "default"}}


def _spec(d: dict) -> dict:
    spec: dict[str, Any] = {"name": d["name"]}
    if d.get("description"):
        spec["description"] = d["description"]
    spec["inputSchema"] = {"json": d["parameters"]}
    return {"toolSpec": spec}


def caches(req: PromptRequest, model: str | None) -> bool:
    """Whether the payload carries cache points: the role caches, and the model takes them (its row
    has cache breakpoints; no model named: Claude, which does)."""
    if not req.cache:
        return False
    if not model:
        return True
    from ..runtime.models import resolve_model

    info = resolve_model(model)
    return bool(info is not None and info.cache_breakpoints)


class BedrockWire(AnthropicWire):
    name = "bedrock"
    provider = "aws"
    family = "anthropic"
    # Amazon Bedrock service quotas, https://docs.aws.amazon.com/general/latest/gr/bedrock.html#limits_bedrock (named by
    # https://docs.aws.amazon.com/bedrock/latest/userguide/batch-inference-data.html): "Records per input file per batch
    # inference job" 50,000 and "Batch inference input file size" 1 GB, the defaults (per model, adjustable; a job also
    # needs at least 100 records, "Minimum number of records per batch inference job", which promptmill does not check)
    batch_limits = BatchLimits(50_000, 1024 * 1024 * 1024)

    def render(self, req: PromptRequest, *, model: str | None = None, max_tokens: int | None = None) -> dict:
        """The keyword arguments of `converse` (`modelId` when known)."""
        model, max_tokens = self.reply_limits(req, model, max_tokens)
        cache = caches(req, model)
        system_parts, turns = split(req, "bedrock")
        system: list[dict[str, Any]] = [{"text": text} for text, _ in system_parts]
        contents: list[list[dict[str, Any]]] = [[{"text": text} for text, _ in parts] for _, parts in turns]
        messages = [{"role": role, "content": content} for (role, _), content in zip(turns, contents, strict=True)]
        if cache:  # after the last block of the leading stable run
            places = [(system, i) for i in range(len(system))] + [(c, i) for c in contents for i in range(len(c))]
            stable = [s for _, s in system_parts] + [s for _, parts in turns for _, s in parts]
            run = 0
            while run < len(stable) and stable[run]:
                run += 1
            if run:
                blocks, at = places[run - 1]
                blocks.insert(at + 1, dict(CACHE_POINT))
        out: dict[str, Any] = {"modelId": model} if model else {}
        out["messages"] = messages
        if system:
            out["system"] = system
        if max_tokens:
            out["inferenceConfig"] = {"maxTokens": max_tokens}
        decls = [*req.tools, *self.extra_tools(req.output, req.tool_mode)]
        if decls:
            tools = [_spec(d) for d in decls]
            if cache and all(s.stable for s in req.sections if s.kind == "tools" and s.present):
                tools.append(dict(CACHE_POINT))
            config: dict[str, Any] = {"tools": tools}
            forced = self.forced_tool(req.output)
            if forced is not None:
                config["toolChoice"] = {"tool": {"name": forced}}
            out["toolConfig"] = config
        return out

    def batch_body(self, req: PromptRequest, model: str | None) -> dict:
        """A batch line's `modelInput`: the model's InvokeModel body (Claude's: `anthropic-bedrock`)."""
        self.batch_check(model)
        return CLAUDE_BODY.render(req)

    def batch_check(self, model: str | None) -> None:
        """PM010 unless `model` is a model whose InvokeModel body promptmill writes (Claude)."""
        from ..runtime.models import bedrock_claude, resolve_model

        info = None if model is None else resolve_model(model)
        if model is None or info is None or info.provider != "anthropic" or bedrock_claude(model) is None:
            named = f"model '{model}'" if model else "no model"
            raise ConfigError(
                f"a Bedrock batch line holds the model's own request body; promptmill writes Claude's, and the batch names {named}",
                code="PM010",
                hint="pass --model a Bedrock id of Claude, such as us.anthropic.claude-sonnet-4-5-20250929-v1:0",
            )

    def batch_line(self, custom_id: str, payload: dict, model: str | None, max_tokens: int | None) -> dict:
        body = dict(payload)
        if "max_tokens" not in body:
            body["max_tokens"] = max_tokens
        return {"recordId": custom_id, "modelInput": body}

    def batch_payload(self, line: dict) -> dict:
        return line["modelInput"]


WIRE = BedrockWire()
