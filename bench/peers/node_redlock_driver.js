#!/usr/bin/env node
// The cases of bench/peers/compare, run with node-redlock 4.2.0 and ioredis
// (one ioredis client per node). redlock_driver.cpp runs the same cases with
// this library; both print one JSON line per run, with the same fields.
//
//   node node_redlock_driver.js --case latency|inflight|contended
//       --nodes host:port,... [--cycles N] [--warmup N] [--seconds S]
//       [--width W] [--workers W] [--prefix TEXT]
//
// Cases (TTL 10 s everywhere):
//   latency    one acquire + release at a time, each cycle on a key of its
//              own; --warmup cycles, then --cycles timed ones: p50/p99 of
//              the cycle (acquire call to release resolved), in µs.
//   inflight   --width (64) such cycles in flight, distinct keys, for
//              --seconds after --warmup cycles: completed cycles per second.
//   contended  --workers (8) workers on ONE key, each with its own Redlock
//              and its own ioredis connections; each loops acquire (retried
//              until acquired) -> empty critical section -> release for
//              --seconds after --warmup acquisitions. Acquisitions/s, the
//              wait from calling acquire to holding (p50/p99), and the
//              acquisitions of the least and the most served worker. The
//              workers are async loops on this process's one event loop.
//
// Retry settings: latency and inflight never contend, so they use
// retryCount 0 (a refusal fails the run). contended uses retryCount -1
// (until acquired), retryDelay 10 ms, retryJitter 10 ms: the pause is
// 10 ms + a uniform integer in [-10, 9] ms, i.e. uniform over [0, 19] ms.
// A wait longer than 10 s fails the run.
//
// node-redlock 4.2.0 decides an acquire and a release only once every node
// has answered (it counts down all of them), so one slow node slows every
// cycle; the library decides an acquire at the majority.
//
// peak_rss_kib is process.resourceUsage().maxRSS: the whole node process,
// V8 included. Exit status: 0 on success, 1 when a run failed, 2 on usage.
'use strict';

const Redis = require('ioredis');
const Redlock = require('redlock');

const TTL_MS = 10000;
const MAX_WAIT_NS = 10n * 1000n * 1000n * 1000n;
const CONTENDED_RETRY = {retryCount: -1, retryDelay: 10, retryJitter: 10};
const UNCONTENDED_RETRY = {retryCount: 0, retryDelay: 10, retryJitter: 10};

const DEFAULTS = {
  case: '',
  nodes: '',
  cycles: 2000,
  warmup: 200,
  seconds: 5,
  width: 64,
  workers: 8,
  prefix: `peers:js:${process.pid}`,
};

function usage(message) {
  process.stderr.write(`node_redlock_driver: ${message}\n`);
  process.exit(2);
}

function parseArgs(argv) {
  const options = {...DEFAULTS};
  for (let i = 0; i < argv.length; i += 2) {
    const name = argv[i].replace(/^--/, '');
    const value = argv[i + 1];
    if (!(name in options) || value === undefined) usage(`bad argument '${argv[i]}'`);
    options[name] = typeof DEFAULTS[name] === 'number' ? Number(value) : value;
    if (Number.isNaN(options[name])) usage(`--${name}: not a number: ${value}`);
  }
  if (!['latency', 'inflight', 'contended'].includes(options.case)) {
    usage('--case must be latency, inflight or contended');
  }
  if (options.nodes === '') usage('--nodes host:port,... is required');
  return options;
}

function parseNodes(list) {
  return list.split(',').filter((item) => item !== '').map((item) => {
    const colon = item.lastIndexOf(':');
    const port = Number(item.slice(colon + 1));
    if (colon <= 0 || !Number.isInteger(port) || port <= 0 || port > 65535) {
      usage(`bad node '${item}'`);
    }
    return {host: item.slice(0, colon), port};
  });
}

// One ioredis client per node, resolved once every one of them is ready.
async function connectClients(nodes) {
  const clients = nodes.map((node) => new Redis({host: node.host, port: node.port}));
  await Promise.all(clients.map((client) => new Promise((resolve, reject) => {
    client.once('ready', resolve);
    client.once('error', reject);
  })));
  return clients;
}

async function makeRedlock(nodes, retry) {
  const clients = await connectClients(nodes);
  const redlock = new Redlock(clients, retry);
  redlock.on('clientError', (error) => {
    process.stderr.write(`node-redlock client error: ${error.message}\n`);
    process.exitCode = 1;
  });
  return redlock;
}

function nowNs() {
  return process.hrtime.bigint();
}

function micros(ns) {
  return Number(ns) / 1000;
}

function percentile(samples, q) {
  if (samples.length === 0) return 0;
  const sorted = Float64Array.from(samples).sort();
  const rank = Math.ceil(q * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(rank, 1) - 1)];
}

function peakRssKib() {
  return process.resourceUsage().maxRSS;
}

