// The web board of nardy: draws a position of any of the six games in SVG, plays the
// person's turns die by die through the server's legal steps, and shows hints, cube
// advice and the game log. The server (engine/web/app.py) owns the game; this page only
// shows it and sends the person's choices.
"use strict";

const SVG = "http://www.w3.org/2000/svg";
const W = 320 / 6;             // width of a point
const R = 23;                  // checker radius
const LEFT = 30, RIGHT = 410;  // x of the left and right halves
const TOP = 20, BOTTOM = 520;  // y of the board's edges
const OFF_X = 745;

let GAMES = {};        // variant -> facts from /api/games
let S = null;          // the session's state
let turn = null;       // the person's turn in progress (legal steps, board)
let played = [];       // its steps so far
let selected = null;   // the point picked to move from
let analysis = null;   // {position, dice, text} when a set-up position is shown
let busy = false;

const $ = (id) => document.getElementById(id);

async function api(method, path, body) {
  const opts = {method, headers: {"Content-Type": "application/json"}};
  if (body !== undefined) opts.body = JSON.stringify(body);
  const res = await fetch(path, opts);
  const data = await res.json();
  if (!res.ok) {
    const err = new Error(data.error ? data.error.message : res.statusText);
    err.code = data.error && data.error.code;
    throw err;
  }
  return data;
}

function say(text, isError) {
  const el = $("status");
  el.textContent = text;
  el.classList.toggle("error", !!isError);
}

// ------------------------------------------------------------------ geometry
function pointX(p) {               // left edge of my point p
  if (p <= 6) return RIGHT + (6 - p) * W;
  if (p <= 12) return LEFT + (12 - p) * W;
  if (p <= 18) return LEFT + (p - 13) * W;
  return RIGHT + (p - 19) * W;
}
const isTop = (p) => p >= 13;

function el(name, attrs, parent) {
  const node = document.createElementNS(SVG, name);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  if (parent) parent.appendChild(node);
  return node;
}

function checker(g, cx, cy, mine, marked) {
  el("circle", {cx, cy, r: R, fill: mine ? "#f7f1e3" : "#262626",
                stroke: marked ? "#d22" : (mine ? "#7a6a55" : "#000"),
                "stroke-width": marked ? 4 : 2, class: mine ? "checker me" : "checker them"}, g);
}

function stack(g, p, list) {       // list: [mine?, marked?] from the base outwards
  const x = pointX(p) + W / 2;
  const shown = Math.min(list.length, 5);
  for (let i = 0; i < shown; i++) {
    const y = isTop(p) ? TOP + R + 2 + i * 2 * R : BOTTOM - R - 2 - i * 2 * R;
    checker(g, x, y, list[i][0], list[i][1]);
  }
  if (list.length > 5) {
    const y = isTop(p) ? TOP + R + 2 + 4 * 2 * R : BOTTOM - R - 2 - 4 * 2 * R;
    el("text", {x, y: y + 6, "text-anchor": "middle", "font-size": 18, "font-weight": 700,
                fill: list[4][0] ? "#000" : "#fff"}, g).textContent = String(list.length);
  }
}

