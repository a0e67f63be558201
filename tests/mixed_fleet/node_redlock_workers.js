#!/usr/bin/env node
// The node-redlock half of the mixed-fleet test (mixed_fleet_test.cpp):
// --workers async workers, each with its own node-redlock 4.2.0 Redlock over
// its own ioredis clients (one per lock node), each doing --cycles cycles of
// lock --resource -> GET --counter-key -> SET it one higher -> unlock, on
// the counter node. The packages are bench/peers' pinned ones, found
// through NODE_PATH.
//
//   node node_redlock_workers.js --nodes host:port,... --counter host:port
//       --resource NAME --counter-key KEY --workers N --cycles N --tag TEXT
//
// Start: every worker, once connected, pushes "ready" on {tag}:ready and
// waits (BLPOP, bounded) for one "go" on {tag}:go, so that both fleets run
// at once. Each cycle appends "js" to {tag}:log (which fleet held the lock,
// in order). Exit 0 after printing {"cycles":N,"attempts":N}; 1 on any
// error, with the message on stderr.
'use strict';

const Redis = require('ioredis4');
const Redlock = require('redlock');

const TTL_MS = 10000;
const START_TIMEOUT_S = 30;

function parseArgs(argv) {
  const options = {};
  for (let i = 0; i < argv.length; i += 2) {
    if (!argv[i].startsWith('--') || argv[i + 1] === undefined) {
      throw new Error(`bad argument '${argv[i]}'`);
    }
    options[argv[i].slice(2)] = argv[i + 1];
  }
  for (const name of ['nodes', 'counter', 'resource', 'counter-key', 'workers', 'cycles', 'tag']) {
    if (!(name in options)) throw new Error(`--${name} is required`);
  }
  return options;
}

function endpoint(text) {
  const colon = text.lastIndexOf(':');
  return {host: text.slice(0, colon), port: Number(text.slice(colon + 1)), lazyConnect: false};
}

async function connected(client) {
  if (client.status === 'ready') return client;
  await new Promise((resolve, reject) => {
    client.once('ready', resolve);
    client.once('error', reject);
  });
  return client;
}

async function worker(options) {
  const nodes = await Promise.all(
      options.nodes.split(',').map((node) => connected(new Redis(endpoint(node)))));
  const counter = await connected(new Redis(endpoint(options.counter)));
  // node-redlock waits between attempts only its retryDelay (± retryJitter)
  // and is never woken by a release: the library's clients, which are, take
  // the lock first more often. Hence the large retry budget (about 40 s).
  const redlock = new Redlock(nodes, {driftFactor: 0.01, retryCount: 2000, retryDelay: 10,
                                      retryJitter: 10});
  let failure = null;
  redlock.on('clientError', (error) => { failure = failure || error; });
  await counter.rpush(`${options.tag}:ready`, 'ready');
  const go = await counter.blpop(`${options.tag}:go`, START_TIMEOUT_S);
  if (go === null) throw new Error('no go signal');
  let attempts = 0;
  for (let cycle = 0; cycle < Number(options.cycles); ++cycle) {
    const lock = await redlock.lock(options.resource, TTL_MS);
    attempts += lock.attempts;
    const value = Number(await counter.get(options['counter-key']) || '0');
    await counter.set(options['counter-key'], String(value + 1));
    await counter.rpush(`${options.tag}:log`, 'js');
    await lock.unlock();
  }
  if (failure) throw failure;
  await Promise.all([...nodes, counter].map((client) => client.quit()));
  return attempts;
}

async function main() {
  const options = parseArgs(process.argv.slice(2));
  const workers = Number(options.workers);
  const attempts = await Promise.all(Array.from({length: workers}, () => worker(options)));
  const total = attempts.reduce((a, b) => a + b, 0);
  process.stdout.write(JSON.stringify({cycles: workers * Number(options.cycles), attempts: total}) + '\n');
}

main().catch((error) => {
  process.stderr.write(`node_redlock_workers: ${error.stack || error}\n`);
  process.exit(1);
});
