// promptmill preview: plain JavaScript, no build step, no third-party code.
// Everything that comes from the project or the state is put on the page with
// textContent or form values, never as HTML.
"use strict";

const $ = (id) => document.getElementById(id);
const ui = {
  role: $("role"), example: $("example"), model: $("model"), state: $("state"), budget: $("budget"),
  budgetValue: $("budget-value"), reload: $("reload"), tabs: $("tabs"), revert: $("state-revert"),
};
// The state in the editor is one of the picker's: a state file (statePath) or "" (typed in the page).
// What you change in the page is kept per entry in `edits` (path -> text, "" -> the typed state), so
// picking another entry and coming back restores it; a file's entry says "(edited)" until discarded.
const app = {
  project: null, role: null, statePath: "", loadedText: "", budget: null, tab: null, model: "",
  edits: {}, data: null, seq: 0, inflight: false, again: false, version: 0, compareOn: false,
};
const TYPED = "(typed in the page)";

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") node.className = v;
    else if (k === "text") node.textContent = v;
    else node.setAttribute(k, v);
  }
  for (const c of children) node.append(c);
  return node;
}

async function api(path, body) {
  const opts = body === undefined ? {} : {
    method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body),
  };
  const res = await fetch(path, opts);
  const type = res.headers.get("Content-Type") || "";
  if (!type.startsWith("application/json")) {
    return { error: { code: "HTTP" + res.status, message: await res.text(), hint: null } };
  }
  return res.json();
}

function errorText(e, what) {
  let text = (what ? what + ": " : "") + "error[" + e.code + "]: " + e.message;
  if (e.line) text = "line " + e.line + ", column " + e.col + (e.path ? " (" + e.path + ")" : "") + "\n" + text;
  else if (e.path) text = e.path + "\n" + text;
  if (e.hint) text += "\n    hint: " + e.hint;
  return text;
}

function showError(box, e, what, source) {
  if (!e) { box.hidden = true; box.textContent = ""; return; }
  box.hidden = false;
  box.textContent = errorText(e, what);
  if (e.line && source !== undefined) {  // the line at fault, with a caret under its column
    const line = source.split("\n")[e.line - 1];
    if (line !== undefined) box.textContent += "\n\n" + e.line + " | " + line + "\n" + " ".repeat(String(e.line).length + 3 + Math.max(0, e.col - 1)) + "^";
  }
}

// -- the project, roles and states ---------------------------------------------------
async function init() {
  app.project = await api("/api/project");
  $("project").textContent = app.project.project;
  fillPickers();
  for (const p of app.project.providers) {  // the wire registry's names, from the server
    const b = el("button", { type: "button", role: "tab", "data-provider": p, text: p });
    b.addEventListener("click", () => {  // only the tab shown is rendered: another tab is asked for when picked
      app.tab = p;
      if (app.data && !app.data.views[p]) render(); else draw();
      if (app.compareOn) compare();  // compare follows the tab
    });
    ui.tabs.append(b);
  }
  showStatus(app.project.status);
  app.version = app.project.status.version;
  app.instance = app.project.status.instance;
  await chooseRole(app.project.role, app.project.state);
  connect();
}

function fillPickers() {
  const options = (list, first) => [...first, ...list.map((v) => el("option", { value: v, text: v }))];
  ui.role.replaceChildren(...options(app.project.roles, []));
  ui.role.value = app.role || "";
  ui.example.replaceChildren(...options(app.project.examples, [el("option", { value: "", text: TYPED })]));
  ui.example.value = app.statePath;
  markEdits();
  ui.model.replaceChildren(...options(app.project.models || [], [el("option", { value: "", text: "(role's)" })]));
  ui.model.value = app.model;
  const other = $("compare-example");
  const chosen = other.value;
  other.replaceChildren(...options(app.project.examples, [el("option", { value: "", text: "(typed below)" })]));
  other.value = chosen;
}

async function refreshProject() {  // roles and state files come and go with saves
  const project = await api("/api/project");
  if (project.error) return;
  const same = JSON.stringify([project.roles, project.examples, project.models]) === JSON.stringify([app.project.roles, app.project.examples, app.project.models]);
  app.project = project;
  if (!same) fillPickers();
  if (!app.role && project.role) { await chooseRole(project.role, project.state); return true; }
  return false;
}

async function chooseRole(role, statePath) {
  app.role = role;
  ui.role.value = role || "";
  app.budget = null;
  app.tab = null;
  clearView();
  const path = statePath || (app.project.example_for[role] || "");
  ui.state.placeholder = path ? "" : "'" + role + "' has no example state file (" + role + ".state.yaml): type its state here, YAML or JSON";
  await loadState(path);
}