// ------------------------------------------------------------------ drawing
function draw(board) {
  const svg = $("board");
  svg.innerHTML = "";
  const game = GAMES[board.variant];
  const opp = game.opposite;
  const sources = new Set(), dests = new Set();
  if (turn && !analysis) {
    for (const [a, b] of turn.steps) {
      sources.add(a);
      if (selected === a) dests.add(b);
    }
  }
  svg.dataset.variant = board.variant;
  svg.dataset.steps = JSON.stringify(turn && !analysis ? turn.steps : []);
  el("rect", {x: LEFT - 10, y: TOP - 10, width: 720, height: 520, fill: "#c9a86a", rx: 6}, svg);
  el("rect", {x: 350, y: TOP - 10, width: 60, height: 520, fill: "#6b4f35"}, svg);
  for (let p = 1; p <= 24; p++) {
    const x = pointX(p), top = isTop(p);
    const tip = top ? TOP + 215 : BOTTOM - 215;
    const base = top ? TOP : BOTTOM;
    const g = el("g", {class: "point", "data-point": p}, svg);
    el("rect", {x, y: top ? TOP : BOTTOM - 240, width: W, height: 240, fill: "transparent"}, g);
    el("polygon", {points: `${x},${base} ${x + W},${base} ${x + W / 2},${tip}`,
                   fill: (p % 2) ? "#8c2f1b" : "#e8dcc0",
                   stroke: dests.has(p) ? "#1a7f37" : "none", "stroke-width": 4}, g);
    el("text", {x: x + W / 2, y: top ? TOP - 1 : BOTTOM + 13, "text-anchor": "middle",
                "font-size": 11, fill: "#3b2f2f"}, g).textContent = String(p);
    const mine = board.me[p - 1], theirs = board.them[opp[p] - 1];
    const myPinned = board.pinned[0].includes(p);
    const theirPinned = board.pinned[1].includes(opp[p]);
    const list = [];
    if (myPinned) { list.push([true, true]); for (let i = 0; i < theirs; i++) list.push([false, false]); }
    else if (theirPinned) { list.push([false, true]); for (let i = 0; i < mine; i++) list.push([true, false]); }
    else if (mine) { for (let i = 0; i < mine; i++) list.push([true, false]); }
    else { for (let i = 0; i < theirs; i++) list.push([false, false]); }
    stack(g, p, list);
    if (sources.has(p)) g.classList.add("source");
    if (selected === p) el("rect", {x: x + 2, y: top ? TOP : BOTTOM - 240, width: W - 4,
                                    height: 240, fill: "none", stroke: "#1a5fb4",
                                    "stroke-width": 3}, g);
  }
  // bar: mine in the lower half, theirs in the upper
  const bar = el("g", {class: "point bar", "data-point": 25}, svg);
  el("rect", {x: 350, y: TOP, width: 60, height: 500, fill: "transparent",
              stroke: selected === 25 ? "#1a5fb4" : "none", "stroke-width": 3}, bar);
  for (let i = 0; i < board.bar[0]; i++) checker(bar, 380, 320 + Math.min(i, 3) * 20 + 40, true);
  for (let i = 0; i < board.bar[1]; i++) checker(bar, 380, 220 - Math.min(i, 3) * 20 - 40, false);
  if (board.bar[0] > 1) el("text", {x: 380, y: 300, "text-anchor": "middle", fill: "#fff"}, bar).textContent = `${board.bar[0]}`;
  if (sources.has(25)) bar.classList.add("source");
  // off trays: mine lower right, theirs upper right
  const off = el("g", {class: "point off", "data-point": 0}, svg);
  el("rect", {x: OFF_X, y: 280, width: 60, height: 240, fill: "#4a3726",
              stroke: dests.has(0) ? "#1a7f37" : "none", "stroke-width": 4}, off);
  el("rect", {x: OFF_X, y: TOP, width: 60, height: 240, fill: "#4a3726"}, svg);
  for (let i = 0; i < board.off[0]; i++)
    el("rect", {x: OFF_X + 8, y: 512 - i * 15, width: 44, height: 12, fill: "#f7f1e3"}, off);
  for (let i = 0; i < board.off[1]; i++)
    el("rect", {x: OFF_X + 8, y: TOP + 4 + i * 15, width: 44, height: 12, fill: "#262626",
                stroke: "#888"}, svg);
  const [mePips, themPips] = pips(board);
  const cube = S && S.cube && !analysis ?
    ` · cube ${S.cube.value}${S.cube.owner === "centre" ? "" : " (" + S.cube.owner + ")"}` : "";
  $("pips").textContent = `you (white): ${mePips} pips, ${board.off[0]} off · ` +
    `engine (black): ${themPips} pips, ${board.off[1]} off${cube}`;
}

