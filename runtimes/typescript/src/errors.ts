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
