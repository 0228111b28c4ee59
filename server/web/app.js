// The Coffer web table: a lobby and a game page for every ruleset, drawn from the ruleset's description,
// vocabulary, table and resource views (docs/WEB.md). Plain ES module, no dependencies.

const main = document.getElementById("main");
const statusLine = document.getElementById("status");
const where = document.getElementById("where");

/** Builds an element: h("div", {class: "x"}, "text", child, ...). */
function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else if (k === "class") el.className = v;
    else el.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat()) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

/** Replaces an element's children, skipping the empty ones (null, undefined, false). */
function fill(el, ...children) {
  el.replaceChildren(...children.flat().filter((c) => c !== null && c !== undefined && c !== false));
}

class ApiError extends Error {
  constructor(status, body) {
    super(body && body.message ? body.message : `HTTP ${status}`);
    this.status = status;
    this.body = body;
  }
}

async function api(method, path, body, token) {
  const headers = {};
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (token) headers["Authorization"] = `Bearer ${token}`;
  const response = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await response.text();
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch { data = { message: text }; }
  if (!response.ok) throw new ApiError(response.status, data);
  return data;
}

// ----- seats kept in this browser -----

const seatKey = (game) => `coffer.seat.${game}`;
function savedSeat(game) {
  try { return JSON.parse(localStorage.getItem(seatKey(game))); } catch { return null; }
}
function saveSeat(game, seat, token) {
  localStorage.setItem(seatKey(game), JSON.stringify({ seat, token }));
}

const GAME_OWNER = 65535;
function ownerName(owner, seat) {
  if (owner === GAME_OWNER || owner === null || owner === undefined) return "Table";
  return seat === owner ? `p${owner} (you)` : `p${owner}`;
}

function showStatus(text, kind) {
  statusLine.textContent = text;
  statusLine.className = `status ${kind || ""}`;
}

// ----- lobby -----

async function lobby() {
  document.title = "Coffer: games";
  where.textContent = "Lobby";
  fill(main, h("p", { class: "muted" }, "Loading…"));
  let rulesets, games;
  try {
    [rulesets, games] = await Promise.all([api("GET", "/api/rulesets"), api("GET", "/api/games?limit=1000")]);
  } catch (e) {
    fill(main, h("p", { class: "error", role: "alert" }, `Cannot reach the server: ${e.message}`));
    return;
  }
  const open = games.filter((g) => g.free_seats.length && !g.finished && !g.stopped);
  fill(main, 
    h("h1", {}, "Games"),
    h("div", { class: "grid" },
      createPanel(rulesets),
      h("section", { class: "panel", "aria-labelledby": "open-title" },
        h("h2", { id: "open-title" }, "Open games"),
        open.length ? h("ul", { class: "plain", id: "open-games" }, open.map(openGame)) : h("p", { class: "muted" }, "No game has a free seat."),
      ),
      h("section", { class: "panel", "aria-labelledby": "all-title" },
        h("h2", { id: "all-title" }, "Watch"),
        games.length ? h("ul", { class: "plain", id: "all-games" }, games.map((g) => h("li", {},
          h("a", { href: `/game/${g.game}` }, `${g.ruleset} #${g.game}`), " ",
          h("span", { class: "muted small" }, g.finished ? "over" : g.stopped ? "stopped" : `${g.seq} actions`),
          g.bots ? h("span", { class: "muted small" }, ` (bots: ${Object.entries(g.bots).map(([s, b]) => `p${s} ${b}`).join(", ")})`) : null))) :
          h("p", { class: "muted" }, "No game yet."),
      ),
    ),
    h("h2", {}, "Rulesets"),
    h("div", { class: "grid" }, rulesets.map(describeRuleset)),
  );
}