function pips(board) {
  let a = 25 * board.bar[0], b = 25 * board.bar[1];
  for (let i = 0; i < 24; i++) { a += (i + 1) * board.me[i]; b += (i + 1) * board.them[i]; }
  return [a, b];
}

// the levels a resignation may offer, in each game's words (engine/play/resign.py)
const RESIGN_WORDS = {backgammon: ["single", "gammon", "backgammon"],
                      long_nardy: ["oyn", "mars"], gul_bara: ["oyn", "mars"]};

function shownBoard() {
  if (analysis) return analysis.position;
  if (turn) return turn.board;
  return S ? S.board : GAMES[$("variant").value].start;
}

function render() {
  draw(shownBoard());
  const waiting = S && !analysis ? S.waiting : null;
  $("roll").hidden = $("double").hidden = waiting !== "double";
  $("take").hidden = $("pass").hidden = waiting !== "take";
  $("accept").hidden = $("reject").hidden = waiting !== "accept";
  $("beaver").hidden = $("no-beaver").hidden = waiting !== "beaver";
  $("resign-box").hidden = waiting !== "move" && waiting !== "double";
  if (S && !$("resign-box").hidden) {
    // the game's own words and levels: backgammon's gammon, nardy's mars, no triple in tavli
    const words = RESIGN_WORDS[S.variant] || ["single", "double game"];
    const sel = $("resign-level");
    if (sel.dataset.variant !== S.variant) {
      sel.innerHTML = "";
      words.forEach((w, i) => {
        const o = document.createElement("option");
        o.value = String(i + 1);
        o.textContent = w;
        sel.appendChild(o);
      });
      sel.dataset.variant = S.variant;
    }
  }
  $("undo").hidden = waiting !== "move";
  $("done").hidden = waiting !== "move";
  $("undo").disabled = !played.length;
  $("done").disabled = !(turn && turn.complete);
  $("back").hidden = !(analysis && S && !S.finished);
  $("save-mat").hidden = !(S && S.variant === "backgammon" && S.mode !== "tavli");
  $("review").hidden = $("save-sgf").hidden = $("save-mat").hidden;
  const dice = $("dice");
  dice.innerHTML = "";
  if (waiting === "move" && turn) {
    const all = played.map((s) => [s[2], true]).concat(turn.dice_left.map((d) => [d, false]));
    for (const [d, used] of all) {
      const span = document.createElement("span");
      span.className = "die" + (used ? " used" : "");
      span.textContent = String(d);
      dice.appendChild(span);
    }
  }
  if (analysis) say("Set-up position: ask for a hint, cube advice or an evaluation.");
  else if (!S) {}
  else if (S.error) say(S.error, true);
  else if (S.finished) say(`${S.result}. Press New game to play again.`);
  else if (waiting === "move") {
    const what = S.pending ? "play the pending dice" : `you rolled ${S.dice.join("-")}`;
    say(turn.complete ? `${what}: press Done, or Undo` :
        (turn.steps.length ? `${what}: click a checker, then where it goes` : `${what}`));
  } else if (waiting === "double") say("Your turn: roll, or double the cube.");
  else if (waiting === "take") say(`The engine doubles to ${S.cube_state.value * 2}: take or pass?`);
  else if (waiting === "beaver") say(`You take at ${S.cube_state.value * 2}: beaver (redouble to ${S.cube_state.value * 4}, keeping the cube)?`);
  else if (waiting === "accept") say(`The engine resigns ${S.resignation.words} (${S.resignation.points} point${S.resignation.points === 1 ? "" : "s"} to you): accept or reject?`);
  else say("The engine is playing...");
  const score = S ? ` Score: you ${S.score.you}, engine ${S.score.engine}` +
    (S.length ? ` (to ${S.length})` : "") : "";
  $("status").dataset.score = score;
  if (S && !analysis && score) $("status").textContent += " |" + score;
  const log = $("log");
  log.innerHTML = "";
  for (const e of (S ? S.log : [])) {
    const li = document.createElement("li");
    const dice = e.dice && e.dice.length ? (e.pending ? `pending ${e.dice.join("")}` : e.dice.join("")) + ": " : "";
    li.textContent = `${e.who === "result" ? "" : e.who + " "}${dice}${e.move}`;
    log.appendChild(li);
  }
  log.scrollTop = log.scrollHeight;
  $("board").dataset.waiting = waiting || (S && S.finished ? "finished" : "");
}

