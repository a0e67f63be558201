#!/usr/bin/env node
// The cases of bench/peers/compare, run with one of three node.js Redlock
// implementations (--impl), each with ioredis, one ioredis client per node:
//
//   node-redlock     redlock 4.2.0 with ioredis 4.28.5 (package "ioredis4",
//                    an alias): redlock.lock(key, ttl) / lock.unlock().
//   node-redlock-5   redlock 5.0.0-beta.2 (package "redlock5", an alias)
//                    with ioredis 5.9.3: redlock.acquire([key], ttl) /
//                    redlock.release(lock).
//   sesame-redlock   @sesamecare-oss/redlock 1.4.0 (a maintained fork of
//                    the 5.0 beta, ioredis >= 5 as a peer) with ioredis
//                    5.9.3: the same acquire / release as the beta.
//
// The versions are pinned in package.json and package-lock.json. The beta
// and the fork have the same settings; all three get the same ones:
// driftFactor 0.01 (every one's default; validity = TTL - 0.01 TTL - 2 ms),
// and the retry settings below. redlock_driver.cpp runs the same cases with
// this library; every driver prints one JSON line per run, with the same
// fields.
//
//   node node_redlock_driver.js --case latency|inflight|contended
//       --nodes host:port,... [--impl node-redlock|node-redlock-5|sesame-redlock]
//       [--cycles N] [--warmup N] [--seconds S] [--width W] [--workers W]
//       [--prefix TEXT]
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
//              wait from calling acquire to holding (p50/p99), attempts per
//              acquisition, and the acquisitions of the least and the most
//              served worker. The workers are async loops on this process's
//              one event loop.
//
// Retry settings (all three take retryCount, retryDelay, retryJitter):
// latency and inflight never contend, so they use retryCount 0 (a refusal
// fails the run). contended uses retryCount -1 (until acquired),
// retryDelay 10 ms, retryJitter 10 ms: the pause is 10 ms + a uniform
// integer in [-10, 9] ms, i.e. uniform over [0, 19] ms. A wait of 1 s or
// more counts as a stall (`stalls`; `wait_max_us` is the longest wait). The
// beta and the fork do stall: their failed attempts' grants stay on the
// nodes (below), and once two or three acquires hold a minority each
// (2 + 2 + 1 of 5 nodes), no one can reach a majority until one of those
// grants expires, a TTL later, and the next split can follow at once. So
// the run ends at the window's end even if workers are still waiting: 2 s
// after it without an acquisition, the waits still pending count with
// their length up to the window's end (`censored_waits` of them; the true
// waits are longer) in the wait percentiles, and not as acquisitions. A
// held lock that took longer than 20 s, or a warm-up that did not finish
// in 20 s, fails the run.
//
// How they decide: node-redlock 4.2.0 decides an acquire and a release only
// once every node has answered (it counts down all of them), so one slow
// node slows every cycle, and it unlocks the nodes of a failed attempt
// before it retries. The 5.0 beta and the fork decide at a majority (for or
// against) and keep the attempt's value across retries: a failed attempt's
// grants are left in place until the acquire succeeds or gives up.
// The library decides an acquire at the majority.
//
// peak_rss_kib is process.resourceUsage().maxRSS: the whole node process,
// V8 included. Exit status: 0 on success, 1 when a run failed, 2 on usage.
'use strict';

const TTL_MS = 10000;
const MAX_WAIT_NS = 20n * 1000n * 1000n * 1000n;
const STALL_US = 1e6;
const STOP_GRACE_NS = 2n * 1000n * 1000n * 1000n;
const DRIFT_FACTOR = 0.01;
const CONTENDED_RETRY = {driftFactor: DRIFT_FACTOR, retryCount: -1, retryDelay: 10, retryJitter: 10};
const UNCONTENDED_RETRY = {driftFactor: DRIFT_FACTOR, retryCount: 0, retryDelay: 10, retryJitter: 10};

// What the cases need of an implementation: its ioredis, a Redlock made
// from one client per node, and one acquire (resolving to a held lock with
// its attempt count) and one release.
const IMPLS = {
  'node-redlock': {
    load: () => ({Redis: require('ioredis4'), Redlock: require('redlock')}),
    // node-redlock 4 reports a failing node as 'clientError'.
    errorEvent: 'clientError',
    acquire: async (redlock, key) => {
      const lock = await redlock.lock(key, TTL_MS);
      return {lock, attempts: lock.attempts};
    },
    release: (redlock, held) => held.lock.unlock(),
  },
  'node-redlock-5': {
    load: () => ({Redis: require('ioredis'), Redlock: require('redlock5').default}),
    errorEvent: null,
    acquire: async (redlock, key) => {
      const lock = await redlock.acquire([key], TTL_MS);
      return {lock, attempts: lock.attempts.length};
    },
    release: (redlock, held) => redlock.release(held.lock),
  },
  'sesame-redlock': {
    load: () => ({Redis: require('ioredis'), Redlock: require('@sesamecare-oss/redlock').Redlock}),
    errorEvent: null,
    acquire: async (redlock, key) => {
      const lock = await redlock.acquire([key], TTL_MS);
      return {lock, attempts: lock.attempts.length};
    },
    release: (redlock, held) => redlock.release(held.lock),
  },
};
let impl = null;
let Redis = null;
let Redlock = null;
let implName = '';
// Set when the clients are closed: their errors from then on are expected.
let quitting = false;

