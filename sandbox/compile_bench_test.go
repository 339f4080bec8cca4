package sandbox

import (
	"strconv"
	"testing"
)

// benchTS is a typical 30-line TypeScript program a model writes; benchJS is
// the same program with its types removed by hand.
const benchTS = `interface Order { id: string; total: number; items: { sku: string; qty: number }[] }
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

const benchJS = `
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

// BenchmarkCompileUncached measures Compile of a program the cache has not
// seen (a trailing comment changes every op): lang=typescript strips types
// with esbuild before goja compiles; the floor, lang=javascript, compiles
// the same program written without types.
func BenchmarkCompileUncached(b *testing.B) {
	for _, c := range []struct {
		name string
		src  string
		lang Lang
	}{{"lang=typescript", benchTS, TypeScript}, {"lang=javascript", benchJS, JavaScript}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			n := 0
			for b.Loop() {
				n++
				if _, err := Compile(c.src+"// "+strconv.Itoa(n)+"\n", c.lang); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkCompileCached is the cost of a cache hit (a program run again).
// auto=typescript is what run_code pays for a TypeScript program run again:
// CompileAuto caches the language that worked, so the failed JavaScript
// reading is paid once, not on every run.
func BenchmarkCompileCached(b *testing.B) {
	if _, err := Compile(benchTS, TypeScript); err != nil {
		b.Fatal(err)
	}
	b.Run("lang=typescript", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := Compile(benchTS, TypeScript); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("auto=typescript", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if p, err := CompileAuto(benchTS); err != nil || p.Lang() != TypeScript {
				b.Fatal(err)
			}
		}
	})
}
