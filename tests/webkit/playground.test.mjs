// The playground (static/index.html + playground.wasm) in WebKit
// (WebKitGTK's MiniBrowser), driven as a person would: the scripted
// model's task with its two approvals, cut off by a reload while an
// approval waits (the session is listed, reopened, and the task carries
// over), run_js in its sandboxed frame's Worker, Stop during an approval,
// a session exported and imported again; with WebKitGTK's defaults (no
// navigator.storage: the workspace is in memory, and the page says so) and
// with Safari's storage features turned on (the origin private file
// system, its files kept across a reload).
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { explain, launch } from "./harness.mjs";

const RUN = 60_000; // bound of one playground run
const PAGE = "/static/?pace=0"; // the scripted model streams at once

const idle = (b) => b.waitFor(() => document.body.dataset.state === "idle", [], RUN, "the playground to be idle");
const texts = (b, sel) => b.eval((s) => [...document.querySelectorAll(s)].map((e) => e.innerText), [sel]);
const lastText = async (b, sel) => (await texts(b, sel)).at(-1);
const lastReply = (b) => lastText(b, '#transcript > .msg.text[data-kind="text"] .body');
const banner = (b) => b.eval(() => { const e = document.getElementById("error"); return e.hidden ? "" : e.innerText; });

/** Sends a prompt; returns once the run has started (its prompt is shown). */
async function send(b, prompt) {
  await idle(b);
  const n = (await texts(b, "#transcript > .msg.prompt")).length;
  await b.type("#prompt", prompt + "\uE007"); // Enter
  await b.waitFor((n) => document.querySelectorAll("#transcript > .msg.prompt").length > n, [n], RUN, `the prompt ${JSON.stringify(prompt)} shown`);
}

/**
 * Presses the decision button of the last approval card of tool, once the
 * page is still, and returns once the card no longer asks. The button is
 * brought into view first, then clicked where it has stayed for two looks
 * with no tool of the run running (its output, drawn above the card, moves
 * it): WebDriver scrolled a button out of view into it itself and pressed
 * at once, the page then followed its end, and the mouse went up on the
 * transcript, not the button (no click), leaving the run waiting on the
 * approval to the end of the test.
 */
async function decide(b, tool, decision) {
  await b.clickWhere(
    (tool, decision) => {
      // The button found is marked (data-pressed), to wait for its card to stop asking.
      for (const e of document.querySelectorAll("[data-pressed]")) delete e.dataset.pressed;
      const button = [...document.querySelectorAll("#transcript > .card.ask")]
        .filter((c) => c.querySelector(".tool-name")?.textContent === tool)
        .pop()
        ?.querySelector(`button[data-decision="${decision}"]`);
      const busy = [...document.querySelectorAll("#transcript > .card .badge.status")].some((e) => ["running", "started"].includes(e.textContent));
      if (!button || busy) return (window.lastButtonRect = null);
      const view = document.getElementById("transcript").getBoundingClientRect();
      const r = button.getBoundingClientRect();
      if (r.top < view.top || r.bottom > view.bottom) {
        button.scrollIntoView({ block: "center" });
        return (window.lastButtonRect = null);
      }
      const at = [r.x, r.y, r.width, r.height].join();
      const still = window.lastButtonRect === at;
      window.lastButtonRect = at;
      if (!still) return null;
      button.dataset.pressed = "";
      return button;
    },
    [tool, decision],
    RUN,
    `the ${decision} button of ${tool}, still`,
  );
  await b.waitFor(() => document.querySelector("#transcript > .card.ask [data-pressed]") === null, [], RUN, `the ${decision} of ${tool} taken`);
}

/**
 * Waits until tool's approval card asks. The card just decided keeps its
 * class "ask" until the page draws again, so a wait for any asking card
 * right after a decision could end on that one.
 */
const asking = (b, tool) =>
  b.waitFor(
    (tool) => [...document.querySelectorAll("#transcript > .card.ask .tool-name")].some((e) => e.textContent === tool),
    [tool],
    RUN,
    `the approval of ${tool}`,
  );

/** Waits until the session's row in IndexedDB names its first prompt (its first records are committed). */
function storedPrompt(b, id) {
  return b.waitFor(
    (id) =>
      new Promise((resolve) => {
        const req = indexedDB.open("floe-playground");
        req.onerror = () => resolve(false);
        req.onsuccess = () => {
          const db = req.result;
          try {
            const get = db.transaction("sessions").objectStore("sessions").get(id);
            get.onsuccess = () => (db.close(), resolve(Boolean(get.result && get.result[1])));
            get.onerror = () => (db.close(), resolve(false));
          } catch {
            db.close();
            resolve(false);
          }
        };
      }),
    [id],
    RUN,
    `the session ${id} stored`,
  );
}

/** The row of session id in the sessions list. */
const row = (id) => `#sessions li[data-session-id="${id}"]`;

