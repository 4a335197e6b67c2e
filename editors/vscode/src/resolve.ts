// The pure parts of the extension (no `vscode` import), unit-tested with `node --test` (test/resolve.test.ts):
// which promptmill to start, and the one message shown when it cannot start.

/** How to run promptmill: `command` with `prefix` before promptmill's own arguments. */
export interface Launch {
  command: string;
  prefix: string[];
  /** Where it came from, for the message and the log. */
  source: "setting" | "python" | "path";
  /** The interpreter, when promptmill runs as `python -m promptmill.cli`. */
  python?: string;
}

/**
 * The promptmill to start: the `promptmill.command` setting when the user set one (they chose it),
 * else the Python extension's interpreter for the workspace (`python -m promptmill.cli`), else
 * `promptmill` on PATH.
 */
export function resolveLaunch(setting: readonly string[] | undefined, python: string | undefined): Launch {
  const words = (setting ?? []).map((w) => w.trim()).filter((w) => w.length > 0);
  if (words.length > 0) {
    return { command: words[0], prefix: words.slice(1), source: "setting" };
  }
  if (python && python.trim().length > 0) {
    return { command: python, prefix: ["-m", "promptmill.cli"], source: "python", python };
  }
  return { command: "promptmill", prefix: [], source: "path" };
}

/** What a failed start of `<launch> lsp --stdio` (its exit, error and standard error) says is missing. */
export type Missing = "promptmill" | "lsp-extra" | "other";

export function diagnose(errorCode: string | undefined, exitCode: number | null, stderr: string): Missing {
  if (errorCode === "ENOENT" || errorCode === "EACCES") {
    return "promptmill"; // the command itself is not there
  }
  if (/No module named ['"]?promptmill/.test(stderr)) {
    return "promptmill"; // the interpreter has no promptmill
  }
  if (/PM010/.test(stderr) && /pygls/.test(stderr)) {
    return "lsp-extra"; // `promptmill lsp`'s own error: error[PM010] the language server needs pygls
  }
  if (/No module named ['"]?(pygls|lsprotocol)/.test(stderr)) {
    return "lsp-extra";
  }
  return exitCode === 0 ? "other" : "other";
}

/** The shell command that installs what is missing, for the environment the extension starts. */
export function installCommand(launch: Launch): string {
  const spec = "'promptmill[lsp]'";
  if (launch.source === "python" && launch.python) {
    return `${quote(launch.python)} -m pip install ${spec}`;
  }
  return `pip install ${spec}`;
}

/** The one message shown when the language server cannot start (never a stack trace). */
export function missingMessage(missing: Missing, launch: Launch, detail = ""): string {
  const where =
    launch.source === "python"
      ? `in the workspace's Python (${launch.python})`
      : launch.source === "setting"
        ? `as the promptmill.command setting names it (${[launch.command, ...launch.prefix].join(" ")})`
        : "on PATH";
  const install = installCommand(launch);
  if (missing === "promptmill") {
    return `promptmill is not installed ${where}. Install it with: ${install}`;
  }
  if (missing === "lsp-extra") {
    return `promptmill's language server needs its [lsp] extra (pygls), missing ${where}. Install it with: ${install}`;
  }
  const first = detail.trim().split("\n").filter((l) => l.trim().length > 0).slice(-1)[0] ?? "";
  return `promptmill's language server did not start (promptmill ${where})${first ? `: ${first}` : ""}. See the "promptmill" output.`;
}

/** A word for a POSIX shell: as is when it is plain, else single-quoted. */
export function quote(word: string): string {
  return /^[A-Za-z0-9_./:=@%+-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/** The status bar's text and tooltip for a preview answer. */
export function statusText(answer: PreviewAnswer | undefined): { text: string; tooltip: string } | undefined {
  if (!answer || !answer.role) {
    return undefined;
  }
  if (answer.error) {
    return { text: `$(warning) ${answer.role}`, tooltip: `${answer.error.code} ${answer.error.message}` };
  }
  if (answer.tokens === undefined || answer.budget === undefined) {
    return undefined;
  }
  const over = answer.dropped && answer.dropped.length > 0 ? " $(fold-up)" : "";
  return {
    text: `${answer.role}: ${answer.tokens}/${answer.budget} tokens${over}`,
    tooltip: `${answer.budget_line ?? ""}\nwire ${answer.wire}, model ${answer.model}, state ${answer.state ?? "(none)"}` +
      (answer.dropped && answer.dropped.length ? `\ndropped: ${answer.dropped.join(", ")}` : ""),
  };
}

/** The answer of the server's `promptmill/preview` request (compiler/promptmill/lsp/features/preview.py). */
export interface PreviewAnswer {
  role?: string | null;
  roles?: string[];
  wires?: string[];
  states?: string[];
  state?: string | null;
  wire?: string;
  model?: string;
  tokenizer?: string;
  exact?: boolean;
  tokens?: number;
  budget?: number;
  share?: number;
  head?: string;
  budget_line?: string;
  sections?: { id: string; status: string; tokens: number | null; share: number | null }[];
  dropped?: string[];
  text?: string;
  payload?: string;
  error?: { code: string; message: string; hint?: string | null };
}
