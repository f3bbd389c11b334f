"use strict";
// The page of `harness web` (docs/web.md): start a goal, or follow one run's events as they
// come (its DAG filling in, its waits with the buttons that answer them, its model tokens).
// Plain JS, no build step. A dropped stream reconnects by itself and resumes after the last
// event it read (the browser sends Last-Event-ID; the page says ?after= if it reopens it).

const token = new URLSearchParams(location.search).get("token");
const $ = (id) => document.getElementById(id);

function withToken(url) {
  if (!token) return url;
  return url + (url.includes("?") ? "&" : "?") + "token=" + encodeURIComponent(token);
}

async function api(method, url, body) {
  const response = await fetch(withToken(url), {
    method,
    headers: { "Content-Type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const answer = await response.json().catch(() => ({}));
  return { ok: response.ok, status: response.status, body: answer };
}

function element(tag, attributes, ...children) {
  const made = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes || {})) made.setAttribute(name, value);
  for (const child of children) made.append(child);
  return made;
}

// Starting a goal --------------------------------------------------------------------------

function showStart() {
  $("start").hidden = false;
  $("start-form").addEventListener("submit", async (submitted) => {
    submitted.preventDefault();
    $("start-error").textContent = "";
    let fields;
    try {
      fields = JSON.parse($("fields").value || "{}");
    } catch (error) {
      $("start-error").textContent = "More fields: not JSON: " + error.message;
      return;
    }
    const body = { ...fields, goal: $("goal").value, scenario: $("scenario").value || undefined };
    const started = await api("POST", "/runs", body);
    if (!started.ok) {
      $("start-error").textContent = started.body.error || "HTTP " + started.status;
      return;
    }
    location.href = withToken("/runs/" + encodeURIComponent(started.body.run_id));
  });
}

// Following a run --------------------------------------------------------------------------

const NODE_STATUS = {
  "node.start": "RUNNING",
  "node.retry": "RETRYING",
  "node.finish": "DONE",
  "node.fail": "FAILED",
  "node.skip": "SKIPPED",
};

const run = { id: null, nodes: new Map(), lastId: null, source: null, ended: false, pages: 0 };

function follow(runId) {
  run.id = runId;
  $("run").hidden = false;
  $("run-label").textContent = "run " + runId;
  $("report-link").href = withToken("/runs/" + encodeURIComponent(runId) + "/report");
  connect();
}

function eventsUrl() {
  const url = "/runs/" + encodeURIComponent(run.id) + "/events";
  return withToken(run.lastId === null ? url : url + "?after=" + run.lastId);
}

function connect() {
  const source = new EventSource(eventsUrl());
  run.source = source;
  source.onopen = () => setConnection("live");
  source.onerror = () => {
    if (run.ended) return;
    setConnection("reconnecting");
    if (source.readyState === EventSource.CLOSED) setTimeout(reopen, 1000); // it gave up
  };
  source.addEventListener("trace", (message) => {
    run.lastId = Number(message.lastEventId);
    onTrace(run.lastId, JSON.parse(message.data));
  });
  source.addEventListener("progress", (message) => onProgress(JSON.parse(message.data)));
  source.addEventListener("token", (message) => onToken(JSON.parse(message.data)));
  source.addEventListener("end", (message) => {
    source.close();
    onEnd(JSON.parse(message.data));
  });
}

// The browser gives up on a stream answered with an error status, and does not say which:
// ask once more, and stop on a refusal (no such run, no token) rather than retry it forever.
async function reopen() {
  const probe = new AbortController();
  let response;
  try {
    response = await fetch(eventsUrl(), { signal: probe.signal });
  } catch (error) {
    setTimeout(reopen, 1000); // the server is away: try again
    return;
  }
  if (response.status >= 400 && response.status < 500) {
    const refusal = await response.json().catch(() => ({}));
    run.ended = true;
    setConnection("stopped: " + (refusal.error || "HTTP " + response.status));
    return;
  }
  probe.abort();
  connect();
}

function setConnection(state) {
  const connection = $("connection");
  connection.dataset.state = state.split(":")[0]; // live, reconnecting, ended, stopped
  connection.textContent = state;
}

function onTrace(id, event) {
  const line = [event.kind, event.node_id, event.tool, event.status, event.message]
    .filter((part) => part !== null && part !== undefined && part !== "")
    .join(" ");
  const item = element("li", { value: id, "data-event-id": id, "data-kind": event.kind }, line);
  item.dataset.page = run.pages;
  if (event.node_id) item.dataset.node = event.node_id;
  $("events").append(item);
  if (event.kind === "planning.finish" || event.kind === "validation.finish") showPlan();
  if (event.node_id && NODE_STATUS[event.kind]) {
    setNode(event.node_id, { tool: event.tool, status: NODE_STATUS[event.kind] });
  }
  if (event.kind === "run.finish") setPhase(event.status);
}

async function showPlan() {
  const answer = await api("GET", "/runs/" + encodeURIComponent(run.id) + "/plan");
  if (!answer.ok || !answer.body.plan) return;
  for (const node of answer.body.plan.nodes) {
    const known = run.nodes.get(node.id);
    setNode(node.id, { tool: node.tool, deps: node.deps, status: known ? known.status : "PENDING" });
  }
}

function setNode(id, change) {
  const known = run.nodes.get(id) || { id, tool: "", deps: [], status: "PENDING" };
  for (const [name, value] of Object.entries(change)) if (value) known[name] = value;
  run.nodes.set(id, known);
  drawDag();
}

function depth(id, seen = new Set()) {
  const node = run.nodes.get(id);
  if (!node || seen.has(id)) return 0;
  seen.add(id);
  return node.deps.reduce((deepest, dep) => Math.max(deepest, depth(dep, seen) + 1), 0);
}

function drawDag() {
  const columns = [];
  for (const node of run.nodes.values()) {
    const level = depth(node.id);
    (columns[level] = columns[level] || []).push(node);
  }
  const dag = $("dag");
  dag.replaceChildren(
    ...columns.filter(Boolean).map((nodes) =>
      element(
        "div",
        { class: "column" },
        ...nodes.map((node) =>
          element(
            "div",
            { class: "node", "data-node": node.id, "data-status": node.status, title: node.status },
            element("div", { class: "id" }, node.id),
            element("div", { class: "tool" }, node.tool),
            element("div", { class: "deps" }, node.deps.length ? "after " + node.deps.join(", ") : "")
          )
        )
      )
    )
  );
}

function setPhase(phase) {
  $("phase").textContent = phase;
  $("phase").dataset.phase = phase;
}

function onProgress(progress) {
  run.pages += 1;
  setPhase(progress.phase);
  const counts = Object.entries(progress.counts).map(([name, value]) => name + " " + value);
  $("counts").textContent = "attempt " + progress.attempt + " · " + counts.join(" · ");
  showWaits(progress.pending);
}

function showWaits(pending) {
  const box = $("waits");
  const open = new Set(pending.map((wait) => wait.id));
  for (const shown of box.querySelectorAll(".wait")) {
    if (!open.has(shown.dataset.wait)) shown.remove();
  }
  for (const wait of pending) {
    if (!box.querySelector(`.wait[data-wait="${CSS.escape(wait.id)}"]`)) box.append(waitBox(wait));
  }
  box.querySelector(".none").hidden = pending.length > 0;
}

function waitBox(wait) {
  const receipt = element("span", { class: "receipt" });
  const box = element(
    "div",
    { class: "wait", "data-wait": wait.id, "data-kind": wait.kind },
    element("strong", {}, wait.id),
    " " + wait.kind + (wait.node_id ? " for " + wait.node_id : "") + ": ",
    wait.prompt,
    element("br")
  );
  const send = async (action, body) => {
    const actor = $("actor").value.trim();
    if (actor) body.actor = actor;
    const path = "/runs/" + encodeURIComponent(run.id) + "/waits/" + encodeURIComponent(wait.id);
    const sent = await api("POST", path + "/" + action, body);
    receipt.dataset.accepted = String(Boolean(sent.body.accepted));
    receipt.textContent = sent.body.error || (sent.body.accepted ? "accepted: " : "refused: ") + sent.body.reason;
  };
  if (wait.kind === "APPROVAL") {
    const approve = element("button", { class: "approve" }, "Approve");
    const reject = element("button", { class: "reject" }, "Reject");
    approve.onclick = () => send("approve", {});
    reject.onclick = () => send("approve", { reject: true });
    box.append(approve, " ", reject);
  } else if (wait.kind === "USER_INPUT") {
    const text = element("input", { class: "answer-text", size: 40 });
    const answer = element("button", { class: "answer" }, "Answer");
    answer.onclick = () => send("answer", { text: text.value });
    box.append(text, " ", answer);
  } else {
    box.append("(answered by `harness deliver`, not from this page)");
  }
  box.append(receipt);
  return box;
}

function onToken(chunk) {
  const box = $("tokens");
  box.querySelector(".none").hidden = true;
  let reply = box.querySelector(`pre[data-call="${CSS.escape(chunk.call)}"]`);
  if (!reply) {
    reply = element("pre", { "data-call": chunk.call, "data-node": chunk.node || "" });
    box.append(element("h3", {}, chunk.node ? "node " + chunk.node : "model"), reply);
  }
  reply.append(chunk.text);
}

function onEnd(end) {
  run.ended = true;
  document.body.dataset.ended = "true";
  setConnection(end.error ? "ended: " + end.error : "ended");
  showWaits([]);
}

const followed = location.pathname.match(/^\/runs\/([^/]+)\/?$/);
if (followed) follow(decodeURIComponent(followed[1]));
else showStart();
