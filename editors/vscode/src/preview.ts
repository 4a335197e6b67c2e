// The preview panel's page. It only shows what the language server's `promptmill/preview` answered
// (posted by extension.ts): the head, the token bar, the budget line, the sections with their tokens,
// the dropped ones and the rendered text; it renders nothing itself. Pure: no `vscode` import.

export function previewHtml(cspSource: string, nonce = makeNonce()): string {
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src ${cspSource} 'unsafe-inline'; script-src 'nonce-${nonce}';">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>promptmill preview</title>
<style>
  body { font-family: var(--vscode-font-family); font-size: var(--vscode-font-size); color: var(--vscode-foreground); padding: 0 12px; }
  .controls { display: flex; gap: 8px; flex-wrap: wrap; align-items: center; margin: 8px 0; }
  select, input { background: var(--vscode-input-background); color: var(--vscode-input-foreground); border: 1px solid var(--vscode-input-border, transparent); }
  #head { font-weight: bold; margin: 6px 0; }
  #bar { height: 8px; background: var(--vscode-editorWidget-background, #333); border-radius: 4px; overflow: hidden; }
  #bar > div { height: 100%; background: var(--vscode-progressBar-background, #0e70c0); }
  #bar.over > div { background: var(--vscode-errorForeground, #f14c4c); }
  #budget, #dropped { margin: 6px 0; opacity: .9; }
  table { border-collapse: collapse; margin: 6px 0; }
  td { padding: 1px 10px 1px 0; }
  td.n { text-align: right; font-variant-numeric: tabular-nums; }
  tr.dropped td { text-decoration: line-through; opacity: .7; }
  #error { color: var(--vscode-errorForeground); white-space: pre-wrap; }
  pre { white-space: pre-wrap; background: var(--vscode-textCodeBlock-background); padding: 8px; font-family: var(--vscode-editor-font-family); }
</style>
</head>
<body>
<div class="controls">
  <label>wire <select id="wire"></select></label>
  <label>model <input id="model" size="18" placeholder="the role's"></label>
  <label>state <select id="state"></select></label>
  <label><input type="checkbox" id="showPayload"> payload</label>
</div>
<div id="head"></div>
<div id="bar"><div style="width:0"></div></div>
<div id="budget"></div>
<div id="error"></div>
<table id="sections"></table>
<div id="dropped"></div>
<pre id="text"></pre>
<script nonce="${nonce}">
const vscode = acquireVsCodeApi();
const $ = (id) => document.getElementById(id);
let last = null;
function options(select, values, chosen, blank) {
  select.replaceChildren();
  const b = document.createElement("option"); b.value = ""; b.textContent = blank; select.appendChild(b);
  for (const v of values || []) { const o = document.createElement("option"); o.value = v; o.textContent = v; select.appendChild(o); }
  select.value = chosen || "";
}
function choose() {
  vscode.postMessage({ type: "choose", wire: $("wire").value, model: $("model").value.trim(), state: $("state").value });
}
$("wire").addEventListener("change", choose);
$("state").addEventListener("change", choose);
$("model").addEventListener("change", choose);
$("showPayload").addEventListener("change", () => last && show(last.answer, last.wire, last.model));
function show(a, wire, model) {
  last = { answer: a, wire, model };
  options($("wire"), a.wires, wire, "(the role's" + (a.wire && !wire ? ": " + a.wire : "") + ")");
  if (document.activeElement !== $("model")) $("model").value = model || "";
  options($("state"), a.states, a.state, "(no state)");
  document.body.dataset.role = a.role || "";
  $("error").textContent = a.error ? a.error.code + " " + a.error.message + (a.error.hint ? "\\nhint: " + a.error.hint : "") : "";
  if (a.error) { document.body.dataset.state = "error"; return; }
  document.body.dataset.state = "ok";
  $("head").textContent = a.head || "";
  $("head").dataset.tokens = String(a.tokens);
  $("head").dataset.budget = String(a.budget);
  const share = Math.min(100, a.share || 0);
  $("bar").firstElementChild.style.width = share + "%";
  $("bar").className = a.tokens > a.budget ? "over" : "";
  $("budget").textContent = a.budget_line || "";
  const rows = (a.sections || []).map((s) => {
    const tr = document.createElement("tr");
    tr.className = s.status;
    for (const [v, cls] of [[s.id, ""], [s.status, ""], [s.tokens === null ? "-" : String(s.tokens), "n"], [s.share === null ? "" : s.share.toFixed(1) + "%", "n"]]) {
      const td = document.createElement("td"); td.textContent = v; if (cls) td.className = cls; tr.appendChild(td);
    }
    return tr;
  });
  $("sections").replaceChildren(...rows);
  $("dropped").textContent = a.dropped && a.dropped.length ? "dropped: " + a.dropped.join(", ") : "";
  $("text").textContent = $("showPayload").checked ? a.payload : a.text;
}
window.addEventListener("message", (e) => { if (e.data && e.data.type === "render") show(e.data.answer, e.data.wire, e.data.model); });
vscode.postMessage({ type: "ready" });
</script>
</body>
</html>`;
}

function makeNonce(): string {
  const chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  let out = "";
  for (let i = 0; i < 32; i++) {
    out += chars.charAt(Math.floor(Math.random() * chars.length));
  }
  return out;
}
