// Plays games of the web table in headless Chromium, one browser context per seat plus a spectator, by
// clicking the page's own controls. Run by server/tests/it/browser.rs:
//
//   node table.mjs PLAN.json
//
// PLAN.json: {"base": "http://127.0.0.1:PORT", "browser": "/usr/bin/chromium", "shots": "DIR",
//             "games": [{"ruleset": "charges@0.1.0", "players": 2, "seed": 1, "config": {...},
//                        "script": [{"player": 0, "action": {...}}, ...], "hidden": ["regex", ...]}],
//             "undo": {"ruleset": ..., "players": 3, "seed": 1, "config": {...}},
//             "against_bots": {"ruleset": ..., "players": 3, "seed": 1, "config": {...}}}
// Prints one JSON line per game: {"ruleset", "game", "seq"}, then for the undo game and the game against
// bots {"ruleset", "game", "seq"} (with "clicks" for the latter). Exits non-zero, saying why, on any
// failure.

import { readFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { chromium } from "playwright-core";

const plan = JSON.parse(readFileSync(process.argv[2], "utf8"));
const STEP_TIMEOUT = 20000;

/** JSON with object keys sorted, so two spellings of one action compare equal. */
function canonical(value) {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (value && typeof value === "object") {
    return `{${Object.keys(value).sort().map((k) => `${JSON.stringify(k)}:${canonical(value[k])}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

function fail(message) {
  console.error(`table.mjs: ${message}`);
  process.exit(1);
}

/** Records every WebSocket frame and HTTP response body a page receives. */
function record(page) {
  const traffic = [];
  page.on("websocket", (ws) => ws.on("framereceived", (frame) => traffic.push(String(frame.payload))));
  page.on("response", async (response) => {
    try { traffic.push(await response.text()); } catch { /* a redirect or an aborted load has no body */ }
  });
  page.on("pageerror", (error) => fail(`page error on ${page.url()}: ${error.message}`));
  return traffic;
}

async function waitForSeq(page, seq) {
  await page.waitForFunction((n) => {
    const el = document.getElementById("seq");
    return el && el.textContent === `${n} actions`;
  }, seq, { timeout: STEP_TIMEOUT });
}

/** Clicks `action` on `page`: its form's button, after choosing it in the form's list when there is one. */
async function click(page, action, step) {
  const type = action && typeof action === "object" && action.type ? action.type : JSON.stringify(action);
  const form = page.locator(`#actions form[data-action="${type}"]`);
  try {
    await form.waitFor({ timeout: STEP_TIMEOUT });
  } catch {
    const shown = await page.locator("#actions").innerText().catch(() => "");
    fail(`step ${step}: no '${type}' action offered on ${page.url()}; the panel shows: ${shown}`);
  }
  const want = canonical(action);
  const select = form.locator("select");
  if (await select.count()) {
    const options = await select.locator("option").evaluateAll((els) => els.map((o) => [o.value, o.dataset.json]));
    const match = options.find(([, json]) => canonical(JSON.parse(json)) === want);
    if (!match) fail(`step ${step}: ${want} is not among the offered ${type} actions: ${options.map((o) => o[1]).join(" ")}`);
    await select.selectOption(match[0]);
  } else {
    const json = await form.locator("button").getAttribute("data-json");
    if (canonical(JSON.parse(json)) !== want) fail(`step ${step}: the page offers ${json}, the script plays ${want}`);
  }
  await form.locator("button[type=submit]").click();
}

/** Fills the lobby's creation form with `game`'s ruleset, players, seed and configuration. */
async function fillCreate(page, game) {
  await page.selectOption("#create-ruleset", game.ruleset);
  await page.fill("#create-players", String(game.players));
  await page.fill("#create-seed", String(game.seed));
  for (const [name, value] of Object.entries(game.config || {})) {
    const field = page.locator(`[data-option="${name}"]`);
    if ((await field.getAttribute("type")) === "checkbox") await field.setChecked(Boolean(value));
    else await field.fill(typeof value === "object" ? JSON.stringify(value) : String(value));
  }
}

/** One person against the server's bots: created from the lobby with the other seats given to the random
 *  bot and a clock per decision; seat 0 first lets its clock run out (the random bot plays its move),
 *  then plays the first action its panel offers whenever it offers one, three times, then resigns: the
 *  bot plays its seat to the end of the game. */
async function playAgainstBots(browser, game) {
  const context = await browser.newContext({ viewport: { width: 1100, height: 900 } });
  const page = await context.newPage();
  record(page);
  await page.goto(`${plan.base}/`);
  await page.waitForSelector("#create");
  await fillCreate(page, game);
  await page.selectOption("#create-others", "random");
  await page.fill("#create-clock", String(game.seconds_per_decision));
  await page.click("#create button[type=submit]");
  await page.waitForURL(/\/game\/\d+$/, { timeout: STEP_TIMEOUT });
  const id = page.url().match(/\/game\/(\d+)$/)[1];
  // The clocks are shown, and seat 0's runs out: the bot plays for it and the game goes on.
  await page.locator("#clocks li[data-seat='0']").waitFor({ timeout: STEP_TIMEOUT });
  await page.locator("#timers [role=status]", { hasText: "p0 (you)" }).waitFor({ timeout: STEP_TIMEOUT })
    .catch(async () => fail(`against bots: no timeout shown; the clocks read ${await page.locator("#timers").innerText()}`));
  const deadline = Date.now() + 10 * STEP_TIMEOUT;
  let clicks = 0;
  page.on("dialog", (dialog) => dialog.accept());
  let resigned = false;
  while (!(await page.locator("#outcome").count())) {
    if (Date.now() > deadline) fail(`against bots: game ${id} did not end; ${clicks} clicks`);
    if (clicks >= 3 && !resigned) {
      // Resign: the seat is the bot's now, the panel says so, and the game goes on to its end.
      await page.click("#resign", { timeout: STEP_TIMEOUT });
      await page.locator("#handed").waitFor({ timeout: STEP_TIMEOUT })
        .catch(async () => fail(`against bots: resigning did not hand the seat over; the panel reads ${await page.locator("#actions").innerText()}`));
      resigned = true;
      continue;
    }
    if (resigned) {
      await page.waitForTimeout(50);
      continue;
    }
    const button = page.locator("#actions form button[type=submit]").first();
    if (!(await button.count())) {
      // The bots' turn: their moves arrive over the game's WebSocket.
      await page.waitForTimeout(20);
      continue;
    }
    const before = await page.locator("#seq").textContent();
    try {
      await button.click({ timeout: 2000 });
      clicks += 1;
      await page.waitForFunction((text) => document.getElementById("seq")?.textContent !== text
        || document.getElementById("outcome"), before, { timeout: STEP_TIMEOUT });
    } catch {
      // The panel changed under the click (a bot moved first): look again.
    }
  }
  if (!clicks) fail(`against bots: game ${id} ended without seat 0 acting`);
  if (!resigned) fail(`against bots: game ${id} ended before seat 0 could resign (${clicks} clicks)`);
  const seq = Number((await page.locator("#seq").textContent()).split(" ")[0]);
  await page.screenshot({ path: join(plan.shots, "against-bots.png"), fullPage: true });
  await context.close();
  return { ruleset: game.ruleset, game: Number(id), seq, clicks };
}

/** Undo: seat 0 creates a game from the lobby and is alone at it (nobody else acts); it plays the first
 *  action its panel offers, takes it back with the Undo button, and plays it again. */
async function playUndo(browser, game) {
  const context = await browser.newContext({ viewport: { width: 1100, height: 900 } });
  const page = await context.newPage();
  record(page);
  await page.goto(`${plan.base}/`);
  await page.waitForSelector("#create");
  await fillCreate(page, game);
  await page.click("#create button[type=submit]");
  await page.waitForURL(/\/game\/\d+$/, { timeout: STEP_TIMEOUT });
  const id = page.url().match(/\/game\/(\d+)$/)[1];
  await waitForSeq(page, 0);
  const first = page.locator("#actions form button[type=submit]").first();
  await first.waitFor({ timeout: STEP_TIMEOUT });
  if (await page.locator("#undo").count()) fail("undo: an Undo button before any action");
  const panel = await page.locator("#actions").innerText();
  await first.click();
  await waitForSeq(page, 1);
  await page.click("#undo", { timeout: STEP_TIMEOUT })
    .catch(async () => fail(`undo: no Undo button after seat 0's action; the panel reads ${await page.locator("#actions").innerText()}`));
  await waitForSeq(page, 2);
  const told = page.locator("#log li.undo .heading");
  await told.waitFor({ timeout: STEP_TIMEOUT });
  const text = await told.innerText();
  if (!/took back/.test(text)) fail(`undo: the log reads ${text}`);
  // Back where it was: the same actions offered, and nothing left to take back.
  await page.locator("#undo").waitFor({ state: "detached", timeout: STEP_TIMEOUT })
    .catch(() => fail("undo: the Undo button stays after the only action was taken back"));
  if ((await page.locator("#actions").innerText()) !== panel) fail("undo: the panel differs from before the action");
  await page.locator("#actions form button[type=submit]").first().click();
  await waitForSeq(page, 3);
  await page.screenshot({ path: join(plan.shots, "undo.png"), fullPage: true });
  await context.close();
  return { ruleset: game.ruleset, game: Number(id), seq: 3 };
}

async function playGame(browser, game, index) {
  const contexts = [];
  const newPage = async () => {
    const context = await browser.newContext({ viewport: { width: 1100, height: 900 } });
    contexts.push(context);
    const page = await context.newPage();
    return page;
  };
  // Seat 0 creates the game from the lobby's form.
  const creator = await newPage();
  const traffic = [record(creator)];
  await creator.goto(`${plan.base}/`);
  await creator.waitForSelector("#create");
  if (index === 0) await creator.screenshot({ path: join(plan.shots, "lobby.png"), fullPage: true });
  await fillCreate(creator, game);
  await creator.click("#create button[type=submit]");
  await creator.waitForURL(/\/game\/\d+$/, { timeout: STEP_TIMEOUT });
  const id = creator.url().match(/\/game\/(\d+)$/)[1];
  const pages = [creator];
  // Every other seat joins from the lobby's list of open games.
  for (let seat = 1; seat < game.players; seat += 1) {
    const page = await newPage();
    traffic.push(record(page));
    await page.goto(`${plan.base}/`);
    await page.click(`button[aria-label="Join game ${id} as seat ${seat}"]`, { timeout: STEP_TIMEOUT });
    await page.waitForURL(new RegExp(`/game/${id}$`), { timeout: STEP_TIMEOUT });
    pages.push(page);
  }
  if (game.custom_view) {
    // The ruleset's own view (`coffer serve --web-views DIR`) is drawn under the generic table.
    await creator.locator("#custom [data-custom-view]").waitFor({ timeout: STEP_TIMEOUT });
  }
  const spectator = await newPage();
  const watched = record(spectator);
  await spectator.goto(`${plan.base}/game/${id}`);
  for (const page of [...pages, spectator]) await waitForSeq(page, 0);

  const refuseAt = Math.min(3, game.script.length - 1);
  const reloadAt = Math.floor(game.script.length / 2);
  const dropAt = Math.floor(game.script.length / 3);
  for (const [i, step] of game.script.entries()) {
    const page = pages[step.player];
    await waitForSeq(page, i);
    if (i === refuseAt) {
      // Another seat plays this step's action: refused with the ruleset's reason, and nothing changes.
      const other = pages[(step.player + 1) % game.players];
      await waitForSeq(other, i);
      const before = await other.locator("#log li").count();
      await other.evaluate((action) => window.coffer.submit(action), step.action);
      const refusal = other.locator("#refusal");
      await refusal.waitFor({ timeout: STEP_TIMEOUT });
      const text = (await refusal.innerText()).trim();
      if (!text || /\{|Refus|Error|Owner\(/.test(text)) fail(`refusal not in words: ${text}`);
      await waitForSeq(other, i);
      if ((await other.locator("#log li").count()) !== before) fail("a refused action changed the log");
      console.error(`${game.ruleset}: refused as expected: ${text}`);
    }
    if (i === reloadAt) {
      // A reload mid-game resumes at the same state: the same sequence, the same log.
      const log = await page.locator("#log").innerText();
      await page.reload();
      await waitForSeq(page, i);
      if ((await page.locator("#log").innerText()) !== log) fail(`${game.ruleset}: the log differs after a reload`);
    }
    if (i === dropAt) {
      // Dropped connections: the spectator's and another seat's; both resume with what they missed.
      await spectator.evaluate(() => window.coffer.drop());
      await pages[(step.player + 1) % game.players].evaluate(() => window.coffer.drop());
    }
    await click(page, step.action, i + 1);
    await waitForSeq(page, i + 1);
  }
  const seq = game.script.length;
  for (const page of [...pages, spectator]) {
    await waitForSeq(page, seq);
    await page.locator("#outcome").waitFor({ timeout: STEP_TIMEOUT });
  }
  for (const page of [...pages, spectator]) {
    // Every action once, in order, whatever was dropped or reloaded on the way.
    const seqs = await page.locator("#log > li").evaluateAll((els) => els.map((e) => Number(e.dataset.seq)));
    if (seqs.length !== seq || seqs.some((s, i) => s !== i + 1)) fail(`${game.ruleset}: the log of ${page.url()} is ${seqs.join(",")}`);
  }
  const short = game.ruleset.split("@")[0];
  await pages[0].screenshot({ path: join(plan.shots, `${short}-seat0.png`), fullPage: true });
  await spectator.screenshot({ path: join(plan.shots, `${short}-spectator.png`), fullPage: true });
  // Readable at phone width: nothing wider than the window.
  await spectator.setViewportSize({ width: 390, height: 844 });
  const overflow = await spectator.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  if (overflow > 1) fail(`${game.ruleset}: the page is ${overflow} px wider than a 390 px window`);
  await spectator.screenshot({ path: join(plan.shots, `${short}-phone.png`) });

  // The spectator's traffic holds none of the seats' hidden state; the seats' traffic does hold it, so
  // the check would see a leak.
  for (const pattern of game.hidden || []) {
    const re = new RegExp(pattern);
    const leak = watched.find((text) => re.test(text));
    if (leak) fail(`${game.ruleset}: the spectator received hidden state /${pattern}/: ${leak.slice(0, 300)}`);
    if (!traffic.flat().some((text) => re.test(text))) fail(`${game.ruleset}: no seat ever received /${pattern}/: the check proves nothing`);
  }
  for (const context of contexts) await context.close();
  return { ruleset: game.ruleset, game: Number(id), seq };
}

const browser = await chromium.launch({ executablePath: plan.browser, args: ["--no-sandbox"] });
try {
  mkdirSync(plan.shots, { recursive: true });
  for (const [index, game] of plan.games.entries()) {
    const started = Date.now();
    const result = await playGame(browser, game, index);
    console.error(`${game.ruleset}: ${result.seq} actions clicked in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    console.log(JSON.stringify(result));
  }
  if (plan.undo) {
    const result = await playUndo(browser, plan.undo);
    console.error(`${result.ruleset}: an action taken back and played again`);
    console.log(JSON.stringify(result));
  }
  if (plan.against_bots) {
    const started = Date.now();
    const result = await playAgainstBots(browser, plan.against_bots);
    console.error(`${result.ruleset}: against bots, ${result.seq} actions (${result.clicks} clicked) in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    console.log(JSON.stringify(result));
  }
} finally {
  await browser.close();
}
