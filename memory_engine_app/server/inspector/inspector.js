// The memory inspector: plain JavaScript over the public API and the /v1/inspect/ routes.
// Text from the API is only ever set as textContent (never parsed as HTML): memories quote users.
"use strict";

const KEY_STORAGE = "memory-engine-inspector-key";
// The page's own origin, under the path ?api= names; anything else is refused and the page sends
// nothing at all, whatever key the tab has stored (origin.js). The page's Content-Security-Policy
// (connect-src 'self') says the same.
const API = apiBase(new URLSearchParams(location.search).get("api"), location.href);
const API_BASE = API.base;

const state = {
  threads: [], scopes: [], nextAfter: null, nextScopesAfter: null, session: null, turns: new Map(), characters: {},
};

// -- small DOM helpers --------------------------------------------------------------------------

function h(tag, props, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(props || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (name === "class") node.className = value;
    else if (name === "dataset") Object.assign(node.dataset, value);
    else if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
    else node.setAttribute(name, value === true ? "" : String(value));
  }
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

const $ = (id) => document.getElementById(id);

function setStatus(text, isError = false) {
  const status = $("status");
  status.textContent = text;
  status.classList.toggle("error", isError);
}

function badge(kind, text) {
  return h("span", { class: `badge ${kind}` }, text || kind);
}

function time(value) {
  return value ? new Date(value).toLocaleString() : "";
}

function list(items) {
  return items && items.length ? h("ul", null, items.map((item) => h("li", null, item))) : "—";
}

// -- the API ----------------------------------------------------------------------------------------

function apiKey() {
  return sessionStorage.getItem(KEY_STORAGE) || "";
}

async function call(method, path, body) {
  const target = API.refused === null ? apiTarget(API_BASE, path, location.href) : null;
  if (target === null) throw new Error(refusal());
  const headers = { Authorization: `Bearer ${apiKey()}` };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const response = await fetch(target, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    credentials: "omit",
    cache: "no-store",
  });
  const text = await response.text();
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch (error) {
    data = { message: text };
  }
  if (!response.ok) {
    const message = (data && (data.message || (data.error && data.error.message) || data.msg)) || response.statusText;
    throw new Error(`${response.status}: ${message}`);
  }
  return data;
}

function query(path, params) {
  return `${path}?${new URLSearchParams(params)}`;
}

async function guarded(label, action) {
  setStatus(`${label}…`);
  try {
    const result = await action();
    setStatus(`${label}: done`);
    return result;
  } catch (error) {
    setStatus(`${label} failed — ${error.message}`, true);
    return undefined;
  }
}

// -- confirmation --------------------------------------------------------------------------------

function confirmAction(title, ...body) {
  const dialog = $("confirm");
  $("confirm-title").textContent = title;
  $("confirm-body").replaceChildren(...body);
  dialog.returnValue = "";
  dialog.showModal();
  return new Promise((resolve) => {
    dialog.addEventListener("close", () => resolve(dialog.returnValue === "ok"), { once: true });
  });
}

function cascadeList(label, ids, describe) {
  if (!ids.length) return null;
  return h("div", null, h("strong", null, label),
    h("ul", { class: "cascade" }, ids.map((id) => h("li", { dataset: { id } }, describe ? describe(id) : id))));
}

function turnLabel(uuid) {
  const turn = state.turns.get(uuid);
  return turn ? `${uuid} — ${turn.user_name}: ${turn.query}`.slice(0, 160) : uuid;
}

function cascadeNodes(outcome) {
  return [
    cascadeList("Memories deleted", outcome.deleted_memories),
    cascadeList("Dialogs deleted", outcome.deleted_dialogs, turnLabel),
    cascadeList("Dialogs sent back to the buffer (extracted again)", outcome.rebuffered_dialogs, turnLabel),
    cascadeList("Dialogs kept as history, never extracted again", outcome.forgotten_dialogs || [], turnLabel),
  ].filter(Boolean);
}

// -- threads and scopes ----------------------------------------------------------------------------

