"""The runtime: load a build once, render roles many times.

    rt = promptmill.load("build")
    req = rt.render("executor", state, budget=8000)

`Runtime.load` reads the manifest and every bundle once (and the Hugging Face
tokenizer files a build ships), checking each bundle's SHA-256 against the
manifest, so a corrupt or half-written build is refused with a clear error.
When a compile replaces the build while it reads, it starts again from the
new manifest (up to 5 times), so it returns one consistent build. Roles are
prepared (templates compiled, validators built) on first use. A `Runtime` is safe to share between threads: rendering keeps
all per-call state local, and shared caches are bounded.

This module imports no YAML loader, no template checks and no file walking.
"""

from __future__ import annotations

import dataclasses
import errno
import hashlib
import json
import math
import os
import stat
import threading
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core import userfiles
from ..core.choices import EVENTS
from ..core.errors import (
    BudgetError,
    BuildError,
    ConfigError,
    PromptmillError,
    StateError,
    UnknownRoleError,
)
from ..core.suggest import ID_CUTOFF, did_you_mean, nearest
from . import conditions, tooldecl
from .assemble import Counted, assemble
from .bundle import Manifest, RoleBundle, Section, manifest_from_dict, role_from_dict
from .counting import CountCache, Counter
from .fill import PreparedRole, make_candidate, unique_tool_names
from .fit import Fitter
from .itemmemo import ItemMemo
from .request import PromptRequest
from .schema.validate import Validator
from .statelimits import MAX_STATE_CHARS, MAX_STATE_DEPTH, MAX_STATE_NODES, check_state_data  # noqa: F401 (re-exported)
from .tokenizers import counts_exactly, get_tokenizer
from .wire import get_wire

if TYPE_CHECKING:
    from .models import ModelInfo, ModelTable
    from .wire import Wire

_render_span: Any = None  # set by runtime/tracing.py while renders are traced: the render path imports nothing for it
LOAD_ATTEMPTS = 5  # Runtime.load starts again from the new manifest at most this often
BUILD_FILE_LIMIT = userfiles.DEFAULT_LIMIT  # a manifest or bundle; far above any build promptmill writes
CACHE_CHARS = 8_000_000  # default bound of each tokenizer's count cache (characters of cached text)


_MISSING = userfiles.reason(FileNotFoundError())  # how userfiles says a file does not exist


def _read_json(path: Path, expected_sha: str | None, what: str, root: Path) -> Any:
    try:  # a regular file only, at most BUILD_FILE_LIMIT: a bundle linked to /dev/zero or a FIFO is an error, not a hang
        raw = userfiles.read_bytes(path, limit=BUILD_FILE_LIMIT, root=root, what=what)
    except userfiles.PathOutsideError:  # a link out of the build (PM017) is never followed, whatever it holds
        raise
    except PromptmillError as exc:
        if exc.message.endswith(_MISSING) or not os.path.lexists(path):  # removed by a concurrent compile: `load` starts again
            raise FileNotFoundError(errno.ENOENT, f"{what} missing", str(path)) from None
        raise BuildError(exc.message, hint="recompile: promptmill compile") from None
    if expected_sha is not None and hashlib.sha256(raw).hexdigest() != expected_sha:
        raise BuildError(
            f"{what} {path} does not match the hash in manifest.json (corrupted or edited by hand)",
            hint="recompile: promptmill compile",
        )
    try:
        return json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise BuildError(f"{what} {path} is not valid JSON: {exc}", hint="recompile: promptmill compile") from exc
    except RecursionError:  # no build promptmill writes nests this deep
        raise BuildError(f"{what} {path} is nested too deeply to be a promptmill build", hint="recompile: promptmill compile") from None


def _require_content(role: str, req: PromptRequest, limit: int) -> None:
    """PM830 when the budget dropped every section: an empty prompt is never what was meant,
    and no provider should get one (OpenAI would take `messages: []` without a word)."""
    if any(s.present for s in req.sections):
        return
    dropped = [s.id for s in req.sections if s.status == "dropped"]
    if dropped:
        raise BudgetError(
            f"role '{role}': the budget of {limit} tokens holds no section; dropped: {', '.join(dropped)}",
            code="PM830",
            hint="raise the budget (render(..., budget=N) or budget.max_tokens), or shorten what the state sends",
        )