async function tour(t, b) {
  await b.setSize(1280, 860);
  await b.goto(PAGE);
  await idle(b);
  const id = await b.eval(() => document.querySelector("#session-id").textContent);
  assert.match(id, /^session-\d{4}(-\d\d){5}-[0-9a-f]{8}$/);
  assert.match(await b.eval(() => document.querySelector("#model-label").textContent), /scripted demo/);

  // A reload while an approval waits: the session is reopened from
  // IndexedDB and the cut-off task carries over to the next prompt.
  await send(b, "How long is store.go?");
  await decide(b, "list_files", "allow");
  await asking(b, "count_lines");
  await storedPrompt(b, id); // records reach IndexedDB in batches, off the run's path
  await b.reload();
  await idle(b);
  assert.equal(await b.eval(() => document.querySelector("#session-id").textContent), id, "the page did not reopen the session");
  const rows = await texts(b, "#sessions li");
  assert.equal(rows.length, 1, `sessions listed: ${JSON.stringify(rows)}`);
  assert.match(rows[0], /How long is store\.go\?/);
  assert.match((await texts(b, "#transcript > .notice")).join("\n"), /Resumed from storage: \d+ records\. The last task was cut off/);
  await send(b, "Continue, please.");
  await decide(b, "list_files", "allow");
  await decide(b, "count_lines", "allow");
  await idle(b);
  assert.match(await lastReply(b), /add up to \d+ lines/);

  // run_js: the sandboxed frame (an opaque origin) and its Worker.
  await send(b, "js: console.log('hi', 1 + 1); [1, 2, 3].map((x) => x * 2)");
  await decide(b, "run_js", "allow");
  await idle(b);
  assert.equal(await lastText(b, "#transcript > .card .output"), "hi 2\nresult: [2,4,6]\n");

  // Stop while an approval waits.
  await send(b, "What is in this project?");
  await decide(b, "list_files", "allow");
  await asking(b, "count_lines");
  await b.click("#stop");
  await idle(b);
  assert.match(await lastText(b, "#transcript > .notice"), /Run aborted: aborted by user/);
  assert.equal((await texts(b, ".card.ask")).length, 0, "approval buttons left after Stop");

  // Export: the page's download link is caught, and the Blob its blob:
  // URL was made of read (the page's Content-Security-Policy allows no
  // fetch of a blob: URL).
  await b.eval(() => {
    window.exported = [];
    const blobs = new Map();
    const make = URL.createObjectURL;
    URL.createObjectURL = (blob) => {
      const url = make(blob);
      blobs.set(url, blob);
      return url;
    };
    const click = HTMLAnchorElement.prototype.click;
    HTMLAnchorElement.prototype.click = function () {
      if (!this.download || !blobs.has(this.href)) return click.call(this);
      const name = this.download;
      window.exported.push(blobs.get(this.href).text().then((text) => ({ name, text })));
    };
  });
  await b.click(`${row(id)} [data-do="export"]`);
  await b.waitFor((id) => document.getElementById("note").innerText.includes(`Exported ${id} (1 file(s)).`), [id], RUN, "the export's note");
  const files = await b.eval(() => Promise.all(window.exported));
  assert.deepEqual(files.map((f) => f.name), [`${id}_001.jsonl`]);
  const lines = files[0].text.trim().split("\n").map((l) => JSON.parse(l));
  assert.equal(lines[0].type, "session_meta");
  assert.ok(lines.some((r) => r.payload?.type === "tool_call" && r.payload.name === "run_js"), "the export lacks the run_js call");

  // Deleted, then imported again from the file through the file input.
  await b.click(`${row(id)} [data-do="ask-delete"]`);
  await b.click(`${row(id)} [data-do="delete"]`);
  await b.waitFor((id) => document.getElementById("note").innerText.includes(`Deleted ${id}.`), [id], RUN, "the delete's note");
  const dir = await mkdtemp(join(tmpdir(), "floe-webkit-export-"));
  t.after(() => rm(dir, { recursive: true, force: true }));
  await writeFile(join(dir, files[0].name), files[0].text);
  await b.type("#import", join(dir, files[0].name));
  await b.waitFor((id) => document.getElementById("note").innerText.includes(`Imported ${id}.`), [id], RUN, "the import's note");
  await b.click(`${row(id)} [data-do="open"]`);
  await b.waitFor(() => [...document.querySelectorAll("#transcript > .notice")].some((n) => n.innerText.includes("Resumed from storage")), [], RUN, "the imported session reopened");
  assert.equal(await b.eval(() => document.querySelector("#session-id").textContent), id);
  assert.equal(await banner(b), "", "the page shows an error");
}

test("playground: approvals; a reload mid-task reopens the session and carries the task over; run_js; Stop; export and import", { timeout: 180_000 }, async (t) => {
  const b = await launch(t);
  try {
    await tour(t, b);
    // WebKitGTK offers no navigator.storage: the workspace is in memory, and the page says so.
    assert.equal(await b.eval(() => typeof navigator.storage), "undefined");
    assert.equal(await b.eval(() => document.querySelector("#tab-files").innerText), "Files · in memory");
  } catch (e) {
    e.message += explain(b.log);
    throw e;
  }
});
