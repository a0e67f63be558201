#!/usr/bin/env node
// Reads the JSON lines of bench/peers/compare's runs (one per driver run,
// from redlock_peer_driver, node_redlock_driver.js and redis_py_driver.py)
// and prints the side-by-side table: the median over rounds of every
// metric, per implementation; ours against the best peer (the best of the
// three quorum peers, per metric) and against the floor; then the targets
// of docs/performance.md and which of them were met.
//
//   node summarize.js RESULTS.jsonl
//
// redis-py is the single-node reference (one node, no quorum): shown, and
// compared in a line of its own, never the "best peer".
//
// Exit status: 0 when the table was printed (whether or not the targets are
// met), 1 when a case has no result of this library's.
'use strict';

const fs = require('fs');

const PEERS = ['node-redlock', 'node-redlock-5', 'sesame-redlock'];
const REFERENCE = 'redis-py';
const IMPLS = ['redlock', ...PEERS, REFERENCE, 'floor', 'redlock-at-majority', 'redlock-fair'];
const HEADINGS = {
  'redlock': 'redlock',
  'node-redlock': 'node-redlock 4.2.0',
  'node-redlock-5': 'redlock 5.0.0-beta.2',
  'sesame-redlock': '@sesamecare-oss/redlock 1.4.0',
  'redis-py': 'redis-py Lock, 1 node',
  'floor': 'floor',
  'redlock-at-majority': 'at majority',
  'redlock-fair': 'fair',
};
const ROWS = [
  ['latency', 'p50_us', 'µs', 'lower'],
  ['latency', 'p99_us', 'µs', 'lower'],
  ['latency', 'ops_per_s', '/s', 'higher'],
  ['inflight', 'ops_per_s', '/s', 'higher'],
  ['inflight', 'p50_us', 'µs', 'lower'],
  ['inflight', 'p99_us', 'µs', 'lower'],
  ['contended', 'acquisitions_per_s', '/s', 'higher'],
  ['contended', 'wait_p50_us', 'µs', 'lower'],
  ['contended', 'wait_p99_us', 'µs', 'lower'],
  ['contended', 'wait_max_us', 'µs', 'lower'],
  ['contended', 'attempts_per_acquire', '', 'lower'],
  ['contended', 'min_per_worker', '', 'higher'],
  ['contended', 'max_per_worker', '', ''],
  ['contended', 'least_over_most', '', 'higher'],
];
const CASES = ['latency', 'inflight', 'contended'];
const RSS_TARGET_KIB = 8 * 1024;
// A worker is starved when it got less than this share of an even split.
const STARVED_SHARE = 0.25;
// The contended targets, against the best quorum peer.
const CONTENDED_TARGETS = {
  acquisitionsOverBest: 1.5,
  waitP99OverBest: 0.2,
  attempts: 1.3,
  leastOverMost: 0.9,
};

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

function load(path) {
  const runs = {};
  for (const text of fs.readFileSync(path, 'utf8').split('\n')) {
    if (text.trim() === '') continue;
    const run = JSON.parse(text);
    if (run.case === 'contended' && run.max_per_worker > 0) {
      run.least_over_most = run.min_per_worker / run.max_per_worker;
    }
    const key = `${run.impl}/${run.case}`;
    (runs[key] = runs[key] || []).push(run);
  }
  return runs;
}

function format(value) {
  if (value === undefined || Number.isNaN(value)) return '–';
  if (Math.abs(value) >= 100) return Math.round(value).toLocaleString('en-US').replace(/,/g, ' ');
  if (Number.isInteger(value)) return String(value);
  return value.toFixed(value >= 10 ? 1 : 2);
}

function ratio(a, b) {
  return a === undefined || b === undefined || b === 0 ? undefined : a / b;
}

function formatRatio(value) {
  return value === undefined ? '–' : `${value.toFixed(2)}×`;
}

