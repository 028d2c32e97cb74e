#!/usr/bin/env node
// `leveldb-bloom` (npx leveldb-bloom ...): runs the platform package's tool with these
// arguments. Node cannot replace itself with it, so the tool's exit status is passed on,
// and a signal it died of is raised again here.
'use strict';
const { spawnSync } = require('child_process');
const { toolPath } = require('..');

let tool;
try {
  tool = toolPath();
} catch (error) {
  process.stderr.write(`${error.message}\n`);
  process.exit(1);
}
// Signals aimed at this process group reach the tool too; this one waits for it.
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT']) {
  process.on(signal, () => {});
}
const result = spawnSync(tool, process.argv.slice(2), { stdio: 'inherit' });
if (result.error) {
  process.stderr.write(`leveldb-bloom: ${tool}: ${result.error.message}\n`);
  process.exit(1);
}
if (result.signal) {
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT']) {
    process.removeAllListeners(signal);
  }
  process.kill(process.pid, result.signal);
}
// A signal this process ignores (it was ignored when node started) ends it as a failure.
process.exit(result.status === null ? 1 : result.status);