function openGame(g) {
  return h("li", {},
    h("strong", {}, g.ruleset), ` #${g.game}, ${g.players} players `,
    h("a", { href: `/game/${g.game}` }, "watch"), " ",
    g.free_seats.map((seat) => h("button", {
      class: "secondary", type: "button", "aria-label": `Join game ${g.game} as seat ${seat}`,
      onclick: async (ev) => {
        ev.target.disabled = true;
        try {
          const joined = await api("POST", `/api/games/${g.game}/join`, { seat });
          saveSeat(g.game, joined.seat, joined.token);
          location.assign(`/game/${g.game}`);
        } catch (e) {
          ev.target.disabled = false;
          alertIn(ev.target.parentElement, e.message);
        }
      },
    }, `Join as p${seat}`)),
  );
}

function alertIn(parent, text) {
  let box = parent.querySelector(":scope > .error");
  if (!box) { box = h("p", { class: "error", role: "alert" }); parent.append(box); }
  box.textContent = text;
}

function describeRuleset(r) {
  const d = r.description;
  return h("section", { class: "panel ruleset", "aria-label": `Ruleset ${d.id}` },
    h("h3", {}, `${d.id} `, h("span", { class: "muted small" }, d.version)),
    h("p", {}, d.summary),
    h("p", { class: "muted small" }, `${d.min_players} to ${d.max_players} players`),
    d.resources.length ? h("details", {}, h("summary", {}, "Resources"),
      h("ul", {}, d.resources.map((x) => h("li", {}, h("strong", {}, x.name), `: ${x.doc}`)))) : null,
    d.actions.length ? h("details", {}, h("summary", {}, "Actions"),
      h("ul", {}, d.actions.map((x) => h("li", {}, h("strong", {}, x.name), `: ${x.doc}`)))) : null,
  );
}

function createPanel(rulesets) {
  const form = h("form", { id: "create", "aria-labelledby": "create-title" });
  const select = h("select", { id: "create-ruleset", name: "ruleset" },
    rulesets.map((r) => h("option", { value: r.key }, `${r.description.id} (${r.description.version})`)));
  const players = h("input", { id: "create-players", type: "number", name: "players", required: true });
  const seed = h("input", { id: "create-seed", type: "number", name: "seed", min: 0, placeholder: "drawn by the server" });
  const others = h("select", { id: "create-others", name: "others" },
    h("option", { value: "open" }, "open for others to join"),
    h("option", { value: "random" }, "played by the random bot"),
    h("option", { value: "search" }, "played by the search bot"));
  const perDecision = h("input", { id: "create-clock", type: "number", name: "clock", min: 1, step: "any", placeholder: "no clock" });
  const onTimeout = h("select", { id: "create-on-timeout", name: "on_timeout" },
    h("option", { value: "bot" }, "the random bot plays the move"),
    h("option", { value: "forfeit" }, "the seat forfeits, where the game allows it"));
  const options = h("div", { id: "create-options" });
  const error = h("p", { class: "error", role: "alert", hidden: true });
  const current = () => rulesets.find((r) => r.key === select.value);
  const refresh = () => {
    const d = current().description;
    players.min = d.min_players; players.max = d.max_players; players.value = d.min_players;
    fill(options, ...d.options.map(optionField));
  };
  select.addEventListener("change", refresh);
  form.append(
    h("label", { for: "create-ruleset" }, "Ruleset"), select,
    h("label", { for: "create-players" }, "Players"), players,
    h("label", { for: "create-seed" }, "Seed (optional)"),
    h("p", { class: "field-doc" }, "Leave it empty: a known seed lets whoever knows it work out hidden cards."), seed,
    options,
    h("label", { for: "create-others" }, "The other seats"),
    h("p", { class: "field-doc" }, "You take seat p0. The server plays a bot's seats itself: the random bot plays any legal action, the search bot tries each in playouts."),
    others,
    h("label", { for: "create-clock" }, "Seconds per decision (optional)"),
    h("p", { class: "field-doc" }, "A seat that lets its time run out plays the game's default move where it has one (pass, end the turn); otherwise:"),
    perDecision,
    h("label", { for: "create-on-timeout" }, "When time runs out"),
    onTimeout,
    error,
    h("button", { type: "submit" }, "Create the game"),
  );
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    error.hidden = true;
    const d = current().description;
    const n = Number(players.value);
    const body = { ruleset: select.value, players: n, config: readOptions(d.options, options) };
    if (seed.value !== "") body.seed = Number(seed.value);
    const seats = Array.from({ length: Math.max(0, n - 1) }, (_, i) => i + 1);
    if (perDecision.value !== "") {
      body.clock = { per_action_ms: Math.round(Number(perDecision.value) * 1000) };
      body.on_timeout = onTimeout.value;
    }
    if (others.value === "open") body.open_seats = seats;
    else body.bots = Object.fromEntries(seats.map((s) => [String(s), others.value]));
    try {
      const created = await api("POST", "/api/games", body);
      saveSeat(created.game, 0, created.tokens[0]);
      location.assign(`/game/${created.game}`);
    } catch (e) {
      error.textContent = e.message;
      error.hidden = false;
    }
  });
  if (rulesets.length) refresh();
  return h("section", { class: "panel" }, h("h2", { id: "create-title" }, "Create a game"),
    rulesets.length ? form : h("p", { class: "muted" }, "No ruleset is loaded on this server."));
}