// keepTyped: picking "(typed in the page)" for the first time starts from the text in the editor
async function loadState(path, keepTyped) {
  app.statePath = path;
  ui.example.value = path;
  if (!path) {
    if (app.edits[""] === undefined && keepTyped) app.edits[""] = ui.state.value;
    ui.state.value = app.edits[""] || "";
    app.loadedText = "";
    markEdits();
    return render();
  }
  const got = await api("/api/state?path=" + encodeURIComponent(path));
  if (app.statePath !== path) return;  // another entry was picked meanwhile
  if (got.error) { showError($("state-error"), got.error, path); return; }
  app.loadedText = got.text;
  ui.state.value = app.edits[path] !== undefined ? app.edits[path] : got.text;
  markEdits();
  await render();
}

function edited() {  // the editor's text changed: keep it for this entry of the picker
  const path = app.statePath;
  if (path && ui.state.value === app.loadedText) delete app.edits[path];
  else app.edits[path] = ui.state.value;
  markEdits();
}

function markEdits() {  // the picker names an edited file so, and offers to discard the edits
  for (const o of ui.example.options) {
    o.textContent = o.value ? o.value + (app.edits[o.value] !== undefined ? " (edited)" : "") : TYPED;
  }
  ui.revert.hidden = !(app.statePath && app.edits[app.statePath] !== undefined);
}

// -- rendering --------------------------------------------------------------------------
async function render() {
  if (app.inflight) { app.again = true; return; }  // coalesce: render the latest input next
  app.inflight = true;
  try {
    const seq = ++app.seq;
    const role = app.role;
    const body = { role: role, state: ui.state.value, budget: app.budget, model: app.model || null };
    if (app.tab) body.wires = [app.tab];  // the tab shown, not every wire on every keystroke
    const data = await api("/api/render", body);
    // a render asked for before the role changed never draws over the new role's page
    if (seq === app.seq && role === app.role) show(data);
  } finally {
    app.inflight = false;
    if (app.again) { app.again = false; render(); }
  }
  if (app.compareOn) compare();
}

function show(data) {
  if (data.status) showStatus(data.status);
  const stateCodes = ["PM810", "PM811", "PM812", "PM813"];
  if (data.error) {  // keep the last good render on the page
    const inState = stateCodes.includes(data.error.code);
    showError($("state-error"), inState ? data.error : null, "state", ui.state.value);
    showError($("render-error"), inState ? null : data.error, "cannot render '" + app.role + "'");
    if (app.data) $("stale").hidden = false;  // the render still shown is the last one that worked
    document.body.dataset.rendered = "error";
    return;
  }
  $("stale").hidden = true;
  showError($("state-error"), null);
  showError($("render-error"), null);
  app.data = data;
  if (!app.tab || !data.views[app.tab]) {
    if (app.tab && app.again) return;  // an answer for the tab shown before: the one for this tab is coming
    app.tab = data.provider;
  }
  draw();
  document.body.dataset.rendered = String(app.seq);
  if (!document.body.dataset.firstRenderMs) document.body.dataset.firstRenderMs = performance.now().toFixed(0);
}

function draw() {
  const data = app.data;
  if (!data) return;
  for (const b of ui.tabs.children) {
    const p = b.dataset.provider;
    b.setAttribute("aria-selected", String(p === app.tab));
    b.classList.toggle("failed", Boolean(data.views[p] && data.views[p].error));
    b.textContent = p + (p === data.provider ? " (" + (data.model && app.model ? data.model : "role's") + ")" : "");
  }
  const v = data.views[app.tab];
  for (const id of ["panel-sections", "payload-head", "payload"]) $(id).hidden = Boolean(v.error);
  if (v.error) {  // nothing of another tab's render stays next to this tab's error
    clearView();
    app.data = data;
    const e = v.error.code === "PM830" ? { ...v.error, hint: (v.error.hint ? v.error.hint + "\n    " : "")
      + "note: the budget named here is the usable one, in counted tokens; where counts are estimates, it is the budget you set less the margin, ÷ the ratio" } : v.error;
    showError($("render-error"), e, app.tab);
    return;
  }
  showError($("render-error"), null);
  $("head").textContent = v.head;
  $("total-fill").style.width = Math.min(100, v.share) + "%";
  drawBudget(v);
  drawSections(v);
  drawDropped(v);
  $("total").textContent = v.total;
  $("payload-title").textContent = app.tab === "text" ? "the prompt as text (render --format text)" : app.tab + " payload (render --format " + app.tab + ")";
  $("payload-tokens").textContent = v.tokens + " tokens";
  $("payload").textContent = v.payload;
}