def _validate(validator: Validator, role: str, state: Mapping[str, Any]) -> None:
    """Check `state` against the inputs schema; PM810 with every problem, PM812 when too deep to check."""
    try:
        if validator.is_valid(state):
            return
        errors = validator.errors(state)
    except RecursionError:  # lists checked lazily skip the depth check of check_state_data
        raise StateError(role, [("state", "is nested too deeply to check against the inputs schema")], code="PM812") from None
    raise StateError(role, errors)


class Runtime:
    """A loaded build. Create with `promptmill.load(build_dir)`."""

    def __init__(
        self,
        bundles: Mapping[str, RoleBundle],
        *,
        base_dir: Path | None = None,
        manifest: Manifest | None = None,
        cache_chars: int = CACHE_CHARS,
        abstract: Iterable[str] = (),
        models: ModelTable | None = None,
    ):
        if isinstance(cache_chars, bool) or not isinstance(cache_chars, int) or cache_chars < 0:
            raise ConfigError(f"cache_chars must be a whole number of characters, 0 or more; got {cache_chars!r}", code="PM010")
        self._bundles = dict(bundles)
        self._abstract = frozenset(manifest.abstract if manifest is not None else abstract)
        self.base_dir = base_dir
        self.manifest = manifest
        self.cache_chars = cache_chars
        self._prepared: dict[str, PreparedRole] = {}
        self._counters: dict[str, Counter] = {}
        self._memo = ItemMemo(cache_chars)
        self._lock = threading.Lock()
        self._models = models

    @property
    def models(self) -> ModelTable:
        """The model table renders look a `model=` up in: the shipped one, with the project's rows
        when the runtime was built from sources (`build_in_memory`, the CLI, the preview)."""
        if self._models is None:
            from .models import default_table

            self._models = default_table()
        return self._models

    @classmethod
    def load(cls, build_dir: str | os.PathLike[str] = "build", *, cache_chars: int = CACHE_CHARS) -> Runtime:
        """Read `build_dir/manifest.json` and every bundle it lists.

        `cache_chars` bounds the token-count cache of each tokenizer and the
        memo of checked, rendered list items (`promptmill.runtime.itemmemo`), each in
        characters of cached text; memory stays within about twice that.
        """
        root = Path(build_dir)
        manifest_path = root / "manifest.json"
        for attempt in range(LOAD_ATTEMPTS):
            if not manifest_path.is_file():
                raise BuildError(
                    f"no build at {root}: {manifest_path} does not exist",
                    hint="compile your prompts first: promptmill compile",
                )
            try:
                manifest = manifest_from_dict(_read_json(manifest_path, None, "manifest", root), str(manifest_path))
                bundles = {}
                for role_id, entry in manifest.roles.items():
                    data = _read_json(root / entry.file, entry.sha256, f"bundle of role '{role_id}'", root)
                    bundle = role_from_dict(data, str(root / entry.file))
                    if bundle.id != role_id:
                        raise BuildError(f"{root / entry.file}: holds role '{bundle.id}', manifest says '{role_id}'")
                    bundles[role_id] = bundle
                runtime = cls(bundles, base_dir=root, manifest=manifest, cache_chars=cache_chars)
                runtime._load_shipped_tokenizers()
                return runtime
            except FileNotFoundError as exc:
                # A compile replaced the build between reading the manifest and a
                # bundle: read the new manifest.
                if attempt == LOAD_ATTEMPTS - 1:
                    raise BuildError(
                        f"build at {root} is incomplete: {exc.filename} is missing", hint="recompile: promptmill compile"
                    ) from exc
        raise AssertionError("unreachable")  # pragma: no cover

    def _load_shipped_tokenizers(self) -> None:
        """Read the build's Hugging Face tokenizer files now, with the bundles: a
        later compile may remove them (FileNotFoundError makes `load` retry)."""
        for name in sorted({b.tokenizer for b in self._bundles.values() if b.tokenizer.startswith("hf:")}):
            path = Path(name[3:])
            build = None if path.is_absolute() else self.base_dir  # the build's own copy: compile writes tokenizers/<hash>.json
            if build is not None:
                path = build / path
            if not os.path.lexists(path):
                raise FileNotFoundError(errno.ENOENT, "tokenizer file missing", str(path))
            if build is not None:  # never read through a link out of the build
                userfiles.check_inside(path, build, what="tokenizer file")
            kind = os.stat(path).st_mode
            if not stat.S_ISREG(kind):
                raise BuildError(
                    f"{path}: the tokenizer file is {userfiles.kind_of(kind)}; promptmill reads regular files only",
                    hint="recompile: promptmill compile",
                )
            self.counter(name)

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        """Pickle what the runtime was made from, never its caches or tiktoken's tables: a
        runtime loaded from a build reloads it (SHA-256 checked) where it is unpickled; one
        built in memory carries its bundles."""
        if self.manifest is not None and self.base_dir is not None:
            return (_reload, (os.path.abspath(self.base_dir), self.cache_chars))
        base = None if self.base_dir is None else str(self.base_dir)
        return (_rebuild, (self._bundles, base, self.cache_chars, sorted(self._abstract), self._models))

    @property
    def roles(self) -> list[str]:
        return sorted(self._bundles)

    def bundle(self, role: str) -> RoleBundle:
        found = self._bundles.get(role)
        if found is None and role in self._abstract:
            raise UnknownRoleError(
                f"role '{role}' is abstract: other roles extend it, it is never rendered itself",
                code="PM802",
                hint=_abstract_hint(role, self.roles),
            )
        if found is None:
            close = nearest(role, self._bundles, n=3, cutoff=ID_CUTOFF)
            raise UnknownRoleError(
                f"no role '{role}' in this build",
                code="PM802",
                hint=_role_hint(close, self.roles),
            )
        return found

    def counter(self, tokenizer: str) -> Counter:
        counter = self._counters.get(tokenizer)
        if counter is None:
            with self._lock:
                counter = self._counters.get(tokenizer)
                if counter is None:
                    counter = Counter(get_tokenizer(tokenizer, base_dir=self.base_dir), CountCache(self.cache_chars))
                    self._counters[tokenizer] = counter
        return counter

    def prepared(self, role: str) -> PreparedRole:
        prepared = self._prepared.get(role)
        if prepared is None:
            bundle = self.bundle(role)
            counter = self.counter(bundle.tokenizer)
            with self._lock:
                prepared = self._prepared.get(role)
                if prepared is None:
                    prepared = PreparedRole.prepare(bundle, counter, self._memo)
                    self._prepared[role] = prepared
        return prepared

    def count_note(self, role: str, *, provider: str | None = None, model: str | None = None) -> str:
        """How renders of `role` for `provider` and `model` (defaults as in `render`) are counted:
        `exact`, `estimate` or `estimated, ratio R for MODEL` (the batch summary says it once)."""
        info = None if model is None else self.models.lookup(model)
        bundle = self.bundle(role)
        wire = get_wire(provider or (info.default_wire if info is not None else bundle.provider))
        counted = self._ratio(bundle, wire, info)
        if counted.ratio != 1:
            return f"estimated, ratio {counted.ratio:g} for {counted.ratio_for}"
        exact = counts_exactly(bundle.tokenizer if info is None else info.tokenizer, base_dir=self.base_dir)
        return "exact" if exact and not wire.estimate else "estimate"

    def check_wire(self, role: str, *, provider: str | None = None, model: str | None = None) -> None:
        """PM010 when the wire a render of `role` for `provider` and `model` (defaults as in `render`)
        uses cannot serve the model the request is for (`models.check_serves`, as `batch` checks): a
        request body never names a model its API does not serve. `render` itself still fits a role for
        any wire (the preview compares them); the CLI's `render` and `batch` call this first."""
        from .models import check_serves

        info = None if model is None else self.models.lookup(model)
        bundle = self.bundle(role)
        wire = get_wire(provider or (info.default_wire if info is not None else bundle.provider))
        check_serves(wire, model or bundle.model, self.models)

    def _prepared_with(self, role: str, info: ModelInfo | None) -> PreparedRole:
        """The role prepared as a render for the model `info` (None: the role's own) counts it."""
        return self.prepared(role) if info is None else self._prepared_for(role, info.tokenizer)

    def warm(self, role: str, *, model: str | None = None) -> None:
        """Do now what a first render of `role` for `model` would do first: prepare the role for the tokenizer
        it counts with and build that tokenizer's tables (`load`, where a tokenizer has them). A batch run calls
        this before it forks its workers, so that none of them does it again."""
        info = None if model is None else self.models.lookup(model)
        load = getattr(self._prepared_with(role, info).counter.tokenizer, "load", None)
        if load is not None:
            load()

    def _prepared_for(self, role: str, tokenizer: str) -> PreparedRole:
        """The role prepared for counting with `tokenizer`: its own preparation when the bundle counts
        with it, else the bundle with its compile-time counts (static sections, titles) recounted."""
        bundle = self.bundle(role)
        if bundle.tokenizer == tokenizer:
            return self.prepared(role)
        key = f"{role}@{tokenizer}"
        prepared = self._prepared.get(key)
        if prepared is None:
            counter = self.counter(tokenizer)
            recounted = _recounted(bundle, tokenizer, counter)
            with self._lock:
                prepared = self._prepared.get(key)
                if prepared is None:
                    prepared = PreparedRole.prepare(recounted, counter, self._memo)
                    self._prepared[key] = prepared
        return prepared

    def render(
        self,
        role: str,
        state: Mapping[str, Any] | None = None,
        *,
        budget: int | None = None,
        provider: str | None = None,
        event: str = "start",
        validate: bool = True,
        model: str | None = None,
    ) -> PromptRequest:
        """Fill `role` with `state` and fit it to the budget.

        `budget` caps the tokens the prompt may use (it can lower, never raise,
        the role's `max_tokens - reserve`). `provider` names the wire (the API
        dialect) the budget is counted on (default: the model's provider when `model`
        is given, else the role's). `model` renders for another model than the role's
        `model:`: its row of the model table (`Runtime.models`) gives the encoding, the
        ratio, the context window and the reply limit; an unknown model is PM502. `event`
        is `start` or `continue` (for injection rules). With `validate=False` the state
        is not checked against the role's inputs schema. While `promptmill.trace_renders()` is
        on, the render runs in an OpenTelemetry span carrying `req.trace_attributes`.
        """
        if _render_span is not None:
            with _render_span(role) as span:
                req = self._render(role, state, budget=budget, provider=provider, event=event, validate=validate, model=model)
                span.set_attributes(req.trace_attributes)
                return req
        return self._render(role, state, budget=budget, provider=provider, event=event, validate=validate, model=model)

    def _render(
        self,
        role: str,
        state: Mapping[str, Any] | None,
        *,
        budget: int | None,
        provider: str | None,
        event: str,
        validate: bool,
        model: str | None,
    ) -> PromptRequest:
        info = None if model is None else self.models.lookup(model)
        prepared = self._prepared_with(role, info)
        bundle = prepared.bundle
        if provider is None:
            provider = info.default_wire if info is not None else bundle.provider
        wire = get_wire(provider)
        if event not in EVENTS:
            raise PromptmillError(f"unknown event '{event}'; expected one of: {', '.join(EVENTS)}", code="PM010")
        state = {} if state is None else state
        try:
            if not isinstance(state, Mapping):
                raise StateError(role, [("state", f"must be a mapping, got {type(state).__name__}")])
            if type(state) is not dict:
                state = dict(state)  # any Mapping at the top (inside, values are JSON data: dicts and lists)
            chosen = None
            if bundle.parents:
                prepared, chosen = self._choose_parent(prepared, state, wire.name, event, model)
                bundle = prepared.bundle
            limit, origins, margin_tokens, counted = self._budget(bundle, wire, budget, info)
            if validate:
                check_state_data(state, bundle.lazy_paths)
                if prepared.validator is not None:
                    _validate(prepared.validator, role, state)
            ctx = prepared.context(state)
            cond_ctx = _condition_context(bundle, state, wire.name, event, model)
            cands = []
            skipped = []
            try:
                for index, spec in enumerate(bundle.sections):
                    if spec.when is not None and not conditions.evaluate(spec.when, cond_ctx):
                        skipped.append(spec)
                        continue
                    cands.append(make_candidate(prepared, spec, index, state, ctx, cond_ctx, validate))
            except conditions.ConditionTimeout as exc:  # name the section whose condition it is
                raise conditions.ConditionTimeout(f"role '{role}', section '{spec.id}': {exc.message}", hint=exc.hint) from None
            if any(c.spec.kind == "tools" for c in cands):
                unique_tool_names(cands, self._reserved_tools(bundle, wire))
            result = Fitter(prepared, wire, limit, ctx).fit(cands)
        except StateError as exc:
            if exc.role:
                raise
            raise StateError(role, exc.errors, code=exc.code) from None
        req = assemble(prepared, wire, result, skipped, limit, origins, margin_tokens, state, counted)
        if chosen is not None:
            req = dataclasses.replace(req, events=(chosen, *req.events))
        _require_content(role, req, limit)
        return req

    def _choose_parent(
        self, prepared: PreparedRole, state: dict, wire: str, event: str, model: str | None = None
    ) -> tuple[PreparedRole, dict]:
        """For a role whose parent is chosen at render time: the prepared candidate whose
        condition holds first (else the role with its `extends`), and the `parent_chosen` event."""
        bundle = prepared.bundle
        cond_ctx = _condition_context(bundle, state, wire, event, model)
        for index, choice in enumerate(bundle.parents):
            if conditions.evaluate(choice.when, cond_ctx):
                key = f"{bundle.id}#{index}@{bundle.tokenizer}"  # '#' and '@' never occur in a role id
                found = self._prepared.get(key)
                if found is None:
                    with self._lock:
                        found = self._prepared.get(key)
                        if found is None:
                            found = PreparedRole.prepare(choice.bundle, self.counter(choice.bundle.tokenizer), self._memo)
                            self._prepared[key] = found
                return found, {"type": "parent_chosen", "parent": choice.parent, "candidate": index, "when": choice.when}
        return prepared, {"type": "parent_chosen", "parent": bundle.default_parent, "candidate": None, "when": None}

    @staticmethod
    def _reserved_tools(bundle: RoleBundle, wire: Wire) -> dict[str, str]:
        """Tool names the output contract takes: its return tool, where it is sent natively
        or (return_call) where the prompt tells the model to call it."""
        contract = bundle.output
        if contract is None or contract.style not in ("return_call", "native"):
            return {}
        names = [t["name"] for t in wire.extra_tools(contract, bundle.tool_mode)]
        if contract.style == "return_call":
            names.append(tooldecl.return_tool(contract)["name"])
        return {name: f"the return tool of output contract '{contract.id}'" for name in names}

    def _budget(
        self, bundle: RoleBundle, wire: Wire, budget: int | None, info: ModelInfo | None
    ) -> tuple[int, dict[str, str], int, Counted]:
        """(tokens the fit may count, origins, margin tokens, how counts relate to the model's).

        The one place a ratio enters: the budget in the model's tokens, less the margin, is
        divided by the ratio, so a prompt the fit keeps within the returned limit, counted
        with the encoding, is within the budget once multiplied by the ratio."""
        b = bundle.budget
        origins = dict(b.origins)
        margin = b.margin if b.margin is not None else wire.default_margin
        if b.margin is None and wire.default_margin:
            origins["margin"] = f"provider {wire.name} default (counts are estimates)"
        max_tokens, reserve = b.max_tokens, b.reserve
        if info is not None:
            origins["model"] = f"render-time model {info.model} (row {info.pattern})"
            origins["context_window"] = f"model {info.model} ({info.context_window})"
            origins["tokenizer"] = f"model {info.model} (row {info.pattern})"  # the fit counts with the model's
            if info.context_window < max_tokens:
                max_tokens = info.context_window
                origins["max_tokens"] = f"context window of {info.model} ({info.pattern})"
            if info.max_output_tokens is not None and reserve > info.max_output_tokens:
                reserve = info.max_output_tokens
                origins["reserve"] = f"reply limit of {info.model} ({info.pattern})"
            if reserve >= max_tokens:
                raise BudgetError(
                    f"role '{bundle.id}': reserve {reserve} leaves no room in the context window of {info.model} ({max_tokens})",
                    code="PM831",
                )
        if "provider" in origins:  # the role's model chose its provider: say when this render's did
            if info is not None and wire.name == info.default_wire:
                origins["provider"] = f"render-time model {info.model} (row {info.pattern})"
            elif wire.name != bundle.provider:
                origins["provider"] = f"render-time provider {wire.name}"
        counted = self._ratio(bundle, wire, info)
        if counted.ratio != 1:
            origins["ratio"] = counted.origin
        room = max_tokens - reserve
        if budget is not None:
            if isinstance(budget, bool) or not isinstance(budget, int) or budget <= 0:
                raise BudgetError(f"budget must be a positive integer, got {budget!r}", code="PM831")
            if budget < room:
                origins["budget"] = f"render-time budget {budget}"
                room = budget
            else:
                origins["budget"] = f"render-time budget {budget}, capped at the role's {room}"
        # the margin holds back part of whichever budget applies: counts on this wire are estimates
        margin_tokens = math.ceil(room * margin)
        model_limit = room - margin_tokens
        limit = model_limit if counted.ratio == 1 else math.floor(model_limit / counted.ratio)
        points = self._breakpoints(bundle, wire, info)
        return (
            limit,
            origins,
            margin_tokens,
            counted._replace(max_tokens=max_tokens, reserve=reserve, limit=model_limit, breakpoints=points),
        )

    def _breakpoints(self, bundle: RoleBundle, wire: Wire, info: ModelInfo | None) -> int | None:
        """The cache breakpoints the model takes (its row's `cache.breakpoints`), on a wire that
        marks them (`Wire.explicit_cache`); None without a row of the wire's models."""
        if not wire.explicit_cache:
            return None
        row = info if info is not None else (self.models.resolve(bundle.model) if bundle.model else None)
        return row.cache_breakpoints if row is not None and row.provider == wire.models else None

    def _ratio(self, bundle: RoleBundle, wire: Wire, info: ModelInfo | None) -> Counted:
        """The model's tokens per counted token on `wire`: 1 where the count is the provider's own
        (or the wire has no provider), the render-time model's ratio, the role's model's (from
        compile), else the largest ratio of the wire's provider in the table."""
        if not wire.estimate:
            return Counted(1.0, "", None if info is None else info.model)
        if info is not None and info.provider == wire.models:
            return Counted(info.ratio, f"model {info.model} (row {info.pattern})", info.model, ratio_for=info.model)
        if info is None and bundle.budget.ratio is not None:
            role_model = self.models.resolve(bundle.model) if bundle.model else None
            if role_model is None or role_model.provider == wire.models:
                origin = bundle.budget.origins.get("ratio", f"model {bundle.model}")
                return Counted(bundle.budget.ratio, origin, bundle.model, ratio_for=bundle.model)
        ratio = self.models.max_ratio(wire.models)
        named = info.model if info is not None else bundle.model
        why = f"{named} is not one of its models" if named else "no model is named"
        origin = f"wire {wire.name}: {why}, so the largest ratio of its {wire.models} models in the table"
        return Counted(ratio, origin, named, ratio_for=f"any {wire.models} model")


