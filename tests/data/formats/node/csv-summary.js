// A small real program: parse, sort and summarise generated CSV records, with some recursion.
function makeRecords(n) {
  const rows = [];
  for (let i = 0; i < n; i++) rows.push(`${i},user${i % 97},${(i * 7919) % 1000},${Math.sin(i).toFixed(4)}`);
  return rows.join("\n");
}
function parseCsv(text) {
  return text.split("\n").map(line => { const [id, user, score, x] = line.split(","); return {id: +id, user, score: +score, x: +x}; });
}
function fib(n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
function summarise(records) {
  const byUser = new Map();
  for (const r of records) {
    const s = byUser.get(r.user) || {n: 0, total: 0};
    s.n++; s.total += r.score; byUser.set(r.user, s);
  }
  return [...byUser.entries()].sort((a, b) => b[1].total - a[1].total).slice(0, 5);
}
function sortRecords(records) { return records.slice().sort((a, b) => a.x - b.x || a.id - b.id); }
function jsonRoundTrip(records) { return JSON.parse(JSON.stringify(records)).length; }
function main() {
  let out = 0;
  for (let round = 0; round < 6; round++) {
    const text = makeRecords(60000);
    const recs = parseCsv(text);
    out += sortRecords(recs).length;
    out += summarise(recs).length;
    out += jsonRoundTrip(recs);
    out += fib(24);
  }
  console.log("done", out);
}
main();
