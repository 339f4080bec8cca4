package sandboxtest

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