def _condition_context(bundle: RoleBundle, state: Mapping[str, Any], wire: str, event: str, model: str | None = None) -> dict[str, Any]:
    """What a `when` condition (a section's, a rule line's, a parent choice's) can read: `model` is
    the model rendered for (the render's `model=`, else the role's)."""
    return {
        "state": state,
        "role": {"id": bundle.id, "category": bundle.category},
        "model": bundle.model if model is None else model,
        "provider": wire,
        "event": event,
    }  # conditions read the wire name as `provider`


def _recounted(bundle: RoleBundle, tokenizer: str, counter: Counter) -> RoleBundle:
    """`bundle` counting with another tokenizer: the counts compile stored, made again (parents too)."""

    def recount(s: Section) -> Section:
        tokens = counter.count(s.text) if s.kind == "static" and s.text else s.tokens
        title = counter.count(s.title + "\n") if s.title else s.title_tokens
        return dataclasses.replace(s, tokens=tokens, title_tokens=title)

    parents = tuple(dataclasses.replace(c, bundle=_recounted(c.bundle, tokenizer, counter)) for c in bundle.parents)
    return dataclasses.replace(bundle, tokenizer=tokenizer, sections=tuple(recount(s) for s in bundle.sections), parents=parents)


def _reload(build_dir: str, cache_chars: int) -> Runtime:
    return Runtime.load(build_dir, cache_chars=cache_chars)


def _rebuild(bundles: dict, base_dir: str | None, cache_chars: int, abstract: list[str], models: ModelTable | None = None) -> Runtime:
    base = None if base_dir is None else Path(base_dir)
    return Runtime(bundles, base_dir=base, cache_chars=cache_chars, abstract=abstract, models=models)


def _abstract_hint(role: str, roles: list[str]) -> str:
    """The hint of PM802 for an abstract role: the roles that can be rendered."""
    if not roles:
        return f"the build holds no roles yet: add one with `extends: {role}` and compile"
    return "render one of the roles: " + _role_list(roles)


def _role_hint(close: list[str], roles: list[str]) -> str:
    """The hint of PM802: the nearest role ids, else the roles there are (or that there are none)."""
    if close:
        return did_you_mean(close)
    if not roles:
        return "the build holds no roles: add a `kind: role` template (abstract roles are not built) and compile"
    return "roles: " + _role_list(roles)


def _role_list(roles: list[str], shown: int = 20) -> str:
    return ", ".join(roles[:shown]) + (", ..." if len(roles) > shown else "")