// Both lists come in pages (a tenant may hold tens of thousands of sessions): "more" fetches the
// next page of that list alone, with the cursor the last page gave.
async function loadThreads() {
  const data = await guarded("Loading threads", () => call("GET", "/v1/inspect/threads"));
  if (!data) return;
  state.threads = [];
  state.scopes = [];
  addThreads(data);
  addScopes(data);
}

async function moreThreads() {
  const data = await guarded("Loading more sessions",
    () => call("GET", query("/v1/inspect/threads", { after: state.nextAfter })));
  if (data) addThreads(data);
}

async function moreScopes() {
  const data = await guarded("Loading more scopes",
    () => call("GET", query("/v1/inspect/threads", { scopes_after: state.nextScopesAfter })));
  if (data) addScopes(data);
}

function addThreads(data) {
  for (const thread of data.threads) {
    const last = state.threads[state.threads.length - 1];
    // A thread whose sessions run on from the last page: one entry, its sessions joined.
    if (last && last.thread === thread.thread) last.sessions = [...last.sessions, ...thread.sessions];
    else state.threads.push({ ...thread });
  }
  state.nextAfter = data.next_after;
  const more = data.next_after
    ? [h("li", null, h("button", { class: "link more", type: "button", id: "more-threads", onclick: moreThreads },
      "more sessions…"))]
    : [];
  $("threads").replaceChildren(
    ...(state.threads.length ? state.threads.map(threadItem) : [h("li", { class: "hint" }, "no sessions yet")]),
    ...more,
  );
  renderSearchThreads();
}

function addScopes(data) {
  state.scopes = [...state.scopes, ...data.scopes];
  state.nextScopesAfter = data.next_scopes_after;
  const more = data.next_scopes_after
    ? [h("li", null, h("button", { class: "link more", type: "button", id: "more-scopes", onclick: moreScopes },
      "more scopes…"))]
    : [];
  $("scopes").replaceChildren(
    ...(state.scopes.length ? state.scopes.map(scopeItem) : [h("li", { class: "hint" }, "no facts yet")]),
    ...more,
  );
}

function threadItem(thread) {
  return h("li", { dataset: { thread: thread.thread } },
    h("button", { class: "link thread", type: "button", onclick: () => showThreadMemories(thread.thread) },
      `thread ${thread.thread}`),
    h("ul", null, thread.sessions.map((session) => h("li", null,
      h("button", {
        class: "link session", type: "button", dataset: { session: session.session_uuid },
        onclick: () => showSession(session.session_uuid),
      }, session.chat_userid ? `chat user ${session.chat_userid}` : session.session_uuid)))));
}

function scopeItem(scope) {
  const label = Object.entries(scope.scope).map(([k, v]) => `${k}=${v}`).join(", ");
  return h("li", null, h("button", {
    class: "link scope", type: "button", dataset: { thread: scope.thread },
    onclick: () => showThreadMemories(scope.thread, scope.scope),
  }, `${label} (${scope.facts})`));
}

// -- a session ---------------------------------------------------------------------------------------

async function showSession(sessionUuid) {
  const data = await guarded(`Loading session ${sessionUuid}`,
    () => call("GET", query("/v1/inspect/session", { session_uuid: sessionUuid })));
  if (!data) return;
  state.session = data;
  state.turns = new Map(data.turns.map((turn) => [turn.dialog_uuid, turn]));
  const session = data.session;
  const panel = $("panel-session");
  panel.replaceChildren(
    h("h2", null, `Session ${session.session_uuid}`),
    h("p", null, `thread ${session.parent_session_uuid} · user ${session.user_name} · language ${session.language}`
      + ` · created ${time(session.created_at)} · `,
      badge("buffered", `${data.counts.buffered} buffered`), " ",
      badge("extracted", `${data.counts.extracted} extracted`), " ",
      badge("forgotten", `${data.counts.forgotten} forgotten`), " ",
      h("button", { type: "button", id: "force-extract", onclick: () => forceExtract(session.session_uuid) },
        "Force extraction")),
    h("div", { id: "last-action" }),
    turnsTable(data.turns),
    h("h3", null, `Memories of this session (${data.memories.length})`),
    h("div", { id: "session-memories" }, data.memories.map(memoryCard)),
  );
  document.querySelectorAll("#threads .session").forEach((button) =>
    button.classList.toggle("current", button.dataset.session === sessionUuid));
  selectTab("session");
}

