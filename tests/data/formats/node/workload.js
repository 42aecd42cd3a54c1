// A small, real Node.js workload recorded with `node --cpu-prof` for TraceVis3D's tests: it
// builds a text corpus, tokenizes it with a regular expression, counts and sorts the words,
// round-trips records through JSON, walks a recursive tree and computes Fibonacci numbers.
// Deterministic (a linear congruential generator, no clock, no I/O besides one line of output).
"use strict";

const WORDS = ["trace", "stack", "frame", "sample", "call", "thread", "lane", "scene", "layout", "kernel",
  "profile", "event", "flow", "counter", "metric", "render", "vertex", "mesh", "camera", "light"];

function lcg(seed) {
  let s = seed >>> 0;
  return function next() {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 4294967296;
  };
}

function makeSentence(rand, n) {
  const out = [];
  for (let i = 0; i < n; i++) out.push(WORDS[Math.floor(rand() * WORDS.length)] + (rand() < 0.1 ? "s" : ""));
  return out.join(" ") + ".";
}

function makeCorpus(rand, sentences) {
  const parts = [];
  for (let i = 0; i < sentences; i++) parts.push(makeSentence(rand, 5 + Math.floor(rand() * 12)));
  return parts.join("\n");
}

function tokenize(text) {
  return text.toLowerCase().match(/[a-z]+/g) || [];
}

function countWords(tokens) {
  const counts = new Map();
  for (const t of tokens) counts.set(t, (counts.get(t) || 0) + 1);
  return counts;
}

function topWords(counts, k) {
  return [...counts.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, k);
}

function toRecords(tokens) {
  return tokens.map((t, i) => ({ id: i, word: t, len: t.length, tags: [t[0], t[t.length - 1]] }));
}

function jsonRoundTrip(records) {
  return JSON.parse(JSON.stringify(records));
}

function sortRecords(records) {
  return records.slice().sort((a, b) => a.len - b.len || (a.word < b.word ? -1 : a.word > b.word ? 1 : a.id - b.id));
}

class Node {
  constructor(depth, rand) {
    this.value = Math.floor(rand() * 100);
    this.children = depth > 0 ? [new Node(depth - 1, rand), new Node(depth - 1, rand)] : [];
  }

  sum() {
    return this.value + this.children.reduce((s, c) => s + c.sum(), 0);
  }
}

function fib(n) {
  return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

function analyse(rand) {
  const text = makeCorpus(rand, 4000);
  const tokens = tokenize(text);
  const top = topWords(countWords(tokens), 5);
  const records = sortRecords(jsonRoundTrip(toRecords(tokens)));
  const tree = new Node(13, rand);
  return top.length + records.length + tree.sum() + fib(22);
}

function main() {
  const rand = lcg(42);
  let total = 0;
  for (let round = 0; round < 30; round++) total += analyse(rand);
  console.log(total);
}

main();
