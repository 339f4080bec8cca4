package sandbox

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

func TestCompileTypeScript(t *testing.T) {
	tests := []struct {
		name, src, want string
	}{
		{"annotations", `const n: number = 2; function dbl(x: number): number { return x * 2 } return dbl(n)`, `4`},
		{"interface", `interface P { x: number; y?: string } const p: P = {x: 1}; return p`, `{"x":1}`},
		{"type alias and generics", `type Box<T> = {v: T}; function wrap<T>(v: T): Box<T> { return {v} } return wrap<string>("a")`, `{"v":"a"}`},
		{"as casts", `const u: unknown = {a: 1}; return (u as {a: number}).a + (<any>u).a`, `2`},
		{"enum", `enum Color { Red, Green = 5, Blue } return [Color.Red, Color.Green, Color.Blue, Color[5]]`, `[0,5,6,"Green"]`},
		{"string enum", `enum Dir { Up = "UP" } return Dir.Up`, `"UP"`},
		{"class with fields and private", `class C { #n = 1; static k = 2; constructor(public m: number) {} get n() { return this.#n } } const c = new C(3); return [c.n, C.k, c.m]`, `[1,2,3]`},
		{"optional chaining and nullish", `const o: any = {a: null}; return [o?.a?.b ?? "none", o.x ?? "d", o.a ??= 4]`, `["none","d",4]`},
		{"top-level await and return", `const v = await Promise.resolve(7); return v`, `7`},
		{"async generator lowered", `async function* g() { yield 1; yield 2 } const out: number[] = []; for await (const v of g()) out.push(v); return out`, `[1,2]`},
		{"non-null assertion and satisfies", `const m = new Map<string, number>([["a", 1]]); const v = m.get("a")!; return ({v} satisfies {v: number})`, `{"v":1}`},
		{"types are advisory", `const s: number = "not a number" as any; return s`, `"not a number"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := runLang(t, tt.src, TypeScript, nil, Options{})
			wantValue(t, res, tt.want)
		})
	}
}

func TestTypeScriptRuntimeErrorLines(t *testing.T) {
	// Runtime errors name the line of the TypeScript source, through esbuild's source map
	// (held in memory: nothing is read from disk).
	tests := []struct{ src, want string }{
		{"interface I { a: number }\nenum E { A }\nconst b: I | null = null;\nreturn b!.a", "TypeError: Cannot read properties of undefined or null (reading 'a') (at line 4:"},
		{"const s: string = 'a';\n(s as any).foo()", "TypeError: foo is not a function (at line 2:"},
		{"function f<T>(x: T): T {\n  throw new Error('deep')\n}\n\nf<number>(1)", "Error: deep (at line 2:"},
		{"const o: {a: number} = {a: 1};\nawait null;\n    undefinedFn(o as any)", "ReferenceError: undefinedFn is not defined (at line 3:"},
	}
	for _, tt := range tests {
		res := runLang(t, tt.src, TypeScript, nil, Options{})
		wantFailure(t, res, KindRuntime, tt.want)
	}
}

func TestCompileSyntaxErrors(t *testing.T) {
	tests := []struct {
		name string
		lang Lang
		src  string
		want []string
	}{
		{"js first line", JavaScript, `let x = ;`, []string{"(at line 1:"}},
		{"js later line", JavaScript, "const a = 1\nconst b = 2\nconst c = )", []string{"(at line 3:11)"}},
		{"js unclosed block", JavaScript, "if (a) {\n  return 1", []string{"(at end of program)"}},
		{"js duplicate let", JavaScript, "let a = 1\nlet a = 2", []string{"a", "(at line 2:"}},
		{"ts first line", TypeScript, `const x: number = ;`, []string{"(at line 1:19)"}},
		{"ts later line", TypeScript, "const a: string = 'x'\nfunction f(: number) {}", []string{"(at line 2:12)"}},
		{"ts unterminated string", TypeScript, "const a = 1\nconst s = 'abc", []string{"(at line 2:"}},
		{"ts unclosed block", TypeScript, "if (a) {", []string{"end of program"}},
		{"invalid utf-8", JavaScript, "return '\xff'", []string{"not valid UTF-8"}},
		{"unknown language", Lang(7), `return 1`, []string{"unknown language"}},
		{"program breaks out of its body", JavaScript, "}); 5; ({", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Compile(tt.src, tt.lang)
			if err == nil {
				// Breaking out of the wrapper may parse; it must then fail cleanly when run.
				res := Run(t.Context(), p, nil, Options{})
				wantFailure(t, res, KindSyntax, tt.want...)
				return
			}
			var f *Failure
			if !errors.As(err, &f) || f.Kind != KindSyntax {
				t.Fatalf("error = %#v, want a syntax *Failure", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(f.Message, w) {
					t.Fatalf("message %q does not contain %q", f.Message, w)
				}
			}
		})
	}
}

func TestCompileLimits(t *testing.T) {
	t.Run("source size", func(t *testing.T) {
		src := "return 1//" + strings.Repeat("x", MaxSourceBytes)
		_, err := Compile(src, JavaScript)
		wantSyntax(t, err, "bytes; the limit is")
	})
	t.Run("deep nesting", func(t *testing.T) {
		// goja's parser and compiler recurse per level, super-linearly in time; 300,000 levels
		// overflow the Go stack, a fatal error no recover can catch. Deep nesting is refused
		// before the parser runs.
		for _, open := range []string{"[", "(", "{", "`${", "f("} {
			_, err := Compile("return "+strings.Repeat(open, 5000), JavaScript)
			wantSyntax(t, err, "nest deeper than")
		}
	})
	t.Run("too many brackets", func(t *testing.T) {
		// After "return" the scanner takes the slash for a division, so it believes the quote
		// opens a string running to the end of the line; the bracket count still sees them.
		src := "return /'/; " + strings.Repeat("[", MaxBrackets+1)
		_, err := Compile(src, JavaScript)
		wantSyntax(t, err, "opening brackets")
	})
	t.Run("brackets in strings, comments, regexps and templates do not nest", func(t *testing.T) {
		deep := strings.Repeat("(", MaxNesting+10)
		src := strings.Join([]string{
			`const a = "` + deep + `";`,
			`const b = '` + deep + `';`,
			"// " + deep,
			"/* " + deep + " */",
			"const c = `" + deep + "${ [1].map(x => ({x})) }" + deep + "`;",
			`const d = /\(/.test("((");`,
			`const e = 4 / 2 / 1;`,
			`return [a.length, b.length, c.length, d, e]`,
		}, "\n")
		res := runJS(t, src, nil)
		n := MaxNesting + 10
		wantValue(t, res, "["+strconv.Itoa(n)+","+strconv.Itoa(n)+","+strconv.Itoa(2*n+15)+",true,2]")
	})
	t.Run("nesting at the limit compiles", func(t *testing.T) {
		src := "return " + strings.Repeat("[", MaxNesting-1) + strings.Repeat("]", MaxNesting-1) + ".length"
		wantValue(t, runJS(t, src, nil), "1")
	})
}

func wantSyntax(t *testing.T, err error, fragment string) {
	t.Helper()
	var f *Failure
	if !errors.As(err, &f) || f.Kind != KindSyntax {
		t.Fatalf("error = %v, want a syntax failure", err)
	}
	if !strings.Contains(f.Message, fragment) {
		t.Fatalf("message %q does not contain %q", f.Message, fragment)
	}
}

func TestCompileCache(t *testing.T) {
	src := "return 'cache test'"
	a, err := Compile(src, JavaScript)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Compile(src, JavaScript)
	if a != b {
		t.Fatal("the same source compiled twice gave two programs")
	}
	c, _ := Compile(src, TypeScript)
	if c == a || c.Lang() != TypeScript {
		t.Fatal("the language is not part of the cache key")
	}
}

func TestProgramCacheBounds(t *testing.T) {
	key := func(s string) [32]byte { return cacheKey(s, JavaScript) }
	prog := func(size int) *Program { return &Program{size: size} }

	c := newProgramCache(2, 100)
	c.put(key("a"), prog(10))
	c.put(key("b"), prog(10))
	c.get(key("a")) // a is now the most recent
	c.put(key("c"), prog(10))
	if c.get(key("b")) != nil || c.get(key("a")) == nil || c.get(key("c")) == nil {
		t.Fatal("the least recently used entry was not the one evicted")
	}

	c = newProgramCache(10, 100)
	c.put(key("a"), prog(60))
	c.put(key("b"), prog(60))
	if c.len() != 1 || c.get(key("b")) == nil {
		t.Fatal("the byte budget was not enforced")
	}
	c.put(key("huge"), prog(1000))
	if c.len() != 1 || c.get(key("huge")) == nil {
		t.Fatal("an entry larger than the budget must still be cached alone")
	}
}

func FuzzCompile(f *testing.F) {
	for _, s := range []string{
		"return 1", "const x: number = 1; return x", "})", "`${", "/(/", "'\\", "//# sourceMappingURL=x.map",
		"enum E { A } return E.A", "async function* g() {} ", "<T>(x: T) => x", "\xff", "[[[[]]]]", "/*",
		"namespace A { export const x = 1 }\nnamespace A { export const y = x }\nreturn A.y",
		"namespace A.B { export let c = 1 } namespace A { } namespace A.B { c++ }",
		"try { f(); o.m(1); o[k](...a); (0, g)(); h()(); new C(x()) } catch { } finally { z() }",
		"class A extends B { m() { try { super.m(); this.#p(); a?.b(); a.b?.() } catch (e) { eval('1') } } #p() {} }",
		"function* g() { try { yield f(yield); } finally { } } try { for (const x of g()) x() } catch {}",
		"try { return arguments.length } catch {}",
	} {
		f.Add(s, true)
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, src string, ts bool) {
		lang := JavaScript
		if ts {
			lang = TypeScript
		}
		p, err := Compile(src, lang)
		if err != nil {
			var fl *Failure
			if !errors.As(err, &fl) || fl.Kind != KindSyntax || fl.Message == "" {
				t.Fatalf("Compile(%q) error = %#v, want a syntax *Failure", src, err)
			}
			return
		}
		if p == nil || p.Lang() != lang {
			t.Fatalf("Compile(%q) returned %v without an error", src, p)
		}
	})
}