function turnsTable(turns) {
  const head = h("tr", null, ["#", "dialog", "state", "speaker", "npc", "query", "answer", "said", "stored", ""]
    .map((title) => h("th", null, title)));
  const rows = turns.map((turn) => h("tr", { dataset: { dialog: turn.dialog_uuid, status: turn.status } },
    h("td", null, turn.seq),
    h("td", { class: "mono" }, turn.dialog_uuid),
    h("td", null, badge(turn.status), turn.memory_id ? h("div", { class: "mono" }, turn.memory_id) : null),
    h("td", null, turn.user_name, turn.type === 1 ? " (recorded)" : ""),
    h("td", null, turn.npc_id || ""),
    h("td", { class: "text" }, turn.query),
    h("td", { class: "text" }, turn.answer),
    h("td", null, time(turn.timestamp)),
    h("td", null, time(turn.created_at)),
    h("td", null, h("div", { class: "actions" },
      h("button", { type: "button", class: "small delete-dialog", onclick: () => deleteDialog(turn.dialog_uuid) },
        "Delete"),
      h("button", { type: "button", class: "small fork", onclick: () => forkAt(turn.dialog_uuid) }, "Fork here")))));
  return h("table", { id: "turns" }, h("thead", null, head), h("tbody", null, rows));
}

async function deleteDialog(dialogUuid, sessionUuid = state.session.session.session_uuid) {
  const preview = await guarded("Previewing the delete", () => call("GET",
    query("/v1/inspect/delete-preview", { session_uuid: sessionUuid, dialog_uuid: dialogUuid })));
  if (!preview) return;
  const confirmed = await confirmAction(`Delete ${dialogUuid}?`, ...cascadeNodes(preview));
  if (!confirmed) return setStatus("Delete cancelled");
  const done = await guarded("Deleting", () => call("DELETE", "/v1/engine/delete/",
    { session_uuid: sessionUuid, dialog_uuid: dialogUuid }));
  if (!done) return;
  await showSession(sessionUuid);
  $("last-action").replaceChildren(h("div", { class: "card", id: "delete-result" },
    h("strong", null, `Deleted: ${done.message}`), ...cascadeNodes(done.data)));
  setStatus(`Deleted: ${done.message}`);
}

async function forkAt(dialogUuid) {
  const source = state.session.session.session_uuid;
  const target = h("input", { id: "fork-target", value: `${source}-fork-${dialogUuid}`, size: 40 });
  const confirmed = await confirmAction(`Fork ${source} at ${dialogUuid}?`,
    h("p", null, "A new session (its own thread) keeps the turns up to and including this one, and the memories made "
      + "only of them; the source is not changed."),
    h("label", null, "New session uuid ", target));
  if (!confirmed) return setStatus("Fork cancelled");
  const done = await guarded("Forking", () => call("POST", "/v1/engine/fork-delete/",
    { source_session_uuid: source, target_session_uuid: target.value, cutoff_dialog_uuid: dialogUuid }));
  if (!done) return;
  await loadThreads();
  await showSession(target.value);
}

async function forceExtract(sessionUuid) {
  const buffered = state.session.counts.buffered;
  const confirmed = await confirmAction(`Extract ${sessionUuid} now?`,
    h("p", null, `Queues the extraction of all ${buffered} buffered turn(s), the last short batch included, `
      + "as a consolidate with force_summary would."));
  if (!confirmed) return setStatus("Extraction cancelled");
  const done = await guarded("Queueing extraction",
    () => call("POST", "/v1/inspect/extract", { session_uuid: sessionUuid }));
  if (done) setStatus(done.message);
}

