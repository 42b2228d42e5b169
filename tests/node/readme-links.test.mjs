// Every Markdown link of README.md and docs/*.md resolves: a relative
// link names a file (or a folder) the repository tracks, and an anchor,
// in the page or in another Markdown file, is the slug GitHub gives one of
// the target's headings: the heading's text lower-cased, its punctuation
// but hyphens and underscores dropped, each space a hyphen, a repeated
// slug numbered -1, -2 …. Needs git and nothing built.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { posix } from "node:path";

const root = fileURLToPath(new URL("../../", import.meta.url));
const tracked = execFileSync("git", ["ls-files", "-z"], { cwd: root, encoding: "utf8" }).split("\0").filter(Boolean);
const trackedSet = new Set(tracked);
const docs = tracked.filter((f) => f === "README.md" || /^docs\/[^/]+\.md$/.test(f));

const blank = (s) => s.replace(/[^\n]/g, " ");

/** Blanks fenced code blocks (``` and ~~~), keeping line breaks. */
function withoutFences(text) {
  return text.replace(/^ {0,3}(`{3,}|~{3,})[^\n]*\n[\s\S]*?^ {0,3}\1[`~]*[ \t]*$/gm, blank);
}

/** Blanks fenced code blocks and inline code spans, keeping line breaks. */
export function withoutCode(text) {
  return withoutFences(text).replace(/(`+)(?!`)[\s\S]*?[^`]\1(?!`)/g, blank);
}

