#!/usr/bin/env node
// Reads the JSON lines of bench/peers/compare's runs (one per driver run,
// from redlock_peer_driver and node_redlock_driver.js) and prints the
// side-by-side table: the median over rounds of every metric, per
// implementation, then the ratios and the targets of docs/performance.md.
//
//   node summarize.js RESULTS.jsonl
//
// Exit status: 0 when the table was printed (whether or not the targets are
// met), 1 when a case or an implementation has no result.
'use strict';

const fs = require('fs');

const IMPLS = ['redlock', 'node-redlock', 'floor', 'redlock-at-majority'];
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
  ['contended', 'min_per_worker', '', 'higher'],
  ['contended', 'max_per_worker', '', ''],
  ['contended', 'attempts_per_acquire', '', 'lower'],
];
const CASES = ['latency', 'inflight', 'contended'];
const RSS_TARGET_KIB = 8 * 1024;
// A worker is starved when it got less than this share of an even split.
const STARVED_SHARE = 0.25;

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
    const key = `${run.impl}/${run.case}`;
    (runs[key] = runs[key] || []).push(run);
  }
  return runs;
}

function format(value) {
  if (value === undefined) return '–';
  if (Math.abs(value) >= 100) return Math.round(value).toLocaleString('en-US').replace(/,/g, ' ');
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
    const list = runs[`${impl}/${runCase}`];
    return list ? median(list.map((run) => run[name])) : undefined;
  };
  const peakRss = (impl, runCase) => {
    const list = runs[`${impl}/${runCase}`];
    return list ? Math.max(...list.map((run) => run.peak_rss_kib)) : undefined;
  };
  for (const runCase of CASES) {
    for (const impl of ['redlock', 'node-redlock']) {
      if (!runs[`${impl}/${runCase}`]) {
        process.stderr.write(`summarize: no ${impl} result for ${runCase}\n`);
        process.exit(1);
      }
    }
  }
  const rounds = Math.min(...Object.values(runs).map((list) => list.length));

  const lines = [];
  lines.push(`Medians over ${rounds} rounds (each round: redlock, node-redlock, then for ` +
             'latency and inflight the floor and redlock with release_at_majority).');
  lines.push('Ratios are redlock / other; "better" says which way is better. "at majority": ' +
             'redlock with [lock] release_at_majority = true.');
  lines.push('');
  lines.push('| case | metric | better | redlock | node-redlock | redlock / node-redlock | floor ' +
             '| redlock / floor | at majority | at majority / floor |');
  lines.push('|---|---|---|--:|--:|--:|--:|--:|--:|--:|');
  const row = (runCase, label, better, [ours, theirs, floor, majority]) =>
    `| ${runCase} | ${label} | ${better || '–'} | ${format(ours)} | ${format(theirs)} ` +
    `| ${formatRatio(ratio(ours, theirs))} | ${format(floor)} ` +
    `| ${formatRatio(ratio(ours, floor))} | ${format(majority)} ` +
    `| ${formatRatio(ratio(majority, floor))} |`;
  for (const [runCase, name, unit, better] of ROWS) {
    const label = unit === '' ? name : `${name} (${unit})`;
    lines.push(row(runCase, label, better, IMPLS.map((impl) => metric(impl, runCase, name))));
  }
  for (const runCase of CASES) {
    lines.push(row(runCase, 'peak RSS (KiB, max of rounds)', 'lower',
                   IMPLS.map((impl) => peakRss(impl, runCase))));
  }

  const check = (met) => (met ? 'met' : 'NOT met');
  const latP50 = ratio(metric('redlock', 'latency', 'p50_us'), metric('floor', 'latency', 'p50_us'));
  const latP99 = ratio(metric('redlock', 'latency', 'p99_us'), metric('floor', 'latency', 'p99_us'));
  const flyFloor = ratio(metric('redlock', 'inflight', 'ops_per_s'),
                         metric('floor', 'inflight', 'ops_per_s'));
  const flyPeer = ratio(metric('redlock', 'inflight', 'ops_per_s'),
                        metric('node-redlock', 'inflight', 'ops_per_s'));
  const waitP99 = ratio(metric('redlock', 'contended', 'wait_p99_us'),
                        metric('node-redlock', 'contended', 'wait_p99_us'));
  const starved = (runCase, impl) => (runs[`${impl}/${runCase}`] || []).some((run) =>
    run.min_per_worker < STARVED_SHARE * (run.acquisitions / run.workers));
  const worstRss = Math.max(...CASES.map((runCase) => peakRss('redlock', runCase)));
  const fmt = (value) => (value === undefined ? '–' : value.toFixed(2));
  const atMajority = (name, runCase, bound, within) => {
    const value = ratio(metric('redlock-at-majority', runCase, name), metric('floor', runCase, name));
    return value === undefined ? '' :
      `; with release_at_majority ${fmt(value)}x, ${check(within(value, bound))}`;
  };
  const atMost = (value, bound) => value <= bound;
  const atLeast = (value, bound) => value >= bound;

  lines.push('');
  lines.push('Targets:');
  lines.push(`- uncontended p50 <= 1.05x floor: ${fmt(latP50)}x, ` +
             `${check(latP50 !== undefined && latP50 <= 1.05)}` +
             atMajority('p50_us', 'latency', 1.05, atMost));
  lines.push(`- uncontended p99 <= 1.2x floor: ${fmt(latP99)}x, ` +
             `${check(latP99 !== undefined && latP99 <= 1.2)}` +
             atMajority('p99_us', 'latency', 1.2, atMost));
  lines.push(`- 64 in flight >= 1.5x floor: ${fmt(flyFloor)}x, ` +
             `${check(flyFloor !== undefined && flyFloor >= 1.5)}` +
             atMajority('ops_per_s', 'inflight', 1.5, atLeast));
  lines.push(`- 64 in flight >= 10x node-redlock: ${fmt(flyPeer)}x, ` +
             `${check(flyPeer !== undefined && flyPeer >= 10)}`);
  lines.push(`- contended wait p99 <= 1/5 of node-redlock's: ${fmt(waitP99)}x, ` +
             `${check(waitP99 !== undefined && waitP99 <= 0.2)}`);
  lines.push(`- no starved worker (each >= ${STARVED_SHARE} of an even share, every round): ` +
             `redlock ${check(!starved('contended', 'redlock'))}, ` +
             `node-redlock ${check(!starved('contended', 'node-redlock'))}`);
  lines.push(`- peak RSS <= 8 MiB (redlock, every case and round): ${format(worstRss)} KiB, ` +
             `${check(worstRss <= RSS_TARGET_KIB)}`);
  process.stdout.write(`${lines.join('\n')}\n`);
}

main();