// ------------------------------------------------------------------ the game
async function guard(fn) {
  if (busy) return;
  busy = true;
  document.body.dataset.busy = "1";
  try { await fn(); }
  catch (err) {
    say(err.message, true);
    // a "thinking..." left in the analysis pane by the request that failed
    const out = $("analysis");
    if (out.textContent.endsWith("...")) out.textContent = "";
  }
  finally { busy = false; document.body.dataset.busy = "0"; }
}

function adopt(state) {
  S = state;
  played = [];
  selected = null;
  turn = S.waiting === "move" ? S.turn : null;
  render();
  if (!S.finished && !S.waiting) setTimeout(poll, 50);
}

async function poll() {
  if (!S || S.finished || S.waiting) return;
  try { adopt(await api("GET", `/api/sessions/${S.id}?after=${S.serial || 0}`)); }
  catch (err) {
    say(err.message, true);
    // a failed poll (the network, a restart) is tried again; a session that ended is not
    if (err.code !== "unknown_session") setTimeout(poll, 2000);
  }
}

function newGame() {
  return guard(async () => {
    analysis = null;
    if (S && !S.finished) api("DELETE", `/api/sessions/${S.id}`).catch(() => {});
    S = null; turn = null; played = [];
    say("Starting (the first game compiles the engine's kernels, about 20 s)...");
    const mode = $("mode").value;
    const body = {variant: $("variant").value, mode, ply: Number($("ply").value),
                  cube: $("variant").value === "backgammon" && $("cube").checked};
    if (mode === "game" && body.cube && $("beavers").checked) body.beavers = true;
    if (mode !== "game") body.length = Number($("length").value);
    if (mode === "tavli") { body.variant = "portes"; body.cube = false; }
    adopt(await api("POST", "/api/sessions", body));
  });
}

function act(action) {
  return guard(async () => {
    say("The engine is playing...");
    adopt(await api("POST", `/api/sessions/${S.id}/act`, {...action, serial: S.serial}));
  });
}

function walk(steps) {
  return guard(async () => {
    turn = await api("POST", `/api/sessions/${S.id}/walk`, {steps});
    played = steps;
    selected = null;
    render();
  });
}

function clickPoint(p) {
  if (!turn || analysis || busy || S.waiting !== "move") return;
  const from = turn.steps.filter((s) => s[0] === p);
  if (selected !== null) {
    const step = turn.steps.filter((s) => s[0] === selected && s[1] === p)
                           .sort((a, b) => a[2] - b[2])[0];
    if (step) return walk(played.concat([step]));
  }
  selected = from.length ? p : null;
  render();
}

// ------------------------------------------------------------------ analysis
function analysedPosition() {
  if (analysis) return {position: analysis.position, dice: analysis.dice};
  if (S && S.waiting === "move") return {position: S.board, dice: S.dice, pending: S.pending};
  if (S && S.waiting) return {position: S.board, dice: null};
  return null;
}

// a roll to analyse: its dice, or null for a gul bara pending segment; else an error
function rollOf(at, what) {
  if (at && at.pending) return null;
  if (!at || !at.dice) throw new Error(`${what} needs a position with dice: your turn, or a set-up position with dice.`);
  return at.dice;
}

