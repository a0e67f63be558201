// Opens a chaos run's index and every report it links to in headless
// Chromium, driven over the DevTools protocol on a pipe (no npm package, no
// network), and checks what a reader sees:
//   - no script error: no exception, no console or log error;
//   - the index: per run the scenario's one-line description, the expected
//     violations, the result and a report link;
//   - each report: the two-line narrative, the expected-verdict line, the
//     timeline with node rows that hold something, the counter chart; a
//     stale write marked and linked to its read when C8 (lost update) was
//     violated; shading where holders overlap when C3 (exclusion) was;
//   - no two labels' boxes overlap (getBoundingClientRect), each label
//     drawn in a bar lies inside it, and no page is wider than the window;
// and writes a full-page PNG of each page into the output directory (and
// of each report's timeline alone, <name>-timeline.png).
//
//   node report_browser_check.mjs <chromium> <index.html> <screenshot dir>
//
// Prints one line per page and "N passed, N failed" at the end; exits 1
// when a page failed.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const [chromium, indexPath, screenshotDir] = process.argv.slice(2);
if (!chromium || !indexPath || !screenshotDir) {
  console.error('usage: report_browser_check.mjs <chromium> <index.html> <screenshot dir>');
  process.exit(2);
}
const kStepTimeoutMs = 30000;
const kWholeTimeoutMs = 150000;
setTimeout(() => {
  console.error('report_browser_check: gave up after ' + kWholeTimeoutMs + ' ms');
  process.exit(1);
}, kWholeTimeoutMs).unref();