const DEFAULTS = {
  case: '',
  nodes: '',
  cycles: 2000,
  warmup: 200,
  seconds: 5,
  width: 64,
  workers: 8,
  prefix: `peers:js:${process.pid}`,
  impl: 'node-redlock',
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
  if (!(options.impl in IMPLS)) usage(`--impl must be one of ${Object.keys(IMPLS).join(', ')}`);
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
  // node-redlock 4 emits a node's failure as 'clientError': with retryCount
  // 0 or a run of healthy nodes there is none, so one fails the run. The
  // beta and the fork emit every vote against (a held lock too) as 'error'
  // and install a listener that ignores it themselves.
  if (impl.errorEvent) {
    redlock.on(impl.errorEvent, (error) => {
      if (quitting) return;
      process.stderr.write(`${implName} client error: ${error.message}\n`);
      process.exitCode = 1;
    });
  }
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
  const held = await impl.acquire(redlock, key);
  await impl.release(redlock, held);
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
  const windowNs = BigInt(Math.round(options.seconds * 1e9));
  const waits = [];
  const censored = [];
  const perWorker = new Array(options.workers).fill(0);
  // When each worker called the acquire it is waiting for; null when none.
  const waitingSince = new Array(options.workers).fill(null);
  let attempts = 0;
  let warmupLeft = Math.max(options.warmup, 0);
  const begun = nowNs();
  let started = begun;
  let deadline = started + windowNs;
  let stopping = false;
  let failure = '';

  async function worker(w) {
    while (!stopping) {
      const begin = nowNs();
      waitingSince[w] = begin;
      let lock;
      try {
        lock = await impl.acquire(redlocks[w], key);
      } catch (error) {
        if (stopping) return;
        throw error;
      }
      waitingSince[w] = null;
      if (stopping) return;
      const held = nowNs();
      if (held - begin > MAX_WAIT_NS) {
        failure = `worker ${w} waited ${micros(held - begin) / 1e6} s for the lock`;
        stopping = true;
      }
      if (warmupLeft > 0) {
        if (--warmupLeft === 0) {
          started = held;
          deadline = held + windowNs;
        }
      } else if (held < deadline) {
        waits.push(micros(held - begin));
        perWorker[w] += 1;
        attempts += lock.attempts;
      } else {
        stopping = true;
      }
      await impl.release(redlocks[w], lock);
    }
  }

  // The run ends at the first acquisition after the window, or, when no
  // worker acquires any more (a stalled peer), STOP_GRACE after the window:
  // the waits still pending then count with their length up to the
  // window's end (censored: the true wait is longer), not as acquisitions.
  let watchdog = null;
  const stalled = new Promise((resolve) => {
    watchdog = setInterval(() => {
      const now = nowNs();
      if (warmupLeft > 0 && now - begun > MAX_WAIT_NS) {
        failure = `the warm-up did not finish in ${Number(MAX_WAIT_NS) / 1e9} s`;
        stopping = true;
      } else if (warmupLeft === 0 && now >= deadline + STOP_GRACE_NS) {
        for (const since of waitingSince) {
          if (since !== null && since < deadline) censored.push(micros(deadline - since));
        }
        stopping = true;
      }
      if (stopping) resolve();
    }, 50);
  });
  await Promise.race([Promise.all(redlocks.map((_, w) => worker(w))), stalled]);
  clearInterval(watchdog);
  stopping = true;
  quitting = true;
  await Promise.all(redlocks.map((redlock) => redlock.quit()));
  if (failure !== '') throw new Error(failure);
  const seconds = Number(deadline - started) / 1e9;
  const allWaits = waits.concat(censored);
  return {
    workers: options.workers,
    seconds,
    acquisitions: waits.length,
    acquisitions_per_s: waits.length / seconds,
    wait_p50_us: percentile(allWaits, 0.5),
    wait_p99_us: percentile(allWaits, 0.99),
    wait_max_us: allWaits.reduce((a, b) => Math.max(a, b), 0),
    stalls: allWaits.filter((wait) => wait >= STALL_US).length,
    censored_waits: censored.length,
    min_per_worker: Math.min(...perWorker),
    max_per_worker: Math.max(...perWorker),
    attempts_per_acquire: waits.length > 0 ? attempts / waits.length : 0,
    retry: 'retryCount -1, retryDelay 10 ms, retryJitter 10 ms (pause uniform in [0, 19] ms)',
  };
}

const CASES = {latency: runLatency, inflight: runInflight, contended: runContended};

async function main() {
  const options = parseArgs(process.argv.slice(2));
  impl = IMPLS[options.impl];
  implName = options.impl;
  ({Redis, Redlock} = impl.load());
  const nodes = parseNodes(options.nodes);
  const result = await CASES[options.case](options, nodes);
  const line = {
    impl: options.impl,
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