function table(head, rows) {
  const t = document.createElement("table");
  const tr = t.insertRow();
  for (const h of head) { const th = document.createElement("th"); th.textContent = h; tr.appendChild(th); }
  for (const r of rows) {
    const row = t.insertRow();
    for (const c of r) row.insertCell().textContent = c;
  }
  return t;
}

const pct = (x) => (100 * x).toFixed(1);

function hint() {
  return guard(async () => {
    const at = analysedPosition();
    const dice = rollOf(at, "A hint");
    const ply = Number($("hint-ply").value);
    const out = $("analysis");
    out.textContent = "thinking...";
    const req = {position: at.position, dice, ply, limit: 10};
    if (S && S.cube && !analysis) {
      // the game's cube (and match score): plays ranked by cubeful equity there
      const owner = {centre: "centre", you: "me", engine: "them"}[S.cube.owner];
      req.cube = {value: S.cube.value, owner};
      if (S.mode === "match") {
        req.match = {length: S.length, score: [S.score.you, S.score.engine],
                     crawford: S.cube.crawford};
      } else {
        req.match = null;          // money play, with the Jacoby rule the game plays by
        req.jacoby = true;
      }
    } else if (S && S.mode === "match" && !analysis && at.position.variant === "backgammon") {
      // a match without the cube: the score alone weighs the plays (the cube dead at 1),
      // as the engine plays there
      req.cube = {value: 1, owner: "centre", max: 1};
      req.match = {length: S.length, score: [S.score.you, S.score.engine]};
    } else if (analysis && analysis.info && analysis.info.cube_value
               && at.position.variant === "backgammon") {
      // a set-up ID that holds the cube (money or a match): its cube and score, as the
      // cube advice reads them
      const i = analysis.info;
      req.cube = {value: i.cube_value, owner: i.cube_owner};
      req.match = i.match_length ? {length: i.match_length, score: i.score,
                                    crawford: i.crawford} : null;
      if (!i.match_length) req.jacoby = Boolean(i.jacoby);
    }
    const r = await api("POST", "/api/best", req);
    out.innerHTML = "";
    const eq = (c) => (c.cubeful_equity !== undefined ? c.cubeful_equity : c.equity);
    const best = eq(r.candidates[0]);
    const unit = r.cubeful_equity === undefined ? "equity"
      : (req.match ? "match eq." : "cubeful eq.");
    out.appendChild(table(["#", "play", unit,
                           "diff", "win", "gammon", "lose g"],
      r.candidates.map((c, i) => [i + 1, c.move, eq(c).toFixed(3),
        i ? (eq(c) - best).toFixed(3) : "", pct(c.probabilities.win),
        pct(c.probabilities.win_gammon), pct(c.probabilities.lose_gammon)])));
    out.firstChild.id = "hint-table";
  });
}

function saveMatch(kind) {
  // the session's backgammon games as a match file (.mat or GNU Backgammon's .sgf),
  // downloaded
  return guard(async () => {
    if (!S) throw new Error("Start a game first.");
    const r = await api("GET", `/api/sessions/${S.id}/mat?format=${kind}`);
    const link = document.createElement("a");
    link.href = URL.createObjectURL(new Blob([r[kind]], {type: "text/plain"}));
    link.download = r.filename;
    link.id = "mat-link";
    document.body.appendChild(link);
    link.click();
    setTimeout(() => { URL.revokeObjectURL(link.href); link.remove(); }, 1000);
  });
}