// -- memories ------------------------------------------------------------------------------------------

function characterNames(names) {
  if (!names || !names.length) return "—";
  return list(names.map((name) => {
    const aliases = state.characters[name];
    return aliases && aliases.length ? `${name} (also: ${aliases.join(", ")})` : name;
  }));
}

// What stopped holding: key facts later statements replaced (or a caller retired), earlier wordings
// of key facts a caller corrected, a fact's earlier wordings, its retirement.
function factHistory(memory) {
  const life = memory.life || {};
  const facts = memory.fields.key_facts;
  const lines = [
    ...(life.revisions || []).map((revision) =>
      `“${revision.fact}” until ${time(revision.invalid_at)} (${revision.reason})`),
    ...(life.key_fact_revisions || []).map((revision) =>
      `key fact ${revision.index}: “${revision.fact}” until ${time(revision.invalid_at)} (${revision.reason || "correct"})`),
    ...(life.key_facts || []).map((fact) => {
      const by = fact.superseded_by ? ` by ${fact.superseded_by}` : "";
      return `“${facts[fact.index] || "?"}” ${fact.reason === "retire" ? "retired" : "replaced"} ${time(fact.invalid_at)}${by} (${fact.reason || "update"})`;
    }),
  ];
  if (life.invalid_at) {
    const by = life.superseded_by ? ` by ${life.superseded_by}` : "";
    lines.push(`retired ${time(life.invalid_at)}${by} (${life.end_reason || "retire"})`);
  }
  return lines.length ? list(lines) : "—";
}

function memoryCard(memory) {
  const fields = memory.fields;
  const rows = [
    ["summary", fields.summary],
    ["keywords", fields.keywords.join(", ") || "—"],
    ["key facts", list(fields.key_facts)],
    ["key dialogue", list(fields.key_dialogue)],
    ["intent", fields.intent || "—"],
    ["location", fields.location || "—"],
    ["characters", characterNames(fields.characters)],
    ["source turns", list(memory.source_dialog_uuids.map(turnLabel))],
    ["turn seqs", memory.source_dialog_uuids.length ? `${memory.first_seq}–${memory.last_seq}` : "—"],
    ["session", memory.session_uuid || "— (a fact)"],
    ["thread", memory.parent_session_uuid],
    ["scope", JSON.stringify(memory.scope)],
    ["created", time(memory.created_at)],
    ["stated", time(memory.life.valid_from || memory.created_at)],
    ["history", factHistory(memory)],
    ["metadata", h("code", null, JSON.stringify(memory.metadata))],
  ];
  return h("article", { class: "card memory", dataset: { memory: memory.memory_id } },
    h("h3", null, memory.memory_id, " ", memory.is_fact ? badge("fact") : null,
      memory.forked_from ? badge("forgotten", `forked from ${memory.forked_from}`) : null),
    h("dl", null, rows.map(([name, value]) => [h("dt", null, name), h("dd", { dataset: { field: name } }, value)])),
    memory.source_text ? h("details", null, h("summary", null, "text fed to extraction"),
      h("pre", { class: "text" }, memory.source_text)) : null,
    h("div", { class: "actions" },
      h("button", { type: "button", class: "small delete-memory", onclick: () => deleteMemory(memory) }, "Delete")));
}

async function deleteMemory(memory) {
  if (memory.is_fact || !memory.session_uuid) {
    const confirmed = await confirmAction(`Delete fact ${memory.memory_id}?`, h("p", null, memory.fields.summary));
    if (!confirmed) return setStatus("Delete cancelled");
    const done = await guarded("Deleting the fact",
      () => call("DELETE", `/v1/memories/${encodeURIComponent(memory.memory_id)}`));
    if (done !== undefined) await loadThreads();
    return;
  }
  if (!state.session || state.session.session.session_uuid !== memory.session_uuid) {
    await showSession(memory.session_uuid);
  }
  await deleteDialog(memory.memory_id, memory.session_uuid);
}