/** A form field for one of the ruleset's options, typed by its default value. */
function optionField(option) {
  const id = `option-${option.name}`;
  const v = option.value;
  let input;
  if (typeof v === "boolean") {
    input = h("input", { id, type: "checkbox", "data-option": option.name });
    input.checked = v;
    return h("div", {}, h("label", { class: "inline", for: id }, input, option.name), h("p", { class: "field-doc" }, option.doc));
  }
  if (typeof v === "number") input = h("input", { id, type: "number", "data-option": option.name, value: v });
  else if (typeof v === "string") input = h("input", { id, type: "text", "data-option": option.name, value: v });
  else input = h("textarea", { id, "data-option": option.name, "data-json": "1" }, JSON.stringify(v));
  return h("div", {}, h("label", { for: id }, option.name), h("p", { class: "field-doc" }, option.doc), input);
}

/** The configuration: only the options changed from their defaults. */
function readOptions(defaults, container) {
  const config = {};
  for (const option of defaults) {
    const input = container.querySelector(`[data-option="${CSS.escape(option.name)}"]`);
    if (!input) continue;
    let value;
    if (input.type === "checkbox") value = input.checked;
    else if (input.type === "number") value = Number(input.value);
    else if (input.dataset.json) { try { value = JSON.parse(input.value); } catch { value = input.value; } }
    else value = input.value;
    if (JSON.stringify(value) !== JSON.stringify(option.value)) config[option.name] = value;
  }
  return config;
}

// ----- game page -----

/** What a level of the clock is called in this ruleset's words (its vocabulary), else the kernel's. */
function scopeWord(state, lifetime) {
  const v = (state.description && state.description.vocabulary) || {};
  switch (lifetime) {
    case "Act": return (v.round || "Round").toLowerCase();
    case "Turn": return v.turn_name || "turn";
    case "Phase": return v.phase_name || "phase";
    case "Step": return v.step_name || "step";
    default: return String(lifetime).toLowerCase();
  }
}

