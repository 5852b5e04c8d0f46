// Opens the built book from disk (file://) in Debian's Chromium and checks every trace player:
// for each recorded schedule it jumps to the race and compares what the page highlights (the
// memory cell, the two threads, the two `.cu` lines, the checker's text) with the trace itself and
// with the kernel's `// BUG:` line; it checks the keyboard controls, stepping back, and that the
// page reads at 1280 px and at phone width; it saves screenshots.
//
//   mdbook build book && (cd book/tests && npm ci && node players.mjs)
//
// Environment: CHROMIUM (default /usr/bin/chromium), SCREENSHOTS (default
// target/racetrack/book-screenshots).

import { chromium } from 'playwright-core';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import vm from 'node:vm';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..', '..');
const built = path.join(root, 'book', 'book');
const screenshots = path.resolve(root, process.env.SCREENSHOTS || 'target/racetrack/book-screenshots');
const executablePath = process.env.CHROMIUM || '/usr/bin/chromium';
const WIDTHS = [
  { name: 'desktop', width: 1280, height: 900 },
  { name: 'phone', width: 390, height: 844 },
];

let passed = 0;
let failed = 0;
const failures = [];

function check(name, condition, detail) {
  if (condition) {
    passed++;
  } else {
    failed++;
    failures.push(name + (detail ? ': ' + detail : ''));
    console.log('FAIL ' + name + (detail ? ': ' + detail : ''));
  }
}

// The trace a player file registers, read the way the page reads it.
function loadTrace(file) {
  const sandbox = { window: {} };
  vm.runInNewContext(fs.readFileSync(file, 'utf8'), sandbox, { filename: file });
  const key = path.basename(file, '.js');
  const trace = sandbox.window.racetrackTraces && sandbox.window.racetrackTraces[key];
  if (!trace) throw new Error(file + ' registers no trace named ' + key);
  return { key, trace };
}

function bugLines(kernelFile) {
  const full = path.join(root, kernelFile);
  if (!fs.existsSync(full)) return [];
  return fs.readFileSync(full, 'utf8').split('\n').flatMap((text, i) => (text.includes('// BUG:') ? [i + 1] : []));
}

function threadOf(trace, access) {
  const event = trace.events[access.event];
  const warp = trace.warps[event.warp];
  const [bx, by, bz] = trace.launch.block;
  return warp.block * bx * by * bz + warp.first_thread + access.lane;
}

// Pages of the built book that hold a player, and the fixture page with the hand-made trace.
function playerPages() {
  const pages = [];
  if (fs.existsSync(built)) {
    for (const name of fs.readdirSync(built).sort()) {
      if (!name.endsWith('.html') || name === 'print.html') continue;
      const html = fs.readFileSync(path.join(built, name), 'utf8');
      if (html.includes('class="rt-player"')) pages.push({ name, file: path.join(built, name), dir: built });
    }
  }
  const fixtures = path.join(here, 'fixtures');
  pages.push({ name: 'fixture-player.html', file: path.join(fixtures, 'player.html'), dir: fixtures });
  return pages;
}

async function playerTraces(page, index, dir) {
  const attr = await page.locator('.rt-player').nth(index).getAttribute('data-traces');
  return attr.split(/\s+/).filter(Boolean).map((p) => loadTrace(path.join(dir, p)));
}

