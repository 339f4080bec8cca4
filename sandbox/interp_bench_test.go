package sandbox

import (
	"context"
	"strconv"
	"testing"

	"github.com/dop251/goja"
)

// Data-sized programs, each beside raw goja running the same body: the floor the interpreter
// sets, which the sandbox can only add to. Building a string with += is quadratic in goja
// (every concatenation copies the whole string); the push-and-join idiom the SDK text names is
// linear.

func reportPlus(lines int) string {
	return "let s = ''\nfor (let i = 0; i < " + strconv.Itoa(lines) + "; i++) { s += 'line ' + i + ': value ' + i * 7 + '\\n' }\nreturn s.length"
}

func reportJoin(lines int) string {
	return "const parts = []\nfor (let i = 0; i < " + strconv.Itoa(lines) + "; i++) { parts.push('line ' + i + ': value ' + i * 7 + '\\n') }\nreturn parts.join('').length"
}

// sieve counts the primes up to two million (148933) in a plain array.
const sieve = `const n = 2000000
const a = new Array(n + 1).fill(true)
a[0] = a[1] = false
for (let i = 2; i * i <= n; i++) if (a[i]) for (let j = i * i; j <= n; j += i) a[j] = false
let c = 0
for (let i = 0; i <= n; i++) if (a[i]) c++
return c`

// sieveBytes is sieve in a Uint8Array.
const sieveBytes = `const n = 2000000
const composite = new Uint8Array(n + 1)
let c = 0
for (let i = 2; i <= n; i++) {
  if (composite[i]) continue
  c++
  for (let j = i * i; j <= n; j += i) composite[j] = 1
}
return c`

func benchRaw(b *testing.B, body, want string) {
	prg := goja.MustCompile("bench.js", "(function () {\n"+body+"\n})()", false)
	b.ReportAllocs()
	for b.Loop() {
		v, err := goja.New().RunProgram(prg)
		if err != nil || v.String() != want {
			b.Fatalf("%v %v", v, err)
		}
	}
}

func benchSandbox(b *testing.B, body, want string) {
	p, err := Compile(body, JavaScript)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if res := Run(ctx, p, nil, Options{Timeout: DefaultTimeout * 4}); res.Err != nil || string(res.Value) != want {
			b.Fatalf("%s %v", res.Value, res.Err)
		}
	}
}

func BenchmarkFloorStringPlus10k(b *testing.B) { benchRaw(b, reportPlus(10000), "227301") }
func BenchmarkStringPlus10k(b *testing.B)      { benchSandbox(b, reportPlus(10000), "227301") }
func BenchmarkFloorStringPlus40k(b *testing.B) { benchRaw(b, reportPlus(40000), "973015") }
func BenchmarkStringPlus40k(b *testing.B)      { benchSandbox(b, reportPlus(40000), "973015") }
func BenchmarkFloorStringJoin10k(b *testing.B) { benchRaw(b, reportJoin(10000), "227301") }
func BenchmarkStringJoin10k(b *testing.B)      { benchSandbox(b, reportJoin(10000), "227301") }
func BenchmarkFloorStringJoin40k(b *testing.B) { benchRaw(b, reportJoin(40000), "973015") }
func BenchmarkStringJoin40k(b *testing.B)      { benchSandbox(b, reportJoin(40000), "973015") }
func BenchmarkFloorSieve(b *testing.B)         { benchRaw(b, sieve, "148933") }
func BenchmarkSieve(b *testing.B)              { benchSandbox(b, sieve, "148933") }
func BenchmarkFloorSieveBytes(b *testing.B)    { benchRaw(b, sieveBytes, "148933") }
func BenchmarkSieveBytes(b *testing.B)         { benchSandbox(b, sieveBytes, "148933") }

// callsInTry makes 100,000 calls written in a try block, which the sandbox routes through a
// native so that a stack overflow is catchable (trycall.go): the cost of that against raw goja.
const callsInTry = `function f(x) { return x + 1 }
let s = 0
for (let i = 0; i < 100000; i++) { try { s = f(s) } catch (e) {} }
return s`

func BenchmarkFloorCallsInTry(b *testing.B) { benchRaw(b, callsInTry, "100000") }
func BenchmarkCallsInTry(b *testing.B)      { benchSandbox(b, callsInTry, "100000") }