async function showThreadMemories(thread, scope) {
  const memories = [];
  let after = null;
  let data = null;
  do {
    const params = after ? { thread, after, limit: 200 } : { thread, limit: 200 };
    data = await guarded(`Loading memories of ${thread}`, () => call("GET", query("/v1/inspect/memories", params)));
    if (!data) return;
    memories.push(...data.memories);
    after = data.next_after;
  } while (after);
  state.characters = data.characters;
  const registry = Object.entries(data.characters);
  $("panel-memories").replaceChildren(...[
    h("h2", null, scope ? `Scope ${JSON.stringify(scope)}` : `Thread ${thread}`, ` — ${memories.length} memories`),
    registry.length ? h("p", null, "Characters: ",
      registry.map(([name, aliases]) => aliases.length ? `${name} (${aliases.join(", ")})` : name).join("; ")) : null,
    scope ? scopeSearch(scope) : null,
    h("div", { id: "thread-memories" }, memories.length ? memories.map(memoryCard) : h("p", { class: "hint" }, "none")),
  ].filter(Boolean));
  selectTab("memories");
}

function scopeSearch(scope) {
  const input = h("input", { type: "search", id: "scope-query", required: true });
  const results = h("ol", { id: "scope-hits" });
  const search = async (event) => {
    event.preventDefault();
    const data = await guarded("Searching the scope", () => call("POST", "/v1/memories/retrieve",
      { scope, similarity_search_params: { search_query: input.value, top_k: 10 } }));
    if (!data) return;
    results.replaceChildren(...data.retrieved_memories.map((hit) =>
      h("li", null, `${hit.memory.fact} `, h("span", { class: "mono" }, `distance ${hit.distance.toFixed(4)}`))));
  };
  return h("form", { class: "card", onsubmit: search }, h("label", null, "Search this scope ", input),
    " ", h("button", { type: "submit" }, "Search"), results);
}

// -- search ---------------------------------------------------------------------------------------------

function renderSearchThreads() {
  const box = $("search-threads");
  box.replaceChildren(h("legend", null, "Threads to search"),
    ...state.threads.map((thread, index) => h("label", null,
      h("input", { type: "checkbox", value: thread.thread, checked: index === 0 }), ` ${thread.thread} `)));
}

function partsTable(parts) {
  if (parts === undefined || parts === null) {
    return h("p", { class: "hint no-parts" }, "no score parts: this server does not explain its scores");
  }
  const entries = Array.isArray(parts)
    ? parts.map((part, index) => [part.name ?? index, part.value ?? part])
    : Object.entries(parts);
  return h("table", { class: "parts" },
    h("tr", null, h("th", null, "score part"), h("th", null, "value")),
    entries.map(([name, value]) => h("tr", { dataset: { part: name } }, h("td", null, name),
      h("td", { class: "mono" }, typeof value === "number" ? value.toFixed(4) : JSON.stringify(value)))));
}

function evidenceList(evidence) {
  if (!evidence || !evidence.length) return null;
  return h("div", null, h("strong", null, "Matched turns"), h("ol", { class: "evidence" }, evidence.map((item) =>
    h("li", null, h("span", { class: "mono" }, item.dialog_uuid || ""), " ",
      typeof item.score === "number" ? h("span", { class: "mono" }, `(${item.score.toFixed(4)}) `) : "",
      item.text || ""))));
}

