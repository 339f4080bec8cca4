package sandboxtest

import "strconv"

// TypicalTS is a typical 30-line TypeScript program a model writes:
// interfaces, annotated parameters, generics, a type assertion and async SDK
// calls. TypicalJS is the same program with its types removed by hand. The
// compile benchmarks (package sandbox and the bench harness) share them.
const TypicalTS = `interface Order { id: string; total: number; items: { sku: string; qty: number }[] }
type Summary = { count: number; revenue: number; top: string[] };

function topSkus(orders: Order[], n: number): string[] {
  const counts = new Map<string, number>();
  for (const o of orders) {
    for (const it of o.items) counts.set(it.sku, (counts.get(it.sku) ?? 0) + it.qty);
  }
  return [...counts.entries()].sort((a, b) => b[1] - a[1]).slice(0, n).map(([sku]) => sku);
}

async function load(ids: readonly string[]): Promise<Order[]> {
  const out: Order[] = [];
  for (const id of ids) {
    const o = (await tools.orders_get({ id })) as Order;
    if (o.total > 0) out.push(o);
  }
  return out;
}

const ids: string[] = (await tools.orders_list({ since: "2024-01-01" })).ids;
const orders = await load(ids);
const summary: Summary = {
  count: orders.length,
  revenue: orders.reduce((s: number, o: Order) => s + o.total, 0),
  top: topSkus(orders, 3),
};
console.log(` + "`loaded ${summary.count} orders`" + `);
return summary satisfies Summary;
`

const TypicalJS = `
function topSkus(orders, n) {
  const counts = new Map();
  for (const o of orders) {
    for (const it of o.items) counts.set(it.sku, (counts.get(it.sku) ?? 0) + it.qty);
  }
  return [...counts.entries()].sort((a, b) => b[1] - a[1]).slice(0, n).map(([sku]) => sku);
}

async function load(ids) {
  const out = [];
  for (const id of ids) {
    const o = (await tools.orders_get({ id }));
    if (o.total > 0) out.push(o);
  }
  return out;
}

const ids = (await tools.orders_list({ since: "2024-01-01" })).ids;
const orders = await load(ids);
const summary = {
  count: orders.length,
  revenue: orders.reduce((s, o) => s + o.total, 0),
  top: topSkus(orders, 3),
};
console.log(` + "`loaded ${summary.count} orders`" + `);
return summary;
`

// DataProgram is a data-sized program and its value: the interpreter's cost
// measured beside raw goja by package sandbox's benchmarks and the bench
// harness's group interp.
type DataProgram struct {
	Name, Body, Want string
}

// DataPrograms are a model's data-sized programs: a report built with +=
// (quadratic in goja, which copies the whole string on each concatenation)
// and with push and join (linear, the idiom the SDK text names), and a prime
// sieve to two million in an Array and in a Uint8Array (148933 primes).
var DataPrograms = []DataProgram{
	{"10,000-line report with +=", reportPlus(10000), "227301"},
	{"10,000-line report with push/join", reportJoin(10000), "227301"},
	{"40,000-line report with +=", reportPlus(40000), "973015"},
	{"40,000-line report with push/join", reportJoin(40000), "973015"},
	{"prime sieve to 2,000,000 (Array)", sieveArray, "148933"},
	{"prime sieve to 2,000,000 (Uint8Array)", sieveBytes, "148933"},
}

func reportPlus(lines int) string {
	return "let s = ''\nfor (let i = 0; i < " + strconv.Itoa(lines) + "; i++) { s += 'line ' + i + ': value ' + i * 7 + '\\n' }\nreturn s.length"
}

func reportJoin(lines int) string {
	return "const parts = []\nfor (let i = 0; i < " + strconv.Itoa(lines) + "; i++) { parts.push('line ' + i + ': value ' + i * 7 + '\\n') }\nreturn parts.join('').length"
}

const sieveArray = `const n = 2000000
const a = new Array(n + 1).fill(true)
a[0] = a[1] = false
for (let i = 2; i * i <= n; i++) if (a[i]) for (let j = i * i; j <= n; j += i) a[j] = false
let c = 0
for (let i = 0; i <= n; i++) if (a[i]) c++
return c`

const sieveBytes = `const n = 2000000
const composite = new Uint8Array(n + 1)
let c = 0
for (let i = 2; i <= n; i++) {
  if (composite[i]) continue
  c++
  for (let j = i * i; j <= n; j += i) composite[j] = 1
}
return c`
