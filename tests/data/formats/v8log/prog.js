function fib(n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
function sortMany() { const a = []; for (let i = 0; i < 200000; i++) a.push((i * 7919) % 100003); a.sort((x, y) => x - y); return a[5]; }
function jsonWork() { let s = 0; for (let i = 0; i < 300; i++) { s += JSON.stringify({i, v: [1, 2, 3, 'x'.repeat(i)]}).length; } return s; }
let t = 0; for (let k = 0; k < 6; k++) { t += fib(24) + sortMany() + jsonWork(); }
console.log(t);
