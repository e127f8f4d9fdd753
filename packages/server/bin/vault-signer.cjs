#!/usr/bin/env node
'use strict';
/**
 * The `vault-signer` bin. It sizes libuv's thread pool, then runs the CLI (dist/signer/cli.js).
 *
 * The signer checks approval signatures on libuv's thread pool (see README-signer.md). libuv reads
 * UV_THREADPOOL_SIZE once, when the pool starts. An ES module entry can be too late to set it: on
 * Node 20 the ESM loader has started the pool before the module's code runs, and on any version a
 * dependency may start it while being imported. This CommonJS file runs before any of that, so
 * the default it sets takes effect.
 *
 * The default leaves one core to the event loop, which runs each request's checks one at a time,
 * and gives the pool the others: cores - 1 threads, at least 1. libuv's own default of 4 threads
 * preempts the event loop on a small host. A UV_THREADPOOL_SIZE in the environment is kept as it is.
 */
const { availableParallelism } = require('node:os');

if (process.env.UV_THREADPOOL_SIZE === undefined || process.env.UV_THREADPOOL_SIZE === '') {
  process.env.UV_THREADPOOL_SIZE = String(Math.max(1, availableParallelism() - 1));
}

import('../dist/signer/cli.js').then(
  (cli) => cli.run(process.argv.slice(2)),
  (e) => {
    process.stderr.write(`vault-signer: cannot load the CLI: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exitCode = 1;
  },
);