async function gamePage(id) {
  where.textContent = `Game ${id}`;
  document.title = `Coffer: game ${id}`;
  const fragment = new URLSearchParams(location.hash.slice(1));
  if (fragment.get("token") && fragment.get("seat")) {
    // A seat link shared as /game/ID#seat=N&token=T: kept in this browser, then removed from the address.
    saveSeat(id, Number(fragment.get("seat")), fragment.get("token"));
    history.replaceState(null, "", location.pathname);
  }
  let summary, rulesets;
  try {
    [summary, rulesets] = await Promise.all([api("GET", `/api/games/${id}`), api("GET", "/api/rulesets")]);
  } catch (e) {
    fill(main, h("p", { class: "error", role: "alert" }, e.message), h("p", {}, h("a", { href: "/" }, "Back to the lobby")));
    return;
  }
  const ruleset = rulesets.find((r) => r.key === summary.ruleset);
  const mine = savedSeat(id);
  const state = {
    id, summary, description: ruleset ? ruleset.description : null, webView: ruleset ? ruleset.web_view : null,
    seat: mine ? mine.seat : null, token: mine ? mine.token : null,
    view: null, seq: 0, log: [], legal: null, busy: false, error: null, stopped: summary.stopped || null,
    socket: null, retry: 0, clock: null, timeout: null, abandoned: (summary.bots || {})[mine ? mine.seat : -1] !== undefined,
  };
  currentState = state;
  where.textContent = `${summary.ruleset} · game ${id} · ${state.seat === null ? "watching" : `you are p${state.seat}`}`;
  fill(main, 
    h("div", { id: "banner" }),
    h("div", { class: "grid" },
      h("section", { class: "panel", "aria-labelledby": "clock-title" }, h("h2", { id: "clock-title" }, "Where the game is"), h("div", { id: "clock" }), h("div", { id: "timers" })),
      state.seat !== null ? h("section", { class: "panel actions", "aria-labelledby": "actions-title" },
        h("h2", { id: "actions-title" }, "Your actions"), h("div", { id: "actions" })) : null,
    ),
    h("h2", {}, "Resources"),
    h("div", { class: "grid", id: "resources" }),
    h("div", { id: "custom" }),
    h("div", { id: "sections" }),
    h("section", { class: "panel", "aria-labelledby": "log-title" }, h("h2", { id: "log-title" }, "What happened"),
      h("ol", { class: "plain log", id: "log", "aria-live": "polite" })),
  );
  connect(state);
}

function connect(state) {
  const protocol = location.protocol === "https:" ? "wss:" : "ws:";
  const params = new URLSearchParams({ since: String(state.seq) });
  if (state.token) params.set("token", state.token);
  const socket = new WebSocket(`${protocol}//${location.host}/api/games/${state.id}/ws?${params}`);
  state.socket = socket;
  showStatus("connecting…", "down");
  socket.addEventListener("open", () => { state.retry = 0; showStatus("live", "live"); });
  socket.addEventListener("message", (event) => {
    let message;
    try { message = JSON.parse(event.data); } catch { return; }
    receive(state, message);
  });
  socket.addEventListener("close", () => {
    if (state.socket !== socket) return;
    state.busy = false;
    if (state.stopped) { showStatus("stopped", "down"); return; }
    // Reconnect with the last sequence seen: the server sends what was missed, then live updates.
    const wait = Math.min(10000, 250 * 2 ** state.retry++);
    showStatus(`reconnecting in ${(wait / 1000).toFixed(1)} s…`, "down");
    setTimeout(() => connect(state), wait);
  });
}

function receive(state, message) {
  switch (message.type) {
    case "hello":
      break;
    case "action":
      if (message.seq <= state.seq) break;
      state.seq = message.seq;
      state.log.push(message);
      appendLog(state, message);
      // A pushed action carries this seat's legal actions when it may act next, and none otherwise.
      if (message.view) { state.view = message.view; draw(state, message.legal ? message.legal.actions : []); }
      break;
    case "view":
      state.seq = Math.max(state.seq, message.seq);
      state.view = message.view;
      if (message.clock) setClock(state, message.clock);
      draw(state);
      break;
    case "clock":
      setClock(state, message.clock);
      break;
    case "timeout":
      state.timeout = `${ownerName(message.seat, state.seat)}'s time ran out: the game's default move, a forfeit or the random bot's move is played for it`;
      drawTimers(state);
      break;
    case "abandoned":
      state.timeout = `${ownerName(message.seat, state.seat)} is played by the random bot from now on: ${message.why}`;
      if (message.seat === state.seat) { state.abandoned = true; drawActions(state); }
      drawTimers(state);
      break;
    case "legal":
      if (message.seq === state.seq) { state.legal = message.actions; drawActions(state); }
      break;
    case "acted":
      state.busy = false;
      state.error = null;
      break;
    case "error":
      state.busy = false;
      state.error = message.message;
      if (message.error === "stale") askLegal(state);
      drawActions(state);
      break;
    case "stopped":
      state.stopped = message.message;
      draw(state);
      break;
    case "lagged":
      break;
  }
}