async function runSearch(event) {
  event.preventDefault();
  const threads = [...document.querySelectorAll("#search-threads input:checked")].map((box) => box.value);
  if (!threads.length) return setStatus("Pick at least one thread to search", true);
  const body = {
    parent_session_uuids: threads,
    user_input: { query: $("search-query").value },
    options: { limit: Number($("search-limit").value) || 5, explain: true },
  };
  const data = await guarded("Searching", async () => {
    try {
      return await call("POST", "/v1/engine/retrieve/", body);
    } catch (error) {
      // A server older than options.explain refuses the unknown field: search without it.
      if (!/^422:.*explain/.test(error.message)) throw error;
      delete body.options.explain;
      return call("POST", "/v1/engine/retrieve/", body);
    }
  });
  if (!data) return;
  $("hits").replaceChildren(...(data.data.length ? data.data.map((hit) =>
    h("li", { class: "hit", dataset: { memory: hit.memory_id } },
      h("div", null, h("strong", { class: "mono" }, hit.memory_id), " ",
        hit.kind ? badge(hit.kind === "dialog" ? "buffered" : "extracted", hit.kind) : null, " ",
        h("span", { class: "mono score" }, `score ${hit.score.toFixed(4)}`),
        hit.session_uuid ? ` · session ${hit.session_uuid}` : ""),
      h("p", { class: "text" }, hit.content),
      partsTable(hit.score_parts),
      evidenceList(hit.evidence))) : [h("li", { class: "hint" }, "no hits")]));
  setStatus(`${data.data.length} hit(s)`);
}

// -- queue ----------------------------------------------------------------------------------------------

async function showQueue() {
  const data = await guarded("Loading the queue", () => call("GET", "/v1/inspect/queue"));
  if (!data) return;
  const jobRow = (job, extra) => h("tr", null, h("td", null, job.kind), h("td", { class: "mono" },
    job.session_uuid || job.userid || ""), h("td", null, job.force ? "forced" : ""), extra);
  $("panel-queue").replaceChildren(
    h("h2", null, "Pending jobs"),
    data.pending === null
      ? h("p", { class: "hint" }, "This queue (SQS) cannot list waiting jobs without taking them from its worker.")
      : data.pending.length
        ? h("table", { id: "pending" }, h("tr", null, ["kind", "session / user", ""].map((t) => h("th", null, t))),
          data.pending.map((job) => jobRow(job)))
        : h("p", { class: "hint" }, "none"),
    h("h2", null, "Dead jobs"),
    data.dead === null
      ? h("p", { class: "hint" }, "This queue (SQS) is read by its worker only: see the dead-letter queue "
        + "(`memory-engine` operations, the SQS console) and the worker's log.")
      : data.dead.length
      ? h("table", { id: "dead" }, h("tr", null, ["kind", "session / user", "", "last error"].map((t) => h("th", null, t))),
        data.dead.map((entry) => jobRow(entry.job,
          h("td", { class: "text" }, entry.error || "not kept by this queue: see the worker's log"))))
      : h("p", { class: "hint" }, "none"),
  );
}

// -- tabs and start -------------------------------------------------------------------------------------

function selectTab(name) {
  document.querySelectorAll("#tabs button").forEach((tab) =>
    tab.setAttribute("aria-selected", String(tab.dataset.tab === name)));
  document.querySelectorAll(".panel").forEach((panel) => { panel.hidden = panel.id !== `panel-${name}`; });
  if (name === "queue") showQueue();
}

function refusal() {
  return `Refused ?api=${API.refused ?? API_BASE}: this page sends its key only to its own origin `
    + `(${location.origin}); open it from the API's origin (docs/inspector.md).`;
}

function start() {
  $("api-base").textContent = location.origin + API_BASE;
  if (API.refused !== null) {
    setStatus(refusal(), true);
    $("connect-button").disabled = true;
    return;  // no listeners, no calls: nothing can send the stored key anywhere
  }
  $("api-key").value = apiKey();
  $("connect").addEventListener("submit", (event) => {
    event.preventDefault();
    sessionStorage.setItem(KEY_STORAGE, $("api-key").value.trim());
    loadThreads();
  });
  $("forget-key").addEventListener("click", () => {
    sessionStorage.removeItem(KEY_STORAGE);
    $("api-key").value = "";
    setStatus("Key forgotten");
  });
  $("refresh").addEventListener("click", loadThreads);
  $("search-form").addEventListener("submit", runSearch);
  document.querySelectorAll("#tabs button").forEach((tab) =>
    tab.addEventListener("click", () => selectTab(tab.dataset.tab)));
  if (apiKey()) loadThreads();
}

document.addEventListener("DOMContentLoaded", start);