async function lockCycle(redlock, key) {
  const lock = await redlock.lock(key, TTL_MS);
  await lock.unlock();
}

async function runLatency(options, nodes) {
  const redlock = await makeRedlock(nodes, UNCONTENDED_RETRY);
  const samples = [];
  const total = options.warmup + options.cycles;
  let started = 0n;
  for (let i = 0; i < total; ++i) {
    if (i === options.warmup) started = nowNs();
    const begin = nowNs();
    await lockCycle(redlock, `${options.prefix}:lat:${i}`);
    if (i >= options.warmup) samples.push(micros(nowNs() - begin));
  }
  const seconds = Number(nowNs() - started) / 1e9;
  await redlock.quit();
  return {
    cycles: samples.length,
    p50_us: percentile(samples, 0.5),
    p99_us: percentile(samples, 0.99),
    ops_per_s: samples.length / seconds,
  };
}

async function runInflight(options, nodes) {
  const redlock = await makeRedlock(nodes, UNCONTENDED_RETRY);
  const samples = [];
  let nextKey = 0;
  let completed = 0;
  let measuring = false;
  let stopping = false;
  let started = 0n;
  let ended = 0n;
  const deadlineAfterStart = BigInt(Math.round(options.seconds * 1e9));

  async function worker() {
    while (!stopping) {
      const begin = nowNs();
      await lockCycle(redlock, `${options.prefix}:fly:${nextKey++}`);
      const end = nowNs();
      if (stopping) break;
      if (measuring) {
        samples.push(micros(end - begin));
        if (end - started >= deadlineAfterStart) {
          stopping = true;
          ended = end;
        }
      } else if (++completed >= options.warmup) {
        measuring = true;
        started = end;
      }
    }
  }

  await Promise.all(Array.from({length: options.width}, worker));
  await redlock.quit();
  return {
    width: options.width,
    cycles: samples.length,
    seconds: Number(ended - started) / 1e9,
    ops_per_s: samples.length / (Number(ended - started) / 1e9),
    p50_us: percentile(samples, 0.5),
    p99_us: percentile(samples, 0.99),
  };
}

async function runContended(options, nodes) {
  const redlocks = [];
  for (let w = 0; w < options.workers; ++w) {
    redlocks.push(await makeRedlock(nodes, CONTENDED_RETRY));
  }
  const key = `${options.prefix}:contended`;
  const waits = [];
  const perWorker = new Array(options.workers).fill(0);
  let attempts = 0;
  let warmupLeft = Math.max(options.warmup, 0);
  let started = nowNs();
  let deadline = started + BigInt(Math.round(options.seconds * 1e9));
  let stopping = false;
  let failure = '';

  async function worker(w) {
    while (!stopping) {
      const begin = nowNs();
      const lock = await redlocks[w].lock(key, TTL_MS);
      const held = nowNs();
      if (held - begin > MAX_WAIT_NS) {
        failure = `worker ${w} waited ${micros(held - begin) / 1e6} s for the lock`;
        stopping = true;
      }
      if (warmupLeft > 0) {
        if (--warmupLeft === 0) {
          started = held;
          deadline = held + BigInt(Math.round(options.seconds * 1e9));
        }
      } else if (held < deadline) {
        waits.push(micros(held - begin));
        perWorker[w] += 1;
        attempts += lock.attempts;
      } else {
        stopping = true;
      }
      await lock.unlock();
    }
  }

  await Promise.all(redlocks.map((_, w) => worker(w)));
  await Promise.all(redlocks.map((redlock) => redlock.quit()));
  if (failure !== '') throw new Error(failure);
  const seconds = Number(deadline - started) / 1e9;
  return {
    workers: options.workers,
    seconds,
    acquisitions: waits.length,
    acquisitions_per_s: waits.length / seconds,
    wait_p50_us: percentile(waits, 0.5),
    wait_p99_us: percentile(waits, 0.99),
    min_per_worker: Math.min(...perWorker),
    max_per_worker: Math.max(...perWorker),
    attempts_per_acquire: waits.length > 0 ? attempts / waits.length : 0,
    retry: 'retryCount -1, retryDelay 10 ms, retryJitter 10 ms (pause uniform in [0, 19] ms)',
  };
}

const CASES = {latency: runLatency, inflight: runInflight, contended: runContended};

async function main() {
  const options = parseArgs(process.argv.slice(2));
  const nodes = parseNodes(options.nodes);
  const result = await CASES[options.case](options, nodes);
  const line = {
    impl: 'node-redlock',
    case: options.case,
    nodes: nodes.length,
    ttl_ms: TTL_MS,
    ...result,
    peak_rss_kib: peakRssKib(),
  };
  process.stdout.write(`${JSON.stringify(line)}\n`);
}

main().then(() => process.exit(process.exitCode || 0), (error) => {
  process.stderr.write(`node_redlock_driver: ${error.stack || error}\n`);
  process.exit(1);
});