function askLegal(state) {
  if (state.seat === null || !state.socket || state.socket.readyState !== WebSocket.OPEN) return;
  if (state.view && state.view.table.outcome !== "Ongoing") { state.legal = []; drawActions(state); return; }
  state.socket.send(JSON.stringify({ type: "legal" }));
}

/** Draws the table; `legal` is this seat's legal actions when the message brought them (else asked for). */
function draw(state, legal) {
  const table = state.view.table;
  const banner = document.getElementById("banner");
  fill(banner, 
    state.stopped ? h("p", { class: "outcome", role: "alert" }, state.stopped) : null,
    table.outcome !== "Ongoing" ? h("p", { class: "outcome", id: "outcome", role: "status" }, outcomeText(table.outcome, state.seat)) : null,
  );
  drawClock(state, table);
  drawResources(state);
  drawSections(state, table);
  drawCustom(state);
  if (legal && state.seat !== null) {
    state.legal = legal;
    drawActions(state);
  } else {
    state.legal = null;
    drawActions(state);
    askLegal(state);
  }
}

function outcomeText(outcome, seat) {
  const f = outcome.Finished;
  if (!f) return "";
  const scores = f.scores.length ? ` · scores: ${f.scores.map((s, i) => `p${i} ${s}`).join(", ")}` : "";
  if (!f.winners.length) return `Game over: a draw${scores}`;
  const winners = f.winners.map((w) => ownerName(w, seat)).join(" and ");
  return `Game over: ${winners} ${f.winners.length === 1 ? "wins" : "win"}${scores}`;
}

/** The game's clocks as the server sent them, counted down from when they arrived. */
function setClock(state, clock) {
  state.clock = { clock, received: performance.now() };
  drawTimers(state);
  if (!state.ticking) state.ticking = setInterval(() => drawTimers(state), 200);
}

function formatTime(ms) {
  const s = Math.max(0, Math.ceil(ms / 1000));
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
}

function drawTimers(state) {
  const el = document.getElementById("timers");
  if (!el) return;
  if (!state.clock) {
    fill(el, state.timeout ? h("p", { class: "small", role: "status" }, state.timeout) : null);
    return;
  }
  const { clock, received } = state.clock;
  const over = state.view && state.view.table.outcome !== "Ongoing";
  const elapsed = performance.now() - received;
  const control = clock.control.per_action_ms ? `${formatTime(clock.control.per_action_ms)} a decision`
    : `${formatTime(clock.control.bank_ms)} each${clock.control.increment_ms ? `, +${clock.control.increment_ms / 1000} s an action` : ""}`;
  fill(el,
    h("h3", {}, `Clocks (${control})`),
    h("ul", { class: "plain clocks", id: "clocks" }, clock.seats.map((s) => {
      const left = s.running && !over ? s.remaining_ms - elapsed : s.remaining_ms;
      return h("li", { class: s.running && !over ? "running" : "", "data-seat": s.seat },
        h("strong", {}, ownerName(s.seat, state.seat)), " ", h("span", { class: "time" }, formatTime(left)),
        s.running && !over ? h("span", { class: "muted small" }, " running") : null);
    })),
    state.timeout ? h("p", { class: "small", role: "status" }, state.timeout) : null,
  );
}

function drawClock(state, t) {
  const clock = document.getElementById("clock");
  const round = t.round ? `${t.round_name || "Round"} ${t.round}` : null;
  fill(clock, 
    h("div", { class: "clock" },
      round ? h("span", { class: "pill", id: "round" }, round) : null,
      t.phase ? h("span", { class: "pill", id: "phase" }, t.phase.name) : null,
      t.step ? h("span", { class: "pill", id: "step" }, t.step.name) : null,
      t.turn !== null && t.turn !== undefined ? h("span", { class: `pill ${t.turn === state.seat ? "you" : ""}`, id: "turn" }, `${ownerName(t.turn, state.seat)}'s turn`) : null,
      h("span", { class: "muted small", id: "seq" }, `${state.seq} actions`),
    ),
    t.acting.length ? h("div", {}, h("h3", {}, "Who may act"),
      h("ul", { class: "acting", id: "acting" }, t.acting.map((m) => h("li", {}, h("strong", {}, ownerName(m.seat, state.seat)), ` ${m.why}`)))) : null,
    t.passed.length ? h("p", { class: "small" }, `Passed: ${t.passed.map((p) => ownerName(p, state.seat)).join(", ")}`) : null,
    t.pending.length ? h("div", {}, h("h3", {}, "Waiting for a choice"),
      h("ul", { id: "pending" }, t.pending.map((p) => h("li", {}, `${ownerName(p.owner, state.seat)}: ${p.text || p.label}`)))) : null,
  );
}

