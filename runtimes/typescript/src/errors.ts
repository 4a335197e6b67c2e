// Errors a caller can act on, with the stable codes of the Python runtime (docs/errors.md).
// `message` and `hint` are the Python runtime's, byte for byte: the conformance corpus compares them.

export class PromptmillError extends Error {
  readonly code: string;
  readonly hint: string | null;
  constructor(code: string, message: string, hint: string | null = null) {
    super(message);
    this.code = code;
    this.hint = hint;
    this.name = "PromptmillError";
  }

  /** As the Python CLI prints it: `promptmill: error[PM810]: <message>` then `  hint: <hint>`. */
  cliText(): string {
    return `promptmill: error[${this.code}]: ${this.message}` + (this.hint ? `\n  hint: ${this.hint}` : "");
  }
}

/** PM801: a build this runtime cannot read (format, version, hash, unknown field, a fallback section). */
export const buildError = (message: string, hint: string | null = null) => new PromptmillError("PM801", message, hint);
/** PM802: no such role, or an abstract one. */
export const unknownRoleError = (message: string, hint: string | null = null) => new PromptmillError("PM802", message, hint);
/** PM810: the state does not fit the role's inputs (every problem listed). */
export const stateError = (message: string, hint: string | null = null) => new PromptmillError("PM810", message, hint);

// What the environment does to a command, as the Python runtime's error boundary words it (core/boundary.py
// `environment_error`): never a bug (PM000). PM021 disk-refused, PM022 name-too-long, PM023 out-of-memory.
const DISK_ERRNOS: Record<string, string> = {
  ENOSPC: "the disk is full",
  EROFS: "the file system is read-only",
  EDQUOT: "the disk quota is exceeded",
  EACCES: "permission denied",
  EPERM: "the operation is not permitted",
  EIO: "an input/output error",
  EMFILE: "too many open files",
  ENFILE: "too many open files in the system",
  EISDIR: "a folder is where a file should be",
  ENOTDIR: "a file is where a folder should be",
  EEXIST: "something is already there",
  ENOTEMPTY: "the folder is not empty",
  EXDEV: "the file would cross file systems",
  EBUSY: "the file is busy",
};

/** A PromptmillError naming what the environment did, or null when `exc` is a bug. */
export function environmentError(exc: unknown): PromptmillError | null {
  if (exc instanceof PromptmillError) return exc;
  if (exc instanceof RangeError && /Invalid string length|Array buffer allocation failed|Invalid array length/.test(exc.message)) {
    // V8's words for a string or buffer larger than it can hold: Python's MemoryError
    return new PromptmillError("PM023", "out of memory", "the input is larger than this machine can hold; split it, or raise the memory limit");
  }
  const err = exc as NodeJS.ErrnoException;
  if (!(exc instanceof Error) || typeof err.code !== "string") return null;
  const name = typeof err.path === "string" ? err.path : "";
  if (err.code === "ENAMETOOLONG") {
    return new PromptmillError("PM022", `${name || "a file name"}: the name is longer than the file system allows`, "use shorter file or folder names");
  }
  const said = DISK_ERRNOS[err.code];
  if (said !== undefined) return new PromptmillError("PM021", `${name ? name + ": " : ""}${said}`, "free disk space, or choose a folder you can write");
  return null;
}