async function checkRace(page, player, label, trace) {
  const findings = trace.findings || [];
  const jump = player.locator('.rt-jump-race');
  if (!findings.length) {
    check(label + ': no finding, so nothing to jump to', await jump.isDisabled());
    if (trace.events.some((e) => e.access && e.access.op === 'atomic')) {
      await player.focus();
      await page.keyboard.press('a');
      const now = await player.locator('.rt-now-text').textContent();
      check(label + ': A steps to the next atomic', / atomic /.test(now), now);
    }
    return;
  }
  const bugs = bugLines(trace.kernel.file);
  if (bugs.length && findings.some((f) => f.kind === 'race')) {
    check(label + ': a race names the // BUG: line', findings.some((f) => f.accesses.some((a) => bugs.includes(a.line))), 'BUG at ' + bugs);
  }
  // The keyboard's way in: focus the player, press R, once per finding.
  for (let i = 0; i < findings.length; i++) {
    await player.focus();
    await page.keyboard.press('r');
    await checkFinding(player, label + ' finding ' + (i + 1), trace, findings[i]);
  }
  // One more R comes back to the first.
  await player.focus();
  await page.keyboard.press('r');
  await checkFinding(player, label + ' finding 1 again', trace, findings[0]);
}

async function checkFinding(player, label, trace, finding) {
  const summary = player.locator('.rt-race-summary');
  check(label + ': the race view opens', (await summary.count()) === 1);
  if ((await summary.count()) !== 1) return;
  const accesses = finding.accesses;
  const lineA = accesses.length > 1 ? String(accesses[0].line) : null;
  const lineB = String(accesses[accesses.length - 1].line);
  check(label + ': first access line', (await summary.getAttribute('data-line-a')) === lineA, await summary.getAttribute('data-line-a'));
  check(label + ': second access line', (await summary.getAttribute('data-line-b')) === lineB, await summary.getAttribute('data-line-b'));
  const lineTags = await player.locator('tr.rt-line.rt-race-a, tr.rt-line.rt-race-b').evaluateAll((nodes) => nodes.map((n) => n.dataset.line));
  check(label + ': both lines highlighted in the source', accesses.every((a) => lineTags.includes(String(a.line))), 'highlighted ' + lineTags);
  const text = await player.locator('.rt-finding-text').textContent();
  check(label + ': the finding text is the checker\'s', text === finding.text, JSON.stringify(text).slice(0, 120));
  if (finding.location) {
    const cells = await player.locator('.rt-cell.rt-race-cell').evaluateAll((nodes) => nodes.map((n) => n.dataset.array + ':' + n.dataset.index));
    check(label + ': the raced cell is highlighted', cells.length === 1 && cells[0] === finding.location.array + ':' + finding.location.index, 'highlighted ' + cells);
  }
  const tagged = await player.locator('.rt-lane.rt-race-a, .rt-lane.rt-race-b').evaluateAll((nodes) => nodes.map((n) => Number(n.dataset.thread)));
  const threads = accesses.map((a) => threadOf(trace, a));
  check(label + ': both threads highlighted in the lanes', threads.every((t) => tagged.includes(t)), 'want ' + threads + ', got ' + tagged);
}

async function checkKeyboard(page, player, label) {
  const url = page.url();
  await player.focus();
  await page.keyboard.press('Home');
  const start = await player.locator('.rt-position').textContent();
  const memoryBefore = await player.locator('.rt-memory').textContent();
  for (let i = 0; i < 6; i++) await page.keyboard.press('ArrowRight');
  const moved = await player.locator('.rt-position').textContent();
  check(label + ': → steps', moved !== start, moved);
  check(label + ': → does not turn the page', page.url() === url, page.url());
  for (let i = 0; i < 6; i++) await page.keyboard.press('ArrowLeft');
  check(label + ': ← steps back to the start', (await player.locator('.rt-position').textContent()) === start);
  check(label + ': stepping back restores memory', (await player.locator('.rt-memory').textContent()) === memoryBefore);
  await page.keyboard.press(' ');
  check(label + ': space plays', await player.evaluate((n) => n.classList.contains('rt-playing')));
  await page.keyboard.press(' ');
  check(label + ': space pauses', !(await player.evaluate((n) => n.classList.contains('rt-playing'))));
  await page.keyboard.press('Tab');
  const focusInside = await player.evaluate((n) => n.contains(document.activeElement) && document.activeElement !== n);
  check(label + ': Tab reaches the controls', focusInside);
  await player.focus();
  await page.keyboard.press('End');
  check(label + ': End goes to the end', /^step (\d+) of \1$/.test(await player.locator('.rt-position').textContent()));
  await page.keyboard.press('Home');
}