function main() {
  const runs = load(process.argv[2]);
  const metric = (impl, runCase, name) => {
    const list = (runs[`${impl}/${runCase}`] || []).filter((run) => run[name] !== undefined);
    return list.length > 0 ? median(list.map((run) => run[name])) : undefined;
  };
  const peakRss = (impl, runCase) => {
    const list = runs[`${impl}/${runCase}`];
    return list ? Math.max(...list.map((run) => run.peak_rss_kib)) : undefined;
  };
  const stalls = (impl) => {
    const list = runs[`${impl}/contended`];
    return list ? list.reduce((sum, run) => sum + (run.stalls || 0), 0) : undefined;
  };
  // The best quorum peer for a metric: [value, impl], or [undefined, ''].
  const bestPeer = (runCase, name, better) => {
    let best = [undefined, ''];
    for (const impl of PEERS) {
      const value = metric(impl, runCase, name);
      if (value === undefined || better === '') continue;
      const wins = best[0] === undefined || (better === 'higher' ? value > best[0] : value < best[0]);
      if (wins) best = [value, impl];
    }
    return best;
  };
  for (const runCase of CASES) {
    if (!runs[`redlock/${runCase}`]) {
      process.stderr.write(`summarize: no redlock result for ${runCase}\n`);
      process.exit(1);
    }
  }
  for (const impl of [...PEERS, REFERENCE]) {
    for (const runCase of CASES) {
      if (!runs[`${impl}/${runCase}`]) process.stderr.write(`summarize: no ${impl} result for ${runCase}\n`);
    }
  }
  const rounds = Math.min(...Object.values(runs).map((list) => list.length));

  const lines = [];
  lines.push(`Medians over ${rounds} rounds (each round: redlock, node-redlock 4.2.0, redlock ` +
             '5.0.0-beta.2, @sesamecare-oss/redlock 1.4.0, redis-py, then for latency and ' +
             'inflight the floor and redlock with release_at_majority, for contended redlock ' +
             'with [lock] fair = true).');
  lines.push('redis-py is the single-node reference: ONE node, not a quorum lock. "best peer": ' +
             'the best of the three quorum peers for that metric. Ratios are redlock / other; ' +
             '"at majority": redlock with [lock] release_at_majority = true; "fair": redlock ' +
             'with [lock] fair = true.');
  lines.push('');
  const columns = ['case', 'metric', 'better', ...IMPLS.slice(0, 5).map((impl) => HEADINGS[impl]),
                   'best peer', 'redlock / best peer', 'floor', 'redlock / floor', 'at majority',
                   'at majority / floor', 'fair', 'fair / best peer'];
  lines.push(`| ${columns.join(' | ')} |`);
  lines.push(`|---|---|---|${columns.slice(3).map(() => '--:').join('|')}|`);
  const row = (runCase, label, better, values, best) => {
    const [ours, , , , , floor, majority, fair] = values;
    const cells = [runCase, label, better || '–', ...values.slice(0, 5).map(format),
                   best[1] === '' ? '–' : `${format(best[0])} (${best[1]})`,
                   formatRatio(ratio(ours, best[0])), format(floor), formatRatio(ratio(ours, floor)),
                   format(majority), formatRatio(ratio(majority, floor)), format(fair),
                   formatRatio(ratio(fair, best[0]))];
    return `| ${cells.join(' | ')} |`;
  };
  for (const [runCase, name, unit, better] of ROWS) {
    const label = unit === '' ? name : `${name} (${unit})`;
    lines.push(row(runCase, label, better, IMPLS.map((impl) => metric(impl, runCase, name)),
                   bestPeer(runCase, name, better)));
  }
  lines.push(row('contended', 'stalls (waits ≥ 1 s, all rounds)', 'lower',
                 IMPLS.map((impl) => (impl === 'floor' || impl === 'redlock-at-majority' ?
                   undefined : stalls(impl))), [undefined, '']));
  for (const runCase of CASES) {
    const rss = IMPLS.map((impl) => peakRss(impl, runCase));
    let best = [undefined, ''];
    for (const impl of PEERS) {
      const value = peakRss(impl, runCase);
      if (value !== undefined && (best[0] === undefined || value < best[0])) best = [value, impl];
    }
    lines.push(row(runCase, 'peak RSS (KiB, max of rounds)', 'lower', rss, best));
  }

  const check = (met) => (met ? 'met' : 'NOT met');
  const fmt = (value) => (value === undefined ? '–' : value.toFixed(2));
  const atMost = (value, bound) => value !== undefined && value <= bound;
  const atLeast = (value, bound) => value !== undefined && value >= bound;
  const latP50 = ratio(metric('redlock', 'latency', 'p50_us'), metric('floor', 'latency', 'p50_us'));
  const latP99 = ratio(metric('redlock', 'latency', 'p99_us'), metric('floor', 'latency', 'p99_us'));
  const flyFloor = ratio(metric('redlock', 'inflight', 'ops_per_s'),
                         metric('floor', 'inflight', 'ops_per_s'));
  const flyPeer = ratio(metric('redlock', 'inflight', 'ops_per_s'),
                        metric('node-redlock', 'inflight', 'ops_per_s'));
  const starved = (impl) => (runs[`${impl}/contended`] || []).some((run) =>
    run.min_per_worker < STARVED_SHARE * (run.acquisitions / run.workers));
  const worstRss = Math.max(...CASES.map((runCase) => peakRss('redlock', runCase)));
  const atMajority = (name, runCase, bound, within) => {
    const value = ratio(metric('redlock-at-majority', runCase, name), metric('floor', runCase, name));
    return value === undefined ? '' :
      `; with release_at_majority ${fmt(value)}x, ${check(within(value, bound))}`;
  };

  const [bestRate, bestRateImpl] = bestPeer('contended', 'acquisitions_per_s', 'higher');
  const [bestP99, bestP99Impl] = bestPeer('contended', 'wait_p99_us', 'lower');
  const contendedTargets = (impl, title) => {
    if (!runs[`${impl}/contended`]) return;
    const rateOverBest = ratio(metric(impl, 'contended', 'acquisitions_per_s'), bestRate);
    const p99OverBest = ratio(metric(impl, 'contended', 'wait_p99_us'), bestP99);
    const attempts = metric(impl, 'contended', 'attempts_per_acquire');
    const leastOverMost = metric(impl, 'contended', 'least_over_most');
    lines.push('');
    lines.push(`${title} against the best quorum peer:`);
    lines.push(`- acquisitions/s >= ${CONTENDED_TARGETS.acquisitionsOverBest}x the best peer's ` +
               `(${bestRateImpl || '–'}, ${format(bestRate)}/s): ${fmt(rateOverBest)}x, ` +
               `${check(atLeast(rateOverBest, CONTENDED_TARGETS.acquisitionsOverBest))}`);
    lines.push(`- wait p99 <= 1/5 of the best peer's (${bestP99Impl || '–'}, ${format(bestP99)} ` +
               `µs): ${fmt(p99OverBest)}x, ` +
               `${check(atMost(p99OverBest, CONTENDED_TARGETS.waitP99OverBest))}`);
    lines.push(`- attempts per acquisition <= ${CONTENDED_TARGETS.attempts}: ${fmt(attempts)}, ` +
               `${check(atMost(attempts, CONTENDED_TARGETS.attempts))}`);
    lines.push(`- least / most served worker >= ${CONTENDED_TARGETS.leastOverMost}: ` +
               `${fmt(leastOverMost)}, ` +
               `${check(atLeast(leastOverMost, CONTENDED_TARGETS.leastOverMost))}`);
    lines.push(`- (reference, not a target) against redis-py on one node: acquisitions/s ` +
               `${formatRatio(ratio(metric(impl, 'contended', 'acquisitions_per_s'),
                                    metric(REFERENCE, 'contended', 'acquisitions_per_s')))}, ` +
               `wait p99 ${formatRatio(ratio(metric(impl, 'contended', 'wait_p99_us'),
                                            metric(REFERENCE, 'contended', 'wait_p99_us')))}`);
  };
  contendedTargets('redlock', 'Contended, redlock');
  contendedTargets('redlock-fair', 'Contended, redlock in fair mode');

  lines.push('');
  lines.push('Other targets:');
  lines.push(`- uncontended p50 <= 1.05x floor: ${fmt(latP50)}x, ${check(atMost(latP50, 1.05))}` +
             atMajority('p50_us', 'latency', 1.05, atMost));
  lines.push(`- uncontended p99 <= 1.2x floor: ${fmt(latP99)}x, ${check(atMost(latP99, 1.2))}` +
             atMajority('p99_us', 'latency', 1.2, atMost));
  lines.push(`- 64 in flight >= 1.5x floor: ${fmt(flyFloor)}x, ${check(atLeast(flyFloor, 1.5))}` +
             atMajority('ops_per_s', 'inflight', 1.5, atLeast));
  lines.push(`- 64 in flight >= 10x node-redlock 4.2.0: ${fmt(flyPeer)}x, ` +
             `${check(atLeast(flyPeer, 10))}`);
  lines.push(`- no starved worker (each >= ${STARVED_SHARE} of an even share, every round): ` +
             ['redlock', 'redlock-fair', ...PEERS, REFERENCE]
               .filter((impl) => runs[`${impl}/contended`])
               .map((impl) => `${impl} ${check(!starved(impl))}`).join(', '));
  lines.push(`- peak RSS <= 8 MiB (redlock, every case and round): ${format(worstRss)} KiB, ` +
             `${check(worstRss <= RSS_TARGET_KIB)}`);
  process.stdout.write(`${lines.join('\n')}\n`);
}

main();
