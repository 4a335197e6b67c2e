// promptmill for VS Code: starts `promptmill lsp` (diagnostics, hovers with tokens, completion, rename),
// shows the rendered prompt of the active role beside the editor (rendered by promptmill's language
// server, request `promptmill/preview`; nothing is rendered here), its tokens against the budget in the
// status bar, and runs the CLI's commands. docs/editors.md, "VS Code".
import * as vscode from "vscode";
import { spawn } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { LanguageClient, LanguageClientOptions, ServerOptions, RevealOutputChannelOn } from "vscode-languageclient/node";
import { diagnose, Launch, missingMessage, installCommand, PreviewAnswer, resolveLaunch, statusText } from "./resolve";
import { previewHtml } from "./preview";

const PREVIEW = "promptmill/preview";
const PROBE_TIMEOUT_MS = 60_000;

let client: LanguageClient | undefined;
let launch: Launch | undefined;
let output: vscode.OutputChannel;
let status: vscode.StatusBarItem;
let panel: vscode.WebviewPanel | undefined;
let shown: { role?: string; wire?: string; model?: string; state?: string } = {};
let lastUri: string | undefined;
let timer: NodeJS.Timeout | undefined;
let serial = 0;

export async function activate(context: vscode.ExtensionContext): Promise<{ preview: (params?: object) => Promise<PreviewAnswer | undefined> }> {
  output = vscode.window.createOutputChannel("promptmill");
  status = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Right, 100);
  status.name = "promptmill tokens";
  status.command = "promptmill.preview";
  context.subscriptions.push(output, status);

  const reg = (id: string, fn: (...args: any[]) => unknown) => context.subscriptions.push(vscode.commands.registerCommand(id, fn));
  reg("promptmill.preview", () => openPreview(context));
  reg("promptmill.restart", async () => {
    await stopClient();
    await startClient(context);
  });
  reg("promptmill.compile", () => runCli(["compile"]));
  reg("promptmill.lint", () => runCli(["lint"]));
  reg("promptmill.snapshot", () => runCli(["snapshot"]));
  reg("promptmill.test", () => runCli(["test"]));
  reg("promptmill.render", () => renderForWire());
  reg("promptmill.diff", () => diffAgainst());

  context.subscriptions.push(
    vscode.window.onDidChangeActiveTextEditor((editor) => {
      if (editor && isOurs(editor.document)) {
        schedule(0);
      }
    }),
    vscode.workspace.onDidChangeTextDocument((e) => {
      if (isOurs(e.document) && e.contentChanges.length > 0) {
        schedule(250);
      }
    }),
    vscode.workspace.onDidChangeConfiguration(async (e) => {
      if (e.affectsConfiguration("promptmill.command")) {
        await stopClient();
        await startClient(context);
      } else if (e.affectsConfiguration("promptmill.preview")) {
        schedule(0);
      }
    }),
  );
  await startClient(context);
  return { preview: (params?: object) => ask(params ?? {}) };
}

export async function deactivate(): Promise<void> {
  await stopClient();
}

function projectRoot(): string | undefined {
  const folders = vscode.workspace.workspaceFolders ?? [];
  for (const f of folders) {
    if (fs.existsSync(path.join(f.uri.fsPath, "promptmill.yaml"))) {
      return f.uri.fsPath;
    }
  }
  return folders[0]?.uri.fsPath;
}

function isOurs(doc: vscode.TextDocument): boolean {
  const root = projectRoot();
  return doc.uri.scheme === "file" && doc.languageId === "yaml" && !!root && doc.uri.fsPath.startsWith(root + path.sep);
}

/** The workspace's Python interpreter from the Python extension, when it is installed. */
async function pythonInterpreter(resource: vscode.Uri | undefined): Promise<string | undefined> {
  const ext = vscode.extensions.getExtension("ms-python.python");
  if (!ext) {
    return undefined;
  }
  try {
    const api: any = ext.isActive ? ext.exports : await ext.activate();
    const env = api?.environments?.getActiveEnvironmentPath?.(resource);
    if (env?.path) {
      const resolved = await api.environments.resolveEnvironment?.(env);
      return resolved?.executable?.uri?.fsPath ?? env.path;
    }
    const exec = api?.settings?.getExecutionDetails?.(resource)?.execCommand;
    return Array.isArray(exec) && exec.length > 0 ? exec[0] : undefined;
  } catch (err) {
    output.appendLine(`the Python extension did not give an interpreter: ${err}`);
    return undefined;
  }
}