async function checkLayout(page, player, label, size) {
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  check(label + ': no sideways scrolling of the page', overflow <= 1, overflow + ' px too wide');
  const box = await player.boundingBox();
  check(label + ': the player fits the window', box && box.x >= 0 && box.x + box.width <= size.width + 1, JSON.stringify(box));
  for (const control of ['.rt-step', '.rt-back', '.rt-play', '.rt-jump-race']) {
    const b = await player.locator(control).boundingBox();
    check(label + ': ' + control + ' is on screen', b && b.width > 20 && b.x >= 0 && b.x + b.width <= size.width, JSON.stringify(b));
  }
  const fontPx = await player.locator('.rt-text').first().evaluate((n) => parseFloat(getComputedStyle(n).fontSize));
  check(label + ': source text is readable (>= 10 px)', fontPx >= 10, fontPx + ' px');
}

async function main() {
  const pages = playerPages();
  if (pages.length < 2) console.log('note: the built book has no player pages (run `mdbook build book` first)');
  fs.mkdirSync(screenshots, { recursive: true });
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'racetrack-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  try {
    for (const size of WIDTHS) {
      for (const entry of pages) {
        const page = await context.newPage();
        await page.setViewportSize({ width: size.width, height: size.height });
        const errors = [];
        page.on('pageerror', (error) => errors.push(String(error)));
        page.on('console', (msg) => { if (msg.type() === 'error') errors.push(msg.text()); });
        await page.goto(pathToFileURL(entry.file).href);
        // The book's menu bar sticks to the top of the window; in screenshots of a player taller
        // than the window it would hide the player's first rows.
        await page.addStyleTag({ content: '#mdbook-menu-bar, #menu-bar { position: static !important; }' });
        await page.waitForSelector('.rt-player.rt-ready, .rt-player.rt-error', { timeout: 15000 });
        const count = await page.locator('.rt-player').count();
        for (let i = 0; i < count; i++) {
          const player = page.locator('.rt-player').nth(i);
          const traces = await playerTraces(page, i, entry.dir);
          const base = entry.name + ' player ' + (i + 1) + ' (' + size.name + ')';
          check(base + ': starts', await player.evaluate((n) => n.classList.contains('rt-ready')), await player.textContent());
          const select = player.locator('.rt-schedule');
          for (let t = 0; t < traces.length; t++) {
            const { key, trace } = traces[t];
            const label = base + ' ' + key;
            if (traces.length > 1) await select.selectOption(String(t));
            check(label + ': shows the chosen trace', (await player.getAttribute('data-trace')) === key);
            check(label + ': one lane per thread', (await player.locator('.rt-lane[data-thread]').count()) === trace.warps.reduce((n, w) => n + w.lanes, 0));
            if (size.name === 'desktop') await checkRace(page, player, label, trace);
            else if ((trace.findings || []).length) {
              await player.focus();
              await page.keyboard.press('r');
            }
            await player.scrollIntoViewIfNeeded();
            await checkLayout(page, player, label, size);
            await player.screenshot({ path: path.join(screenshots, key + '.' + size.name + '.png') });
          }
          if (size.name === 'desktop') await checkKeyboard(page, player, base);
        }
        check(entry.name + ' (' + size.name + '): no script errors', errors.length === 0, errors.join(' | '));
        await page.close();
      }
    }
  } finally {
    await context.close();
    fs.rmSync(profile, { recursive: true, force: true });
  }
  console.log('screenshots in ' + path.relative(root, screenshots));
  if (failures.length) console.log('failures:\n  ' + failures.join('\n  '));
  console.log('players: ' + passed + ' passed, ' + failed + ' failed');
  process.exit(failed ? 1 : 0);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