function totalsTable(r, names, id) {
  // a review's totals for each player (engine.review's JSON): plays, costs, marks, luck,
  // GNU Backgammon's overall rating and luck rating; the errors in all and the
  // luck-adjusted result in match winning chance (a match) or points (money play)
  const mwc = r.unit === "mwc";
  const u = (v) => v === null || v === undefined ? "" : (v >= 0 ? "+" : "") +
    (mwc ? (100 * v).toFixed(2) + "%" : v.toFixed(3));
  const adj = r.luck_adjusted_result || [null, null];
  const t = table(["", "plays", "mEMG/play", "cube", "cube cost", "??", "?", "?!", "luck",
                   "rating", "dice", mwc ? "errors (MWC)" : "errors (points)",
                   "luck-adjusted result"],
    r.totals.map((x, i) => [names[i], x.plays, x.play_rate_memg.toFixed(1), x.cube_decisions,
                            x.cube_cost.toFixed(3), x.marks["??"], x.marks["?"],
                            x.marks["?!"], (x.luck >= 0 ? "+" : "") + x.luck.toFixed(3),
                            x.ratings.overall || "", x.ratings.luck || "",
                            u(x.total_cost_u === null ? null : -x.total_cost_u), u(adj[i])]));
  t.id = id;
  return t;
}

function reviewGames() {
  // the games played so far, every decision rated: the totals, then your costly ones
  return guard(async () => {
    if (!S) throw new Error("Start a game first.");
    const out = $("analysis");
    out.textContent = "reviewing the games...";
    const r = await api("GET", `/api/sessions/${S.id}/review?ply=0`);
    out.innerHTML = "";
    out.appendChild(totalsTable(r, ["you", "nardy"], "review-table"));
    const mine = r.decisions.filter((d) => d.player === 0 && d.mark)
      .sort((a, b) => b.cost - a.cost).slice(0, 10);
    if (mine.length) {
      out.appendChild(table(["game", "your decision", "cost", "best"], mine.map((d) => [
        d.game, (d.dice ? d.dice.join("") + ": " : "") + d.chosen,
        `-${d.cost.toFixed(3)} ${d.mark}`, d.best])));
    }
  });
}

function reviewFile() {
  // a match file from this computer, every decision of both players rated: the totals,
  // then the costliest decisions, each shown on the board by its XGID
  return guard(async () => {
    const input = $("review-file");
    const file = input.files[0];
    if (!file) return;
    const out = $("file-review");
    out.textContent = `reviewing ${file.name}...`;
    let r;
    try {
      r = await api("POST", "/api/review", {text: await file.text(), ply: 0});
    } catch (e) {
      out.textContent = "";
      throw e;
    } finally {
      input.value = "";                 // the same file chosen again is reviewed again
    }
    out.innerHTML = "";
    const what = r.length ? `${r.length}-point match` : "money session";
    const head = document.createElement("p");
    head.textContent = `${file.name}: ${what}, ${r.games} game(s), ${r.decisions.length} decisions rated at 0-ply`;
    out.appendChild(head);
    out.appendChild(totalsTable(r, r.players, "file-review-table"));
    const worst = r.decisions.filter((d) => d.mark).sort((a, b) => b.cost - a.cost).slice(0, 10);
    if (!worst.length) return;
    const w = table(["game", "player", "decision", "cost", "best", ""], worst.map((d) => [
      d.game, r.players[d.player], (d.dice ? d.dice.join("") + ": " : "") + d.chosen,
      `-${d.cost.toFixed(3)} ${d.mark}`, d.best, ""]));
    w.id = "file-review-worst";
    worst.forEach((d, i) => {
      if (!d.xgid) return;              // a position the XGID cannot hold
      const b = document.createElement("button");
      b.type = "button";
      b.textContent = "show";
      b.title = d.xgid;
      b.onclick = () => { $("position-text").value = d.xgid; $("setup-dice").value = ""; setup(); };
      w.rows[i + 1].cells[5].appendChild(b);
    });
    out.appendChild(w);
  });
}