// The cache budgets a program at compiledPerSourceByte per byte of its source: for dense
// programs of several shapes, that is at least what the compiled program holds, so the
// cache's bound bounds its memory (it once counted source bytes only, and 64 MiB of them
// held about 1.7 GB of compiled programs).
func TestProgramSizeCoversTheCompiledProgram(t *testing.T) {
	for _, unit := range []string{"x+=1;", "f(1,2);", "[1,2,3];", "a.b.c;", "({a:1});", "`${x}`;", "if(x){x--}"} {
		source := "let x = 0; const a = {b: {c: 1}}; function f() {}\n" + strings.Repeat(unit, (32<<10)/len(unit))
		// The least of two compiles: background work (runs set up ahead) allocates too.
		var p *Program
		held := int64(math.MaxInt64)
		for range 2 {
			p = nil // the last compile's program is not counted in the next one's baseline
			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			var err error
			if p, err = compile(source, JavaScript); err != nil {
				t.Fatal(err)
			}
			runtime.GC()
			runtime.ReadMemStats(&after)
			held = min(held, int64(after.HeapAlloc)-int64(before.HeapAlloc))
			runtime.KeepAlive(p)
		}
		if int64(p.size) < held {
			t.Errorf("%q: the cache counts %d bytes for a program holding %d", unit, p.size, held)
		}
	}
}

// SetProgramCacheBytes shrinks the cache at once, keeping the most recently used program.
func TestSetProgramCacheBytes(t *testing.T) {
	defer SetProgramCacheBytes(cacheBytes)
	for i := range 4 {
		if _, err := Compile(fmt.Sprintf("return %d // %s", i, strings.Repeat("x", 1000)), JavaScript); err != nil {
			t.Fatal(err)
		}
	}
	last := fmt.Sprintf("return 3 // %s", strings.Repeat("x", 1000))
	SetProgramCacheBytes(1)
	if n := programs.len(); n != 1 || programs.get(cacheKey(last, JavaScript)) == nil {
		t.Fatalf("after shrinking, %d programs cached (want the last one alone)", n)
	}
}