/** The text GitHub shows for a heading's Markdown: links as their text, code without its ticks, no tags or emphasis marks. */
function headingText(md) {
  return md
    .replace(/\s+#+\s*$/, "") // a closing sequence
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/<[^>]+>/g, "")
    .replace(/`/g, "")
    .replace(/(^|[^\p{L}\p{N}])_+|_+(?=[^\p{L}\p{N}]|$)/gu, "$1") // _emphasis_, not snake_case
    .trim();
}

/** GitHub's slug of a heading's text (github-slugger). */
export function slug(text) {
  return text.toLowerCase().replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, "").replace(/ /g, "-");
}

/** The anchors of a Markdown text: each heading's slug, numbered when repeated, and explicit <a id|name>. */
export function anchors(text) {
  const out = new Set();
  const seen = new Map();
  const plain = withoutFences(text);
  for (const [, h] of plain.matchAll(/^ {0,3}#{1,6}[ \t]+(.+?)[ \t]*$/gm)) {
    let s = slug(headingText(h));
    const base = s;
    for (let n = seen.get(base) ?? 0; ; n++) {
      s = n === 0 ? base : `${base}-${n}`;
      if (!out.has(s)) {
        seen.set(base, n + 1);
        break;
      }
    }
    out.add(s);
  }
  for (const [, h] of plain.matchAll(/^(?! {0,3}[#>*+-])(\S.*)\n {0,3}(=+|-+)[ \t]*$/gm)) out.add(slug(headingText(h))); // setext
  for (const [, id] of plain.matchAll(/<a\s[^>]*\b(?:id|name)="([^"]+)"/g)) out.add(id);
  return out;
}

/** Every link target of a Markdown text with its line: inline links and images, reference definitions, HTML href/src. */
export function links(text) {
  const plain = withoutCode(text);
  const lineOf = (i) => plain.slice(0, i).split("\n").length;
  const out = [];
  for (const m of plain.matchAll(/\]\(\s*(<[^>]*>|[^)\s]+)(?:\s+(?:"[^"]*"|'[^']*'))?\s*\)/g)) {
    out.push({ target: m[1].replace(/^<|>$/g, ""), line: lineOf(m.index) });
  }
  for (const m of plain.matchAll(/^ {0,3}\[[^\]]+\]:\s*(\S+)/gm)) out.push({ target: m[1].replace(/^<|>$/g, ""), line: lineOf(m.index) });
  for (const m of plain.matchAll(/\b(?:href|src)="([^"]+)"/g)) out.push({ target: m[1], line: lineOf(m.index) });
  return out;
}

/** What is wrong with one link of file, or "" when it resolves. */
export function check(file, target, read = (f) => readFileSync(root + f, "utf8"), files = trackedSet) {
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return ""; // https:, mailto:
  if (target.startsWith("//")) return `${target}: a scheme-relative URL`;
  const hash = target.indexOf("#");
  const path = decodeURI(hash < 0 ? target : target.slice(0, hash));
  const anchor = hash < 0 ? undefined : decodeURIComponent(target.slice(hash + 1));
  let resolved = file;
  if (path !== "") {
    if (path.startsWith("/")) return `${target}: an absolute path (GitHub resolves it against the host, not the repository)`;
    resolved = posix.normalize(posix.join(posix.dirname(file), path)).replace(/\/$/, "");
    if (resolved.startsWith("../")) return `${target}: outside the repository`;
    const isDir = [...files].some((f) => f.startsWith(resolved + "/"));
    if (!files.has(resolved) && !isDir) return `${target}: ${resolved} is not a file of the repository`;
    if (isDir && anchor !== undefined) return `${target}: an anchor into a folder`;
  }
  if (anchor === undefined) return "";
  if (!/\.md$/i.test(resolved)) return "";
  if (!anchors(read(resolved)).has(anchor)) return `${target}: ${resolved} has no heading whose anchor is #${anchor}`;
  return "";
}

test("GitHub's slugs of the headings this repository writes", () => {
  const a = anchors("# Floe\n## Testing: `floe/test`\n## Where Floe stood: the README's account\n## A, b\n## A, b\n```\n# not a heading\n```\n## snake_case and _emphasis_\n## How a message crosses, in detail ##\n");
  assert.deepEqual([...a], ["floe", "testing-floetest", "where-floe-stood-the-readmes-account", "a-b", "a-b-1", "snake_case-and-emphasis", "how-a-message-crosses-in-detail"]);
  assert.equal(slug("Sessions over the network"), "sessions-over-the-network");
  assert.equal(slug("On Cloudflare: one Durable Object per session"), "on-cloudflare-one-durable-object-per-session");
});

test("a broken link, a missing file and a heading that is not there are each named", () => {
  const files = new Set(["README.md", "docs/a.md", "examples/x/index.html"]);
  const read = (f) => ({ "README.md": "# Floe\n## Go\n", "docs/a.md": "# A\n## Two words\n" })[f];
  assert.equal(check("README.md", "#go", read, files), "");
  assert.equal(check("README.md", "docs/a.md#two-words", read, files), "");
  assert.equal(check("docs/a.md", "../README.md#floe", read, files), "");
  assert.equal(check("README.md", "examples/x", read, files), "");
  assert.equal(check("README.md", "https://example.com/#nothing", read, files), "");
  assert.match(check("README.md", "#golang", read, files), /README\.md has no heading whose anchor is #golang/);
  assert.match(check("README.md", "docs/a.md#two_words", read, files), /docs\/a\.md has no heading/);
  assert.match(check("README.md", "docs/b.md", read, files), /docs\/b\.md is not a file of the repository/);
  assert.match(check("docs/a.md", "../../shared/x.md", read, files), /outside the repository/);
  assert.match(check("README.md", "/docs/a.md", read, files), /an absolute path/);
  const found = links("See [a](docs/a.md), [b\nc](#go \"title\"), ![i](<docs/p.png>), `[not](code.md)`.\n```\n[no](no.md)\n```\n[ref]: docs/r.md\n<img src=\"x.png\">\n");
  assert.deepEqual(found.map((l) => [l.target, l.line]), [["docs/a.md", 1], ["#go", 2], ["docs/p.png", 2], ["docs/r.md", 6], ["x.png", 7]]);
});

test("every link of README.md and docs/*.md resolves to a tracked file and a heading", () => {
  assert.ok(docs.includes("README.md"), "README.md is not tracked");
  const problems = [];
  let checked = 0;
  for (const file of docs) {
    for (const { target, line } of links(readFileSync(root + file, "utf8"))) {
      const problem = check(file, target);
      if (problem) problems.push(`${file}:${line}: ${problem}`);
      checked++;
    }
  }
  assert.deepEqual(problems, []);
  assert.ok(checked >= 15, `only ${checked} links found: is the link pattern still right?`);
});

/** The headings of a Markdown text whose slug an earlier heading has: a link to the slug reaches only the first. */
export function repeatedHeadings(text) {
  const seen = new Set();
  const out = [];
  for (const [, h] of withoutFences(text).matchAll(/^ {0,3}#{1,6}[ \t]+(.+?)[ \t]*$/gm)) {
    const s = slug(headingText(h));
    if (seen.has(s)) out.push(h);
    seen.add(s);
  }
  return out;
}

test("no two headings of README.md or docs/*.md share an anchor (a link to it reached only the first)", () => {
  assert.deepEqual(repeatedHeadings("# A\n## Models\n### Models\n```\n# Models\n```\n"), ["Models"]);
  const problems = docs.flatMap((file) => repeatedHeadings(readFileSync(root + file, "utf8")).map((h) => `${file}: "${h}" is a heading twice`));
  assert.deepEqual(problems, []);
});