function clearView() {  // another role: nothing of the last one stays on the page
  app.data = null;
  for (const id of ["head", "dropped", "total", "payload", "payload-tokens", "payload-title"]) $(id).textContent = "";
  $("origins").replaceChildren();
  $("origins-head").hidden = true;
  $("budget-figures").tBodies[0].replaceChildren();
  $("sections").tBodies[0].replaceChildren();
  $("total-fill").style.width = "0";
}

// The slider sets the budget; the margin (estimated counts) and the ratio (the model's tokens per
// counted token) turn it into the usable budget the head, the bars and the total count against.
function drawBudget(v) {
  const f = v.budget_figures;
  ui.budget.max = String(f.role);
  if (app.budget === null) ui.budget.value = String(f.role);
  ui.budgetValue.textContent = f.set + " set · " + f.usable + " usable";
  $("budget-figures").tBodies[0].replaceChildren(...f.rows.map(([n, what]) =>
    el("tr", {}, el("td", { class: "num", text: n }), el("td", { text: what }))));
  $("origins").replaceChildren(...v.origins.map(([k, w]) => el("li", { text: k + " from " + w })));
  $("origins-head").hidden = !v.origins.length;
}

function drawDropped(v) {
  const box = $("dropped");
  if (!v.dropped.length) { box.textContent = "dropped: nothing"; return; }
  const list = el("ul");
  for (const d of v.dropped) {
    const items = d.items.map((it) => el("li", {}, el("span", { class: "where", text: it.where }), " " + it.what));
    if (d.more > 0) items.push(el("li", { text: "and " + d.more + " more" }));
    list.append(el("li", { "data-section": d.section }, el("span", { class: "entry", text: d.entry }), items.length ? el("ul", {}, ...items) : ""));
  }
  box.replaceChildren("dropped:", list);
}

const open = new Set();  // sections whose text is shown

function drawSections(v) {
  const rows = [];
  for (const s of v.sections) {
    const tr = el("tr", { "data-section": s.id, class: s.status + (s.cached ? " cached" : "") + (s.breakpoint ? " breakpoint" : "") });
    const sid = el("td", { class: "sid", text: s.id, title: "show or hide the text" });
    sid.addEventListener("click", () => { open.has(s.id) ? open.delete(s.id) : open.add(s.id); drawSections(v); });
    const bar = el("span", { class: "bar" }, el("span"));
    if (s.present) bar.firstChild.style.width = Math.min(100, s.share) + "%";
    tr.append(
      sid,
      el("td", { class: "status " + s.status, text: s.status }),
      el("td", { class: "num tokens", text: s.present ? String(s.tokens) : "-" }),
      el("td", { class: "share" }, s.present ? bar : "", s.present ? s.share.toFixed(1) + "%" : ""),
      el("td", { text: s.message + "/" + s.stability + (s.cached ? " · cached prefix" : "") }),
    );
    rows.push(tr);
    for (const note of [s.items, s.reason]) {
      if (note) rows.push(el("tr", { class: "note" }, el("td", { colspan: "5", text: note })));
    }
    if (open.has(s.id) && s.present) {
      rows.push(el("tr", { class: "text" }, el("td", { colspan: "5" }, el("pre", { class: "mono section-text", text: s.text }))));
    }
  }
  $("sections").tBodies[0].replaceChildren(...rows);
}

function showStatus(st) {
  ui.reload.className = "reload " + (st.ok ? "ok" : "broken");
  const watching = !app.project || app.project.watching !== false;
  ui.reload.textContent = (watching ? "auto-reload on" : "auto-reload off") + " · " + (st.ok ? "templates ok" : "templates have errors");
  ui.reload.title = (watching ? "saving a template or state file re-renders this page" : "started without watching: reload the page to see saved changes")
    + "; compiled " + st.version + " time(s)";
  const box = $("diagnostics");
  const diags = st.diagnostics || [];
  if (!diags.length) { box.hidden = true; box.textContent = ""; return; }
  const lines = [severities(diags) + (st.ok ? "" : " in the templates; showing the last good render")];
  for (const d of diags) {
    lines.push(d.file + ":" + d.line + ":" + d.col + ": " + d.severity + "[" + d.code + "] " + d.message + (d.hint ? "\n    hint: " + d.hint : ""));
  }
  box.hidden = false;
  box.textContent = lines.join("\n");
}

function severities(diags) {  // "1 error, 2 warnings, 1 info": each severity counted, in that order
  const parts = [];
  for (const [sev, one, many] of [["error", "error", "errors"], ["warning", "warning", "warnings"], ["info", "info", "infos"]]) {
    const n = diags.filter((d) => d.severity === sev).length;
    if (n) parts.push(n + " " + (n === 1 ? one : many));
  }
  return parts.join(", ");
}