/** Runs `<launch> lsp --stdio` with its input closed: it exits 0 when promptmill and its [lsp] extra are there. */
function probe(l: Launch, cwd: string): Promise<{ ok: boolean; code?: string; exit: number | null; stderr: string }> {
  return new Promise((resolve) => {
    let stderr = "";
    let settled = false;
    const done = (r: { ok: boolean; code?: string; exit: number | null; stderr: string }) => {
      if (!settled) {
        settled = true;
        resolve(r);
      }
    };
    const child = spawn(l.command, [...l.prefix, "lsp", "--stdio"], { cwd, stdio: ["pipe", "ignore", "pipe"] });
    child.stderr.on("data", (d) => (stderr += d.toString()));
    child.on("error", (err: NodeJS.ErrnoException) => done({ ok: false, code: err.code, exit: null, stderr: String(err) }));
    child.on("exit", (exit) => done({ ok: exit === 0, exit, stderr }));
    child.stdin.end();
    setTimeout(() => {
      child.kill();
      done({ ok: true, exit: null, stderr }); // still serving after the timeout: it started
    }, PROBE_TIMEOUT_MS);
  });
}

async function startClient(context: vscode.ExtensionContext): Promise<void> {
  const root = projectRoot();
  if (!root) {
    return;
  }
  const setting = vscode.workspace.getConfiguration("promptmill").get<string[]>("command");
  launch = resolveLaunch(setting, await pythonInterpreter(vscode.Uri.file(root)));
  output.appendLine(`starting ${[launch.command, ...launch.prefix, "lsp", "--stdio"].join(" ")} in ${root} (from ${launch.source})`);
  const found = await probe(launch, root);
  if (!found.ok) {
    const missing = diagnose(found.code, found.exit, found.stderr);
    output.appendLine(found.stderr);
    const message = missingMessage(missing, launch, found.stderr);
    status.text = "$(error) promptmill";
    status.tooltip = message;
    status.show();
    const copy = "Copy Install Command";
    const choice = missing === "other" ? await vscode.window.showErrorMessage(message) : await vscode.window.showErrorMessage(message, copy);
    if (choice === copy) {
      await vscode.env.clipboard.writeText(installCommand(launch));
    }
    return;
  }
  const serverOptions: ServerOptions = { command: launch.command, args: [...launch.prefix, "lsp", "--stdio"], options: { cwd: root } };
  const clientOptions: LanguageClientOptions = {
    documentSelector: [{ scheme: "file", language: "yaml", pattern: `${root.replace(/\\/g, "/")}/**/*` }],
    workspaceFolder: { uri: vscode.Uri.file(root), name: path.basename(root), index: 0 },
    outputChannel: output,
    revealOutputChannelOn: RevealOutputChannelOn.Never,
  };
  client = new LanguageClient("promptmill", "promptmill", serverOptions, clientOptions);
  try {
    await client.start();
  } catch (err) {
    client = undefined;
    output.appendLine(String(err));
    void vscode.window.showErrorMessage(missingMessage("other", launch, String(err)));
    return;
  }
  await vscode.commands.executeCommand("setContext", "promptmill.active", true);
  context.subscriptions.push({ dispose: () => void stopClient() });
  schedule(0);
}

async function stopClient(): Promise<void> {
  const c = client;
  client = undefined;
  if (c) {
    await c.stop().catch(() => undefined);
  }
}

function schedule(delay: number): void {
  if (timer) {
    clearTimeout(timer);
  }
  timer = setTimeout(() => void refresh(), delay);
}

async function ask(params: object): Promise<PreviewAnswer | undefined> {
  if (!client) {
    return undefined;
  }
  return (await client.sendRequest(PREVIEW, params)) as PreviewAnswer;
}

