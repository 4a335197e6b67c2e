"""Ray Data: render a dataset's rows on a Ray cluster with `BatchRenderer`.

    import ray
    from promptmill.batch import BatchRenderer
    from promptmill.batch.ray import render_dataset

    ds = ray.data.read_parquet("rows.parquet")
    out = render_dataset(ds, "build", "executor", provider="openai", id_column="id", concurrency=4)
    # the same, by hand:
    out = ds.map_batches(BatchRenderer, fn_constructor_kwargs={"build": "build", "role": "executor",
                         "provider": "openai", "id_column": "id"}, concurrency=4, batch_format="pyarrow")

Each actor builds one `BatchRenderer` (the build is loaded once per actor). The
output has the columns of `promptmill.batch.renderer.OUTPUT_COLUMNS`: the
payload and the provider's batch line as JSON text, `ok`/`code`/`message`
for rows that failed (they never fail the job).

`LLMPreprocess` fits `ray.data.llm` processors: it turns a row into the
`messages` (vLLM-style chat engines) or the `payload` (an HTTP endpoint such
as OpenAI's) the processor expects; a row that cannot be rendered raises its
PromptmillError there (filter with `render_dataset` first to report instead).
"""

from __future__ import annotations

import json
from typing import Any

from .renderer import BatchRenderer


def render_dataset(
    ds: Any,
    build: Any,
    role: str,
    *,
    concurrency: int = 1,
    batch_size: int = 256,
    batch_format: str = "pyarrow",
    num_cpus: float = 1,
    **options: Any,
) -> Any:
    """`ds.map_batches(BatchRenderer, ...)`: one output row per input row, `concurrency` actors of
    `num_cpus` each (leave a CPU for the read tasks, or the read never gets scheduled)."""
    kwargs = {"build": str(build), "role": role, **options}
    BatchRenderer(**kwargs)  # PM802/PM010 now, on the driver, not in every actor
    return ds.map_batches(
        BatchRenderer,
        fn_constructor_kwargs=kwargs,
        concurrency=concurrency,
        num_cpus=num_cpus,
        batch_size=batch_size,
        batch_format=batch_format,
    )


class LLMPreprocess:
    """`preprocess=` of a `ray.data.llm` processor: row -> {"messages": ...} or {"payload": ...}.

    `shape="messages"` gives the OpenAI-style chat messages (and `sampling_params`
    when given); `shape="payload"` the whole OpenAI request body with the model.
    Picklable and small like `BatchRenderer`.
    """

    def __init__(
        self,
        build: Any,
        role: str,
        *,
        shape: str = "messages",
        sampling_params: dict | None = None,
        keep: tuple[str, ...] = (),
        **options: Any,
    ):
        if shape not in ("messages", "payload"):
            raise ValueError(f"shape is 'messages' or 'payload', not {shape!r}")
        options.setdefault("provider", "openai")
        self.renderer = BatchRenderer(str(build), role, **options)
        self.shape = shape
        self.sampling_params = sampling_params
        self.keep = tuple(keep)

    def __call__(self, row: dict) -> dict:
        r = self.renderer.render_row(-1, row)
        line = json.loads(r.unwrap())
        body = line["body"]
        out: dict = {k: row[k] for k in self.keep if k in row}
        if self.renderer.id_column is not None:
            out["custom_id"] = r.id
        if self.shape == "payload":
            out["payload"] = body
        else:
            out["messages"] = body["messages"]
            if self.sampling_params is not None:
                out["sampling_params"] = dict(self.sampling_params)
        return out