function cubeAdvice() {
  return guard(async () => {
    const at = analysedPosition();
    if (!at || at.position.variant !== "backgammon") throw new Error("Cube advice is for backgammon positions.");
    const req = {position: at.position, ply: Number($("hint-ply").value)};
    let whose = "";
    if (analysis && analysis.text) {
      req.position = analysis.text;        // its ID: the cube and score it holds
    } else if (S && S.cube_state && !analysis) {
      // a cube decision now, seen from the side that may double
      const c = S.cube_state;
      req.position = c.position;
      req.cube = {value: c.value, owner: c.owner};
      if (c.match) req.match = {length: c.match, score: c.score, crawford: c.crawford};
      if (c.doubler === "engine") whose = " of the engine's double";
    } else if (S && S.cube && !analysis) {
      const owner = {centre: "centre", you: "me", engine: "them"}[S.cube.owner];
      req.cube = {value: S.cube.value, owner};
      if (S.mode === "match") req.match = {length: S.length, score: [S.score.you, S.score.engine],
                                           crawford: S.cube.crawford};
    }
    const r = await api("POST", "/api/cube", req);
    const out = $("analysis");
    out.innerHTML = "";
    const e = r.equities, f = (x) => (x === null ? "-" : x.toFixed(3));
    const t = table(["", "action", "equity"], [
      ["", "no double", f(e.no_double)], ["", "double, take", f(e.double_take)],
      ["", "double, pass", f(e.double_pass)]]);
    t.id = "cube-table";
    const p = document.createElement("p");
    p.id = "cube-action";
    p.textContent = `Proper action${whose}: ${r.action.replace(/_/g, " ")} (win ${pct(r.probabilities.win)}%, take point ${pct(r.take_point)}%)`;
    out.appendChild(p);
    out.appendChild(t);
  });
}

function rollout() {
  return guard(async () => {
    const at = analysedPosition();
    const dice = rollOf(at, "A rollout");
    const out = $("analysis");
    out.textContent = "rolling out the best 3 plays (1296 trials each, truncated at 7 plies)...";
    const r = await api("POST", "/api/rollout", {position: at.position, dice, candidates: 3,
                                                 trials: 1296, truncate: 7});
    out.innerHTML = "";
    const t = table(["#", "play", "equity", "se", "behind", "win", "gammon"],
      r.candidates.map((c, i) => [i + 1, c.move, c.equity.toFixed(3), c.se.equity.toFixed(3),
        i ? `${c.behind.toFixed(3)}${c.significant ? " *" : ""}` : "", pct(c.probabilities.win),
        pct(c.probabilities.win_gammon)]));
    t.id = "rollout-table";
    out.appendChild(t);
    const note = document.createElement("p");
    note.textContent = `${r.trials} trials, 0-ply play, variance reduced; * behind by more than 1.96 standard errors`;
    out.appendChild(note);
  });
}

function evaluate() {
  return guard(async () => {
    const at = analysedPosition() || (S ? {position: S.board} : null);
    if (!at) throw new Error("No position to evaluate.");
    const r = await api("POST", "/api/evaluate", {position: at.position, ply: Number($("hint-ply").value)});
    const p = r.probabilities;
    $("analysis").textContent = `Side to move, before rolling, ${r.ply}-ply: equity ${r.equity.toFixed(3)}; ` +
      `win ${pct(p.win)}%, gammon ${pct(p.win_gammon)}%, backgammon ${pct(p.win_backgammon)}%, ` +
      `lose gammon ${pct(p.lose_gammon)}%, lose backgammon ${pct(p.lose_backgammon)}%`;
  });
}

function setup() {
  return guard(async () => {
    const text = $("position-text").value.trim();
    if (!text) throw new Error("Paste a GNU Backgammon ID, an XGID or Position JSON first.");
    const r = await api("POST", "/api/position", {position: text});
    // the dice typed, else the ID's own
    let dice = r.info && r.info.dice ? r.info.dice : null;
    const d = $("setup-dice").value.replace(/\D/g, "");
    if (d.length === 2) dice = [Number(d[0]), Number(d[1])];
    else if (d.length) throw new Error(`dice ${JSON.stringify($("setup-dice").value)}: expected two digits 1-6, e.g. 31`);
    analysis = {position: r.position, dice, text: r.info ? text : null, info: r.info || null};
    $("variant").value = r.position.variant;
    showIds(r);
    render();
  });
}