function kindTerm(state, kind) {
  const kinds = state.description ? state.description.vocabulary.kinds : [];
  return kinds[kind] || { name: "" };
}

function drawResources(state) {
  const byOwner = new Map();
  for (const r of state.view.resources) {
    const [variant, data] = Object.entries(r)[0];
    const owner = data.key.owner;
    if (!byOwner.has(owner)) byOwner.set(owner, []);
    byOwner.get(owner).push([variant, data]);
  }
  const owners = [...byOwner.keys()].sort((a, b) => a - b);
  fill(document.getElementById("resources"), ...owners.map((owner) => {
    const all = byOwner.get(owner);
    // Empty token zones are many on a board: folded away, still there for whoever looks.
    const empty = all.filter(([variant, data]) => variant === "tokens" && data.counts.every((c) => c === 0) && !data.game);
    const shown = all.filter((entry) => !empty.includes(entry));
    return h("section", { class: `panel owner ${owner === GAME_OWNER ? "shared" : ""}`, "aria-label": `Resources of ${ownerName(owner, state.seat)}` },
      h("h3", {}, ownerName(owner, state.seat)),
      h("div", { class: "list" }, shown.map(([variant, data]) => resource(state, variant, data))),
      empty.length ? h("details", {}, h("summary", {}, `${empty.length} empty ${empty.length === 1 ? "zone" : "zones"}`),
        h("div", { class: "list" }, empty.map(([variant, data]) => resource(state, variant, data)))) : null);
  }));
}

function resource(state, variant, r) {
  const name = h("div", { class: "name" }, r.label);
  let shown;
  if (variant === "amount") {
    const badge = r.lifetime && r.lifetime !== "Game"
      ? h("span", { class: "badge", title: "This pool empties on its own" },
        `empties each ${scopeWord(state, r.lifetime)}`)
      : null;
    name.append(badge || "");
    if (r.cap !== null && r.cap !== undefined && r.cap > r.floor) {
      const share = Math.max(0, Math.min(1, (r.value - r.floor) / (r.cap - r.floor)));
      shown = h("div", { class: "bar", role: "meter", "aria-valuemin": r.floor, "aria-valuemax": r.cap, "aria-valuenow": r.value, "aria-label": r.label },
        h("span", { style: `width:${(share * 100).toFixed(1)}%` }), h("em", {}, `${r.value} / ${r.cap}`));
    } else if (r.floor === 0 && r.value > 0 && r.value <= 12) {
      shown = h("div", { class: "pips", "aria-label": `${r.label}: ${r.value}` },
        Array.from({ length: r.value }, () => h("span", { class: "pip token", "aria-hidden": "true" })), h("span", { class: "value" }, ` ${r.value}`));
    } else {
      shown = h("span", { class: "value" }, String(r.value));
    }
  } else if (variant === "charges") {
    shown = h("div", { class: "pips", role: "img", "aria-label": `${r.active} of ${r.limit} charges active` },
      Array.from({ length: r.limit }, (_, i) => h("span", { class: `pip ${i < r.active ? "" : "spent"}`, title: i < r.active ? "active" : "spent" })),
      h("span", { class: "small muted" }, ` ${r.active}/${r.limit} active`),
      r.unrecoverable ? h("span", { class: "badge" }, "does not recover") : null);
  } else if (variant === "tokens") {
    // Each player's tokens, then the game's own (a bank's).
    const counts = [...r.counts, r.game || 0];
    const players = r.counts.length;
    shown = h("div", { class: "zone" }, counts.map((count, owner) => count > 0
      ? h("span", { "aria-label": `${count} of ${owner < players ? `p${owner}` : "the game"}` },
        h("span", { class: "small" }, owner < players ? `p${owner} ` : "the game "),
        Array.from({ length: Math.min(count, 16) }, () => h("span", { class: "pip token", "aria-hidden": "true" })),
        h("span", { class: "value" }, ` ${count}`))
      : null), counts.every((c) => c === 0) ? h("span", { class: "muted small" }, "empty") : null);
  } else if (variant === "permanent") {
    const term = kindTerm(state, r.key.kind);
    const words = r.exhausted ? (term.exhausted || "is exhausted") : (term.ready || "is ready");
    shown = h("div", {}, h("span", { class: `card ${r.exhausted ? "exhausted" : ""}`, "aria-hidden": "true" }), h("span", {}, words));
  } else {
    shown = h("span", {}, JSON.stringify(r));
  }
  return h("div", { class: `res res-${variant}`, "data-key": `${r.key.owner}:${r.key.kind}:${r.key.subject}` }, name, shown);
}