// ------------------------------------------------------------ the browser
const profile = mkdtempSync(join(tmpdir(), 'redlock-report-check-'));
const browser = spawn(chromium, [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
  '--hide-scrollbars', '--force-device-scale-factor=1', `--user-data-dir=${profile}`,
  '--remote-debugging-pipe', 'about:blank',
], { stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'] });
let browserLog = '';
browser.stderr.on('data', (chunk) => { browserLog = (browserLog + chunk).slice(-4000); });
const toBrowser = browser.stdio[3];
const fromBrowser = browser.stdio[4];

let nextId = 1;
const pending = new Map();
const listeners = [];
let buffered = Buffer.alloc(0);
fromBrowser.on('data', (chunk) => {
  buffered = Buffer.concat([buffered, chunk]);
  let end;
  while ((end = buffered.indexOf(0)) !== -1) {
    const message = JSON.parse(buffered.subarray(0, end).toString('utf8'));
    buffered = buffered.subarray(end + 1);
    if (message.id !== undefined && pending.has(message.id)) {
      const { resolve: done, reject, method } = pending.get(message.id);
      pending.delete(message.id);
      if (message.error) reject(new Error(`${method}: ${message.error.message}`));
      else done(message.result);
    } else if (message.method) {
      for (const listener of listeners) listener(message);
    }
  }
});
browser.on('exit', (code) => {
  for (const { reject, method } of pending.values()) {
    reject(new Error(`${method}: chromium exited (${code}): ${browserLog}`));
  }
  pending.clear();
});

function send(method, params = {}, sessionId = undefined) {
  const id = nextId++;
  const message = { id, method, params };
  if (sessionId) message.sessionId = sessionId;
  return new Promise((done, reject) => {
    const timer = setTimeout(() => reject(new Error(`${method}: no answer`)), kStepTimeoutMs);
    pending.set(id, {
      resolve: (result) => { clearTimeout(timer); done(result); },
      reject: (error) => { clearTimeout(timer); reject(error); },
      method,
    });
    toBrowser.write(JSON.stringify(message) + '\0');
  });
}

function once(method, sessionId) {
  return new Promise((done, reject) => {
    const timer = setTimeout(() => reject(new Error(`${method}: did not come`)), kStepTimeoutMs);
    const listener = (message) => {
      if (message.method !== method || message.sessionId !== sessionId) return;
      listeners.splice(listeners.indexOf(listener), 1);
      clearTimeout(timer);
      done(message.params);
    };
    listeners.push(listener);
  });
}

// ------------------------------------------------------ checks in the page
// Runs inside the page; returns { failures: [...], facts: {...} }.
function checkPage() {
  const failures = [];
  const facts = {};
  const text = (selector) => (document.querySelector(selector)?.textContent ?? '').trim();
  const count = (selector) => document.querySelectorAll(selector).length;

  // Labels: any two <text> of one SVG whose boxes overlap by more than a
  // sliver, and bar labels that run out of their bar.
  let labels = 0;
  for (const svg of document.querySelectorAll('svg')) {
    const boxes = [...svg.querySelectorAll('text')].map((element) => ({
      element, box: element.getBoundingClientRect(),
    })).filter(({ box }) => box.width > 0 && box.height > 0);
    labels += boxes.length;
    for (let i = 0; i < boxes.length; ++i) {
      for (let j = i + 1; j < boxes.length; ++j) {
        const a = boxes[i].box;
        const b = boxes[j].box;
        const w = Math.min(a.right, b.right) - Math.max(a.left, b.left);
        const h = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
        if (w > 1 && h > 1) {
          failures.push(`labels overlap: "${boxes[i].element.textContent}" and ` +
                        `"${boxes[j].element.textContent}"`);
        }
      }
    }
    for (const { element, box } of boxes) {
      if (!element.matches('.bar-label, .hold-label, .fault-label')) continue;
      const bar = element.previousElementSibling;
      if (!bar || bar.tagName !== 'rect') continue;
      const outer = bar.getBoundingClientRect();
      if (box.left < outer.left - 1 || box.right > outer.right + 1) {
        failures.push(`label "${element.textContent}" does not fit its bar ` +
                      `(${box.width.toFixed(1)} px in ${outer.width.toFixed(1)} px)`);
      }
    }
  }
  facts.labels = labels;
  // Everything within the window's width: nothing to scroll sideways for.
  if (document.documentElement.scrollWidth > window.innerWidth + 1) {
    failures.push(`the page is ${document.documentElement.scrollWidth} px wide in a ` +
                  `${window.innerWidth} px window`);
  }

  if (document.querySelector('table.invariants') === null) {
    // The index.
    facts.page = 'index';
    const headers = [...document.querySelectorAll('th')].map((th) => th.textContent);
    for (const wanted of ['what it shows', 'expected violated', 'violated', 'result']) {
      if (!headers.includes(wanted)) failures.push(`index: no "${wanted}" column`);
    }
    const runs = [...document.querySelectorAll('tr.run')];
    facts.runs = runs.length;
    if (runs.length === 0) failures.push('index: no run');
    for (const run of runs) {
      const name = run.querySelector('.scenario')?.textContent;
      if (!run.querySelector('.description')?.textContent.trim()) {
        failures.push(`index: ${name} has no description`);
      }
      if (!run.querySelector('.expected')?.textContent.trim()) {
        failures.push(`index: ${name} has no expected verdict`);
      }
      if (!run.querySelector('a[href$="report.html"]')) failures.push(`index: ${name} no report`);
    }
    facts.reports = [...document.querySelectorAll('a[href$="report.html"]')].map((a) => a.href);
    return { failures, facts };
  }

  facts.page = 'report';
  const seen = text('.expected-line .seen');
  facts.seen = seen;
  if (!text('.narrative .ran').startsWith('Ran ')) failures.push('no "Ran" line');
  if (!text('.narrative .saw').startsWith('Saw ')) failures.push('no "Saw" line');
  if (!text('.expected-line .expected')) failures.push('no expected verdict');
  if (!text('.description')) failures.push('no scenario description');
  if (count('svg.timeline') !== 1) failures.push('no timeline');
  if (count('rect.lane[data-lane^="n"]') === 0) failures.push('no node rows');
  facts.holds = count('rect.hold');
  if (facts.holds === 0) failures.push('the node rows hold nothing');
  const nodesWithContent = new Set(
    [...document.querySelectorAll('rect.hold')].map((hold) => hold.dataset.node));
  facts.nodesWithContent = nodesWithContent.size;
  if (count('svg.counter path.counter-line') !== 1) failures.push('no counter chart');
  const violated = seen.split(/,\s*/);
  facts.staleWrites = count('g.stale-write');
  if (violated.includes('C8')) {
    if (facts.staleWrites === 0) failures.push('C8 violated but no stale write marked');
    if (count('g.stale-write path.stale-link') === 0) {
      failures.push('no stale write linked to its read');
    }
    if (count('svg.counter g.counter-drop') === 0) failures.push('no drop in the counter');
  }
  facts.overlaps = count('rect.overlap');
  if (violated.includes('C3') && facts.overlaps === 0) {
    failures.push('C3 violated but no overlap shaded');
  }
  const findings = count('tr.finding-row');
  facts.findings = findings;
  facts.findingMarkers = count('svg.timeline g.finding');
  if (findings > 0 && count('tr.summary-row') === 0) failures.push('no finding summary');
  if (findings > 0 && facts.findingMarkers === 0) failures.push('no finding marker');
  return { failures, facts };
}

// ------------------------------------------------------------------- run
async function main() {
  const { targetId } = await send('Target.createTarget', { url: 'about:blank' });
  const { sessionId } = await send('Target.attachToTarget', { targetId, flatten: true });
  const errors = [];
  listeners.push((message) => {
    if (message.sessionId !== sessionId) return;
    if (message.method === 'Runtime.exceptionThrown') {
      errors.push('exception: ' + message.params.exceptionDetails.text);
    } else if (message.method === 'Runtime.consoleAPICalled' && message.params.type === 'error') {
      errors.push('console error: ' + message.params.args.map((a) => a.value).join(' '));
    } else if (message.method === 'Log.entryAdded' && message.params.entry.level === 'error') {
      errors.push('log error: ' + message.params.entry.text);
    }
  });
  for (const domain of ['Page', 'Runtime', 'Log']) await send(`${domain}.enable`, {}, sessionId);

  mkdirSync(screenshotDir, { recursive: true });
  const visit = async (url, name) => {
    errors.length = 0;
    await send('Emulation.setDeviceMetricsOverride',
      { width: 1280, height: 900, deviceScaleFactor: 1, mobile: false }, sessionId);
    const loaded = once('Page.loadEventFired', sessionId);
    await send('Page.navigate', { url }, sessionId);
    await loaded;
    const evaluated = await send('Runtime.evaluate', {
      expression: `(${checkPage.toString()})()`, returnByValue: true,
    }, sessionId);
    if (evaluated.exceptionDetails) {
      throw new Error(`${name}: the check threw: ${evaluated.exceptionDetails.text}`);
    }
    const { failures, facts } = evaluated.result.value;
    const { cssContentSize } = await send('Page.getLayoutMetrics', {}, sessionId);
    const height = Math.min(Math.ceil(cssContentSize.height), 12000);
    await send('Emulation.setDeviceMetricsOverride',
      { width: 1280, height, deviceScaleFactor: 1, mobile: false }, sessionId);
    const { data } = await send('Page.captureScreenshot', { format: 'png' }, sessionId);
    const png = resolve(screenshotDir, `${name}.png`);
    writeFileSync(png, Buffer.from(data, 'base64'));
    const pngs = [png];
    // The timeline again on its own, at full size, to read its labels.
    const clip = await send('Runtime.evaluate', {
      expression: `(() => { const box = document.querySelector('svg.timeline')
          ?.getBoundingClientRect(); return box ? { x: box.left + scrollX,
          y: box.top + scrollY, width: box.width, height: box.height, scale: 1 } : null; })()`,
      returnByValue: true,
    }, sessionId);
    if (clip.result.value) {
      const timeline = await send('Page.captureScreenshot',
        { format: 'png', clip: clip.result.value }, sessionId);
      const timelinePng = resolve(screenshotDir, `${name}-timeline.png`);
      writeFileSync(timelinePng, Buffer.from(timeline.data, 'base64'));
      pngs.push(timelinePng);
    }
    failures.push(...errors);
    return { failures, facts, pngs };
  };

  let passed = 0;
  let failed = 0;
  const report = (name, result) => {
    const status = result.failures.length === 0 ? 'ok' : 'FAILED';
    const { reports, ...shown } = result.facts;
    console.log(`${status} ${name}: ${JSON.stringify(shown)}`);
    for (const png of result.pngs) console.log(`  screenshot: ${png}`);
    for (const failure of result.failures) console.log(`  - ${failure}`);
    if (result.failures.length === 0) ++passed; else ++failed;
  };

  const index = await visit(pathToFileURL(resolve(indexPath)).href, 'index');
  report('index', index);
  for (const url of index.facts.reports ?? []) {
    const name = basename(dirname(new URL(url).pathname));
    report(name, await visit(url, name));
  }
  if ((index.facts.reports ?? []).length === 0) ++failed;
  console.log(`${passed} passed, ${failed} failed`);
  return failed === 0 ? 0 : 1;
}

let status = 1;
try {
  status = await main();
} catch (error) {
  console.error(`report_browser_check: ${error.message}`);
}
browser.kill('SIGTERM');
await new Promise((done) => {
  if (browser.exitCode !== null) done();
  else browser.once('exit', done);
  setTimeout(done, 5000).unref();
});
// Chromium's helper processes may still write to the profile for a moment
// after the browser process exits: retried (ENOTEMPTY, EBUSY), and a
// profile left behind is reported, not the check's verdict.
try {
  rmSync(profile, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
} catch (error) {
  console.error(`report_browser_check: could not remove ${profile}: ${error.message}`);
}
process.exit(status);