function copyPosition() {
  return guard(async () => {
    const board = shownBoard();
    const r = await api("POST", "/api/position", {position: board});
    showIds(r);
    const text = r.xgid || JSON.stringify(r.position);
    $("position-text").value = r.gnubg_id || text;
    if (navigator.clipboard) navigator.clipboard.writeText(r.gnubg_id || text).catch(() => {});
  });
}

function showIds(r) {
  const out = $("ids");
  out.innerHTML = "";
  const lines = [];
  if (r.gnubg_id) lines.push(`GNU Backgammon ID: ${r.gnubg_id}`);
  if (r.xgid) lines.push(r.xgid);
  lines.push(JSON.stringify(r.position));
  for (const l of lines) { const div = document.createElement("div"); div.textContent = l; out.appendChild(div); }
}

// ------------------------------------------------------------------ start
function syncForm() {
  const mode = $("mode").value, variant = $("variant").value;
  $("length-label").hidden = mode === "game";
  $("cube-label").hidden = !(variant === "backgammon" && mode !== "tavli");
  $("beavers-label").hidden = !(variant === "backgammon" && mode === "game");
  if (!S && !analysis) draw(GAMES[mode === "tavli" ? "portes" : variant].start);
}

async function init() {
  const r = await api("GET", "/api/games");
  const select = $("variant");
  for (const g of r.games) {
    GAMES[g.variant] = g;
    const o = document.createElement("option");
    o.value = g.variant;
    o.textContent = g.variant.replace("_", " ");
    select.appendChild(o);
  }
  const params = new URLSearchParams(location.search);
  if (params.get("variant") && GAMES[params.get("variant")]) select.value = params.get("variant");
  $("variant").onchange = $("mode").onchange = syncForm;
  $("start").onclick = newGame;
  $("roll").onclick = () => act({double: false});
  $("double").onclick = () => act({double: true});
  $("take").onclick = () => act({take: true});
  $("pass").onclick = () => act({take: false});
  $("beaver").onclick = () => act({beaver: true});
  $("no-beaver").onclick = () => act({beaver: false});
  $("accept").onclick = () => act({accept: true});
  $("reject").onclick = () => act({accept: false});
  $("resign").onclick = () => act({resign: Number($("resign-level").value)});
  $("done").onclick = () => act({move: played});
  $("undo").onclick = () => walk(played.slice(0, -1));
  $("hint").onclick = hint;
  $("cube-advice").onclick = cubeAdvice;
  $("evaluate").onclick = evaluate;
  $("rollout").onclick = rollout;
  $("setup").onclick = setup;
  $("copy").onclick = copyPosition;
  $("save-mat").onclick = () => saveMatch("mat");
  $("save-sgf").onclick = () => saveMatch("sgf");
  $("review").onclick = reviewGames;
  $("review-file").onchange = reviewFile;
  $("back").onclick = () => { analysis = null; $("variant").value = S.variant; render(); };
  // a click picks a checker and then its destination; a drag does both at once
  const pointAt = (ev) => {
    const hit = document.elementFromPoint(ev.clientX, ev.clientY);
    const g = hit && hit.closest("#board [data-point]");
    return g ? Number(g.dataset.point) : null;
  };
  let downAt = null;
  $("board").addEventListener("pointerdown", (ev) => { downAt = pointAt(ev); });
  $("board").addEventListener("pointerup", (ev) => {
    const from = downAt, to = pointAt(ev);
    downAt = null;
    if (from === null || to === null) return;
    if (from !== to && turn && turn.steps.some((s) => s[0] === from)) selected = from;
    clickPoint(to);
  });
  syncForm();
  document.body.dataset.ready = "1";
}

init().catch((err) => say(`The page could not start: ${err.message}`, true));
