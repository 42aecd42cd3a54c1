'use strict';
// A small real Node.js program for `node --cpu-prof`: JSON round trips of a nested tree, hashing
// and sorting, regular expressions and gzip, a recursive walk and fib, steps between timers and
// promises, and a worker thread (its own profile).
//
//     node --cpu-prof --cpu-prof-dir prof cpuprof_work.js
const { Worker, isMainThread, parentPort } = require('worker_threads');
const zlib = require('zlib');
const crypto = require('crypto');

function fib(n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

function tree(depth, seed) {
  return depth === 0 ? { leaf: seed } : { left: tree(depth - 1, seed * 2), right: tree(depth - 1, seed * 2 + 1) };
}

function walk(t) { return t.leaf !== undefined ? t.leaf : walk(t.left) + walk(t.right); }

function jsonWork(rounds) {
  let n = 0;
  for (let r = 0; r < rounds; r++) n += JSON.parse(JSON.stringify(tree(12, r))).left.right ? 1 : 0;
  return n;
}

function sortWork(n) {
  const a = Array.from({ length: n }, (_, i) => crypto.createHash('sha1').update(String(i)).digest('hex'));
  a.sort();
  return a[0];
}

function textWork(n) {
  const text = Array.from({ length: n }, (_, i) => `line ${i}: value=${i * 7} name=item${i % 13}`).join('\n');
  const m = text.match(/value=(\d+) name=item1\b/g) || [];
  return zlib.gzipSync(text).length + m.length;
}

if (isMainThread) {
  const w = new Worker(__filename);
  w.on('message', (v) => console.log('worker', v));
  const steps = [() => jsonWork(30), () => sortWork(60000), () => textWork(80000), () => walk(tree(16, 1)), () => fib(27)];
  (async () => {
    for (let round = 0; round < 3; round++) {
      for (const step of steps) {
        await new Promise((resolve) => setTimeout(resolve, 5));
        step();
      }
    }
  })();
} else {
  parentPort.postMessage(fib(30) + jsonWork(10));
}