function drawSections(state, table) {
  fill(document.getElementById("sections"), ...table.sections.map((s) =>
    h("section", { class: "panel", "aria-label": s.title },
      h("h2", {}, s.title),
      s.rows.length ? h("table", { class: "rows" }, h("tbody", {}, s.rows.map((r) =>
        h("tr", {}, h("th", { scope: "row" }, ownerName(r.owner, state.seat)), h("td", {}, r.label), h("td", {}, r.value))))) :
        h("p", { class: "muted small" }, "none"))));
}

async function drawCustom(state) {
  // The ruleset's own view, if the server has one for it (docs/WEB.md, "A ruleset's own view").
  if (!state.webView) return;
  try {
    const module = await import(state.webView);
    module.render(document.getElementById("custom"), { view: state.view, description: state.description, seat: state.seat });
  } catch (e) {
    fill(document.getElementById("custom"), h("p", { class: "error" }, `The ruleset's own view failed: ${e.message}`));
  }
}

function actionDoc(state, type) {
  const docs = state.description ? state.description.actions : [];
  return docs.find((d) => d.value && d.value.type === type) || docs.find((d) => d.name === type) || null;
}

function paramText(action) {
  return Object.entries(action).filter(([k]) => k !== "type").map(([k, v]) => `${k.replaceAll("_", " ")} ${typeof v === "object" ? JSON.stringify(v) : v}`).join(", ");
}

function drawActions(state) {
  const box = document.getElementById("actions");
  if (!box) return;
  const table = state.view ? state.view.table : null;
  const parts = [];
  if (state.error) parts.push(h("p", { class: "error", role: "alert", id: "refusal" }, state.error));
  if (state.stopped || !table) {
    fill(box, ...parts);
    return;
  }
  if (table.outcome !== "Ongoing") {
    parts.push(h("p", { class: "muted" }, "The game is over."));
  } else if (state.abandoned) {
    parts.push(h("p", { class: "muted", id: "handed" }, "The random bot plays your seat for the rest of the game."));
  } else if (state.legal === null) {
    parts.push(h("p", { class: "muted" }, "…"));
  } else if (!state.legal.length) {
    const acting = table.acting.map((m) => ownerName(m.seat, state.seat)).join(", ");
    parts.push(h("p", { class: "muted", id: "waiting" }, acting ? `Waiting for ${acting}.` : "Nothing to do now."));
  } else {
    const groups = new Map();
    for (const action of state.legal) {
      const type = action && typeof action === "object" && action.type ? action.type : JSON.stringify(action);
      if (!groups.has(type)) groups.set(type, []);
      groups.get(type).push(action);
    }
    for (const [type, actions] of groups) parts.push(actionForm(state, type, actions));
  }
  if (table.outcome === "Ongoing" && !state.abandoned && table.undo && table.undo.seat === state.seat) {
    parts.push(undoButton(state, table.undo.actions));
  }
  if (table.outcome === "Ongoing" && !state.abandoned) parts.push(resignButton(state));
  fill(box, ...parts);
}