/** Asks the server for the active role's render and shows it in the panel and the status bar. */
async function refresh(): Promise<void> {
  const editor = vscode.window.activeTextEditor;
  if (editor && isOurs(editor.document)) {
    lastUri = editor.document.uri.toString();
  }
  const cfg = vscode.workspace.getConfiguration("promptmill.preview");
  const wire = shown.wire ?? (cfg.get<string>("wire") || undefined);
  const model = shown.model ?? (cfg.get<string>("model") || undefined);
  const mine = ++serial;
  let answer: PreviewAnswer | undefined;
  try {
    answer = await ask({ uri: lastUri, wire, model, state: shown.state });
    if (answer && !answer.role && shown.role) {
      answer = await ask({ role: shown.role, wire, model, state: shown.state }); // not a role's file: keep the role shown
    }
  } catch (err) {
    output.appendLine(`promptmill/preview failed: ${err}`);
    return;
  }
  if (mine !== serial || !answer) {
    return; // a newer refresh is under way
  }
  if (answer.role && shown.role !== answer.role) {
    shown = { role: answer.role, wire: shown.wire, model: shown.model }; // another role: its own example state
  }
  const s = statusText(answer);
  if (s) {
    status.text = s.text;
    status.tooltip = s.tooltip;
    status.show();
  } else {
    status.hide();
  }
  panel?.webview.postMessage({ type: "render", answer, wire: shown.wire ?? "", model: shown.model ?? "" });
}

function openPreview(context: vscode.ExtensionContext): void {
  if (panel) {
    panel.reveal(vscode.ViewColumn.Beside, true);
    schedule(0);
    return;
  }
  panel = vscode.window.createWebviewPanel("promptmill.preview", "promptmill preview", { viewColumn: vscode.ViewColumn.Beside, preserveFocus: true }, {
    enableScripts: true,
    retainContextWhenHidden: true,
    localResourceRoots: [],
  });
  panel.webview.html = previewHtml(panel.webview.cspSource);
  panel.onDidDispose(() => (panel = undefined), null, context.subscriptions);
  panel.webview.onDidReceiveMessage((m: { type: string; wire?: string; model?: string; state?: string }) => {
    if (m.type === "choose") {
      shown = { role: shown.role, wire: m.wire || undefined, model: m.model || undefined, state: m.state || undefined };
      schedule(0);
    } else if (m.type === "ready") {
      schedule(0);
    }
  });
}

/** Runs `promptmill ARGS` in the project folder; its output goes to the "promptmill" channel. Returns its standard output. */
function runCli(args: string[], show = true): Promise<{ exit: number | null; stdout: string }> {
  const root = projectRoot();
  if (!launch || !root) {
    void vscode.window.showErrorMessage("promptmill: no project folder (promptmill.yaml) is open.");
    return Promise.resolve({ exit: null, stdout: "" });
  }
  const l = launch;
  output.appendLine(`$ ${[l.command, ...l.prefix, ...args].join(" ")}`);
  if (show) {
    output.show(true);
  }
  return new Promise((resolve) => {
    let stdout = "";
    const child = spawn(l.command, [...l.prefix, ...args], { cwd: root });
    child.stdout.on("data", (d) => {
      stdout += d.toString();
      if (show) {
        output.append(d.toString());
      }
    });
    child.stderr.on("data", (d) => output.append(d.toString()));
    child.on("error", (err) => {
      output.appendLine(String(err));
      resolve({ exit: null, stdout });
    });
    child.on("exit", (exit) => {
      output.appendLine(`(exit ${exit})`);
      resolve({ exit, stdout });
    });
  });
}

async function renderForWire(): Promise<void> {
  const answer = await ask({ uri: lastUri, role: shown.role });
  if (!answer?.role) {
    void vscode.window.showErrorMessage("promptmill: open a role's file first.");
    return;
  }
  const wire = await vscode.window.showQuickPick(answer.wires ?? [], { placeHolder: `render ${answer.role} for the wire` });
  if (!wire) {
    return;
  }
  const args = ["render", answer.role, "--provider", wire];
  if (answer.state) {
    args.push("--state", answer.state);
  }
  if (shown.model) {
    args.push("--model", shown.model);
  }
  await runCli(args);
}

async function diffAgainst(): Promise<void> {
  const rev = await vscode.window.showInputBox({ prompt: "Diff the rendered prompts against this git revision", value: "HEAD" });
  if (!rev) {
    return;
  }
  const result = await runCli(["diff", rev, "--format", "markdown"], false);
  if (!result.stdout) {
    output.show(true);
    return;
  }
  const file = path.join(os.tmpdir(), `promptmill-diff-${rev.replace(/[^A-Za-z0-9._-]/g, "_")}.md`);
  fs.writeFileSync(file, result.stdout);
  await vscode.commands.executeCommand("markdown.showPreview", vscode.Uri.file(file));
}