// -- live updates -------------------------------------------------------------------
function connect() {
  const es = new EventSource("/api/events");
  es.addEventListener("status", async (ev) => {
    const st = JSON.parse(ev.data);
    showStatus(st);
    if (st.instance !== app.instance) {  // a restarted server: its versions start again
      app.instance = st.instance;
      app.version = st.version;
      await refreshProject();
      return render();
    }
    if (st.version <= app.version) return;
    app.version = st.version;
    if (await refreshProject()) return;  // the first role that compiled is now shown
    const changedHere = app.edits[app.statePath] !== undefined;  // your edits win over the file's
    if (app.statePath && st.changed.includes(app.statePath) && !changedHere) return loadState(app.statePath);
    render();
  });
  es.onerror = () => { ui.reload.className = "reload"; ui.reload.textContent = "reconnecting…"; };
}

// -- compare ----------------------------------------------------------------------------
async function compare() {
  app.compareOn = true;
  const against = document.querySelector("input[name=against]:checked").value;
  const got = await api("/api/compare", {
    role: app.role, state: ui.state.value, budget: app.budget, provider: app.tab, against,
    model: app.data && app.tab === app.data.provider ? app.model || null : null,  // the model's own tab only
    other: $("compare-state").value,
  });
  const table = $("compare-sections");
  if (got.error) {
    showError($("compare-error"), got.error, "compare");
    table.hidden = true;
    $("compare-diff").textContent = "";
    return;
  }
  showError($("compare-error"), null);
  const rows = got.sections.map((r) => {
    const present = ["kept", "trimmed", "truncated"];
    const cell = (x) => (x ? x.status + (present.includes(x.status) ? " " + x.tokens : "") : "(absent)");
    return el("tr", { "data-section": r.id },
      el("td", { class: "sid", text: r.id }), el("td", { text: cell(r.before) }), el("td", { text: cell(r.after) }),
      el("td", { class: "num delta" + (r.delta > 0 ? " up" : r.delta < 0 ? " down" : ""), text: (r.delta > 0 ? "+" : "") + r.delta }));
  });
  rows.push(el("tr", { class: "total" }, el("td", { text: "total (" + got.provider + ")" }),
    el("td", { text: String(got.total.before) }), el("td", { text: String(got.total.after) }),
    el("td", { class: "num delta", text: (got.total.delta > 0 ? "+" : "") + got.total.delta })));
  table.tBodies[0].replaceChildren(...rows);
  table.hidden = false;
  const diff = $("compare-diff");
  if (got.same) { diff.textContent = "the prompt text is the same as in the " + got.label; return; }
  diff.replaceChildren(...got.diff.map((line) => {
    const kind = line.startsWith("@@") ? "hunk" : line.startsWith("+") ? "add" : line.startsWith("-") ? "del" : "";
    return el("span", { class: kind, text: line + "\n" });
  }));
}

// -- events ---------------------------------------------------------------------------------
let typing = 0;
ui.state.addEventListener("input", () => { edited(); clearTimeout(typing); typing = setTimeout(render, 120); });
ui.role.addEventListener("change", () => chooseRole(ui.role.value, ""));
ui.example.addEventListener("change", () => loadState(ui.example.value, true));
ui.revert.addEventListener("click", () => { delete app.edits[app.statePath]; loadState(app.statePath); });
ui.model.addEventListener("change", () => { app.model = ui.model.value; app.tab = null; render(); });
ui.budget.addEventListener("input", () => {
  app.budget = Number(ui.budget.value);
  ui.budgetValue.textContent = ui.budget.value + " set";
  render();  // renders coalesce: at most one in flight, the latest value next
});
$("budget-reset").addEventListener("click", () => { app.budget = null; render(); });
$("copy").addEventListener("click", async () => {
  const text = $("payload").textContent;
  try { await navigator.clipboard.writeText(text); } catch (e) {
    const t = el("textarea"); t.value = text; document.body.append(t); t.select(); document.execCommand("copy"); t.remove();
  }
  $("copy").textContent = "copied";
  setTimeout(() => { $("copy").textContent = "copy"; }, 1200);
});
for (const r of document.querySelectorAll("input[name=against]")) {
  r.addEventListener("change", () => { $("compare-state").hidden = r.value !== "state" || !r.checked; });
}
$("compare-example").addEventListener("change", async () => {
  const p = $("compare-example").value;
  if (!p) return;
  const got = await api("/api/state?path=" + encodeURIComponent(p));
  if (!got.error) $("compare-state").value = got.text;
  document.querySelector("input[name=against][value=state]").checked = true;
  $("compare-state").hidden = false;
});
$("compare-run").addEventListener("click", compare);

init().catch((e) => { showError($("render-error"), { code: "PAGE", message: String(e), hint: null }); });