/** Takes back this seat's last action (the action "~undo"), while the table says it may. */
function undoButton(state, actions) {
  const title = actions > 1 ? `You may take back your last ${actions} actions, one at a time.` : "You may take back your last action.";
  return h("button", {
    class: "secondary", type: "button", id: "undo", title, disabled: state.busy,
    onclick: () => submit(state, "~undo"),
  }, "Undo");
}

/** Hands this seat to the server's random bot for the rest of the game, once confirmed. */
function resignButton(state) {
  return h("button", {
    class: "secondary", type: "button", id: "resign",
    onclick: async () => {
      if (!confirm("Resign? The random bot plays your seat for the rest of the game.")) return;
      try {
        await api("POST", `/api/games/${state.id}/resign`, undefined, state.token);
      } catch (e) {
        state.error = e.message;
        drawActions(state);
      }
    },
  }, "Resign");
}

/** One kind of action: a button, or a choice among its legal variants and a button. */
function actionForm(state, type, actions) {
  const doc = actionDoc(state, type);
  const name = type.replaceAll("_", " ");
  const form = h("form", { "data-action": type, "aria-label": name });
  form.append(h("strong", {}, name));
  if (doc) form.append(h("p", { class: "doc" }, doc.doc));
  let pick = () => actions[0];
  if (actions.length > 1) {
    const id = `choice-${type}`;
    const select = h("select", { id, name: "variant" },
      actions.map((a, i) => h("option", { value: String(i), "data-json": JSON.stringify(a) }, paramText(a) || `option ${i + 1}`)));
    form.append(h("label", { for: id }, "Choose"), select);
    pick = () => actions[Number(select.value)];
  } else if (paramText(actions[0])) {
    form.append(h("p", { class: "small" }, paramText(actions[0])));
  }
  form.append(h("button", { type: "submit", disabled: state.busy, "data-json": actions.length === 1 ? JSON.stringify(actions[0]) : null },
    actions.length > 1 ? `Play ${name}` : name));
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    submit(state, pick());
  });
  return form;
}

function submit(state, action) {
  if (state.busy || !state.socket || state.socket.readyState !== WebSocket.OPEN) return;
  state.busy = true;
  state.error = null;
  const key = `${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`;
  state.socket.send(JSON.stringify({ type: "act", action, expected_seq: state.seq, key }));
  for (const b of document.querySelectorAll("#actions button")) b.disabled = true;
}

/** Who made a move the seat's player did not choose (an action message's `by`), in words. */
const BY = {
  timeout: " (time ran out: played for the seat)",
  bot: " (played by the server's bot)",
  server: " (the seat left the game)",
};

function appendLog(state, message) {
  const log = document.getElementById("log");
  if (!log) return;
  const texts = message.events.map((e) => e.text).filter((t) => t);
  log.append(h("li", { "data-seq": message.seq, class: message.undo ? "undo" : null },
    h("span", { class: "heading" }, `${message.seq}. ${message.action}`),
    message.by ? h("span", { class: "muted small" }, BY[message.by] || "") : null,
    texts.length ? h("ul", {}, texts.map((t) => h("li", {}, t))) : null));
  log.scrollTop = log.scrollHeight;
}

// ----- routing -----

// For the console and for tests: submit any action as this page's seat, as its buttons do.
window.coffer = {
  submit: (action) => currentState && submit(currentState, action),
  // Closes the game's WebSocket as a dropped connection would; the page reconnects by itself.
  drop: () => currentState && currentState.socket && currentState.socket.close(),
};
let currentState = null;

const game = location.pathname.match(/^\/game\/(\d+)\/?$/);
if (location.pathname === "/" || location.pathname === "/index.html") lobby();
else if (game) gamePage(game[1]);
else fill(main, h("p", { class: "error", role: "alert" }, "No such page."), h("p", {}, h("a", { href: "/" }, "Back to the lobby")));
