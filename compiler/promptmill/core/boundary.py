"""The error boundary: what the environment does to a command, as a PM-coded error.

    err = environment_error(exc)   # a PromptmillError, or None for a real bug

Every surface (the CLI's `handled`, the language server, the preview server,
the batch workers) asks this before it calls an exception a bug (PM000). The
environment is never a bug:

- PM020 tool-missing: a program promptmill runs (git) is not installed;
- PM021 disk-refused: the disk is full, read-only, over quota, or refuses
  (permissions, an I/O error, too many open files);
- PM022 name-too-long: a file name longer than the file system allows;
- PM023 out-of-memory: the machine ran out of memory;
- PM024 worker-stopped: a worker process of a batch run stopped before it
  finished (killed by a signal, or by the kernel when memory ran out);
- PM843 provider-refused: a provider answered with an error (no or a wrong API
  key, no permission, a rate limit, a bad request);
- PM844 provider-unreachable: the provider could not be reached, or did not
  answer in time (`PROMPTMILL_PROVIDER_TIMEOUT`, default 30 s).

Provider errors are recognised by their class (the official SDKs' and httpx's
names), so this module imports no SDK.
"""

from __future__ import annotations

import errno
import os

from .errors import PromptmillError

PROVIDER_TIMEOUT_ENV = "PROMPTMILL_PROVIDER_TIMEOUT"
DEFAULT_PROVIDER_TIMEOUT = 30.0  # seconds: a count_tokens call answers in well under one

DISK_ERRNOS = {
    errno.ENOSPC: "the disk is full",
    errno.EROFS: "the file system is read-only",
    errno.EDQUOT: "the disk quota is exceeded",
    errno.EACCES: "permission denied",
    errno.EPERM: "the operation is not permitted",
    errno.EIO: "an input/output error",
    errno.EMFILE: "too many open files",
    errno.ENFILE: "too many open files in the system",
    errno.EISDIR: "a folder is where a file should be",
    errno.ENOTDIR: "a file is where a folder should be",
    errno.EEXIST: "something is already there",
    errno.ENOTEMPTY: "the folder is not empty",
    errno.EXDEV: "the file would cross file systems",
    errno.EBUSY: "the file is busy",
}

_UNREACHABLE = frozenset(
    {
        "APIConnectionError", "APITimeoutError", "ConnectError", "ConnectTimeout", "ReadTimeout", "TimeoutException",
        "TransportError", "NetworkError", "EndpointConnectionError", "ConnectTimeoutError", "ReadTimeoutError",
        "RequestTimeoutError", "GatewayTimeoutError", "DeadlineExceededError", "ServiceUnavailableError",
    }
)  # fmt: skip
_PROVIDER_MODULES = ("openai", "anthropic", "google", "httpx", "httpx2", "httpcore", "botocore", "boto3")


def provider_timeout() -> float:
    """Seconds to wait for a provider's answer: PROMPTMILL_PROVIDER_TIMEOUT, else 30."""
    raw = os.environ.get(PROVIDER_TIMEOUT_ENV, "")
    try:
        value = float(raw) if raw.strip() else DEFAULT_PROVIDER_TIMEOUT
    except ValueError:
        raise PromptmillError(
            f"{PROVIDER_TIMEOUT_ENV}={raw!r} is not a number of seconds", code="PM010", hint="set it to e.g. 30, or unset it"
        ) from None
    if not 0 < value <= 3600:
        raise PromptmillError(
            f"{PROVIDER_TIMEOUT_ENV}={raw!r} is out of range", code="PM010", hint="use a number of seconds between 0 and 3600"
        )
    return value


def _shown(name: object) -> str:
    return os.fsdecode(name) if isinstance(name, (str, bytes, os.PathLike)) else str(name)


def os_error(exc: OSError, doing: str = "") -> PromptmillError | None:
    """PM020/PM021/PM022 for what the operating system refused, or None when it is not the environment."""
    where = f" ({doing})" if doing else ""
    name = _shown(exc.filename) if exc.filename is not None else ""
    if isinstance(exc, FileNotFoundError) and name and "/" not in name and os.sep not in name and exc.filename2 is None:
        if not os.path.lexists(name):  # a bare program name that exec could not find
            return PromptmillError(
                f"the program '{name}' is not installed or not on PATH{where}",
                code="PM020",
                hint=f"install {name} (e.g. `apt-get install {name}`), or put it on PATH",
            )
    if exc.errno == errno.ENAMETOOLONG:
        return PromptmillError(
            f"{name or 'a file name'}: the name is longer than the file system allows{where}",
            code="PM022",
            hint="use shorter file or folder names",
        )
    if exc.errno in DISK_ERRNOS:
        return PromptmillError(
            f"{name + ': ' if name else ''}{DISK_ERRNOS[exc.errno]}{where}",
            code="PM021",
            hint="free disk space, or choose a folder you can write",
        )
    return None


def _provider_error(exc: BaseException) -> PromptmillError | None:
    module = type(exc).__module__.split(".", 1)[0]
    names = {cls.__name__ for cls in type(exc).__mro__}
    if module not in _PROVIDER_MODULES and not (names & {"APIConnectionError", "APIStatusError"}):
        return None
    detail = str(exc).splitlines()[0][:300] if str(exc) else type(exc).__name__
    if names & _UNREACHABLE:
        return PromptmillError(
            f"the provider could not be reached or did not answer in time: {detail}",
            code="PM844",
            hint=f"check the network and the provider's address; the wait is {PROVIDER_TIMEOUT_ENV} seconds"
            f" (default {DEFAULT_PROVIDER_TIMEOUT:.0f})",
        )
    if module in ("openai", "anthropic", "google", "botocore", "boto3") or "APIStatusError" in names:
        status = getattr(exc, "status_code", None) or getattr(exc, "code", None)
        said = f" (HTTP {status})" if isinstance(status, int) else ""
        return PromptmillError(
            f"the provider refused the request{said}: {detail}",
            code="PM843",
            hint="check the API key and its permissions (the SDK reads it from the environment, e.g. ANTHROPIC_API_KEY)",
        )
    return None


def environment_error(exc: BaseException, doing: str = "") -> PromptmillError | None:
    """A PromptmillError naming what the environment did, or None when `exc` is a bug."""
    if isinstance(exc, PromptmillError):
        return exc
    if isinstance(exc, MemoryError):
        return PromptmillError(
            f"out of memory{f' ({doing})' if doing else ''}",
            code="PM023",
            hint="the input is larger than this machine can hold; split it, or raise the memory limit",
        )
    if type(exc).__name__ == "BrokenProcessPool" and type(exc).__module__ == "concurrent.futures.process":
        return PromptmillError(
            "a worker process stopped before it finished: killed by a signal, or by the system when memory ran out"
            + (f" ({doing})" if doing else ""),
            code="PM024",
            hint="run with fewer workers (--workers) or on a machine with more memory; the kernel log (dmesg) names an out-of-memory kill",
        )
    if isinstance(exc, UnicodeEncodeError) and exc.reason == "surrogates not allowed":
        return None
    if isinstance(exc, OSError):
        found = os_error(exc, doing)
        if found is not None:
            return found
    if isinstance(exc, (TimeoutError, ConnectionError)) and not isinstance(exc, BrokenPipeError):
        return PromptmillError(
            f"the network failed{f' ({doing})' if doing else ''}: {exc}",
            code="PM844",
            hint=f"check the network; the wait is {PROVIDER_TIMEOUT_ENV} seconds",
        )
    return _provider_error(exc)
