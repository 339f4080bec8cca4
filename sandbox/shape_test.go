package sandbox

import (
	"regexp"
	"strings"
	"testing"
)

func TestProgramShapes(t *testing.T) {
	tests := []struct {
		name, src, want string
	}{
		{"markdown fence", "```js\nconst x = 1 + 1\nreturn x\n```", `2`},
		{"markdown fence typescript", "```typescript\nconst x: number = 3\nreturn x\n```\n", `3`},
		{"fence without tag", "```\nreturn 'ok'\n```", `"ok"`},
		{"lone async arrow", "async () => {\n  const v = await Promise.resolve(5)\n  return v * 2\n}", `10`},
		{"lone async arrow with semicolon", "async () => { return 'a' };", `"a"`},
		{"lone parenthesized function", "(async function () { return [1, 2] })", `[1,2]`},
		{"lone async function main", "async function main() {\n  return {ok: true}\n}", `{"ok":true}`},
		{"lone function with another name", "function run() { return 42 }", `42`},
		{"declarations and main", "const base = 10\nfunction helper(x) { return x + base }\nasync function main() { return helper(await Promise.resolve(1)) }", `11`},
		{"export default async function", "export default async function main() {\n  return 'default'\n}", `"default"`},
		{"export default arrow", "export default async () => {\n  return 7\n}", `7`},
		{"export default anonymous function", "export default function () { return 8 }", `8`},
		{"export default name", "async function main() { return 9 }\nexport default main", `9`},
		{"export default value", "export default {a: 1}", `{"a":1}`},
		{"unawaited async IIFE", "(async () => {\n  const v = await new Promise(r => setTimeout(() => r('late'), 5))\n  return v\n})()", `"late"`},
		{"main called but not awaited", "async function main() {\n  await new Promise(r => setTimeout(r, 5))\n  return 'done'\n}\nmain()", `"done"`},
		{"main().catch", "async function main() { return 'caught?' }\nmain().catch(e => console.error(e));", `"caught?"`},
		{"await main()", "async function main() { return 3 }\nawait main()", `3`},
		{"last call after a statement without semicolon", "const x = 2\n  await Promise.resolve(x)", `2`},
		{"console call stays last", "console.log('x')", ``},
		{"explicit return wins", "if (true) return 1\nmain()\nfunction main() { return 2 }", `1`},
		{"export keywords dropped", "export const a = 1\nexport function f() { return a + 1 }\nexport { a }\nreturn f()", `2`},
		{"export on class", "export class K { v() { return 'k' } }\nreturn new K().v()", `"k"`},
		{"property named export and import", "const o = {export: 1, import: 2}; return o.export + o.import", `3`},
		{"import inside a string", "return 'import x from \"y\"'", `"import x from \"y\""`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := CompileAuto(tt.src)
			if err != nil {
				t.Fatalf("compile: %v", err)
			}
			res := Run(t.Context(), p, nil, Options{})
			if tt.want == "" {
				if res.Err != nil || res.Value != nil {
					t.Fatalf("got %s %v, want no value", res.Value, res.Err)
				}
				return
			}
			wantValue(t, res, tt.want)
		})
	}
}

func TestTypeScriptShapes(t *testing.T) {
	runValueCases(t, []valueCase{
		{"import type", "import type { Foo } from './foo'\nconst f: Foo = {} as any\nreturn typeof f", `"object"`},
		{"import type default", "import type Foo from 'foo'\nlet x: Foo | null = null\nreturn x", `null`},
		{"export interface and type", "export interface P { x: number }\nexport type Q = P & { y: string }\nconst q: Q = { x: 1, y: 'a' }\nreturn q", `{"x":1,"y":"a"}`},
		{"export type list", "type A = number\nexport type { A }\nconst a: A = 1\nreturn a", `1`},
		{"enum", "export enum Level { Low = 1, High = 3 }\nreturn [Level.Low, Level[3]]", `[1,"High"]`},
		{"const enum", "const enum E { A = 'a' }\nreturn E.A", `"a"`},
		{"decorator", "function tag(value: any, ctx: ClassMethodDecoratorContext) { return function (this: any, ...args: any[]) { return 'tagged:' + value.apply(this, args) } }\nclass S { @tag hello() { return 'hi' } }\nreturn new S().hello()", `"tagged:hi"`},
		{"export default async function main typed", "export default async function main(): Promise<number> {\n  const x: number = await Promise.resolve(4)\n  return x\n}", `4`},
		{"abstract class", "abstract class A { abstract f(): number; g() { return this.f() + 1 } }\nclass B extends A { f() { return 1 } }\nreturn new B().g()", `2`},
		{"generics and satisfies", "const cfg = { retries: 3 } satisfies Record<string, number>\nfunction first<T>(xs: T[]): T | undefined { return xs[0] }\nreturn first([cfg.retries])", `3`},
	})
}

func TestModuleSyntaxFailsClearly(t *testing.T) {
	tests := []struct {
		name, src, at string
	}{
		{"value import", "const a = 1\nimport fs from 'fs'\nreturn a", "(at line 2:1)"},
		{"named import", "import { readFile } from 'node:fs/promises'", "(at line 1:1)"},
		{"side-effect import", "import 'zod'", "(at line 1:1)"},
		{"dynamic import", "const m = await import('node:fs')", "(at line 1:17)"},
		{"typescript value import", "import { z } from 'zod'\nconst n: number = 1", "(at line 1:1)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := CompileAuto(tt.src)
			if err == nil {
				t.Fatal("compiled")
			}
			msg := err.Error()
			for _, want := range []string{"syntax:", "tools", tt.at} {
				if !strings.Contains(msg, want) {
					t.Fatalf("message %q does not contain %q", msg, want)
				}
			}
		})
	}
}

func TestHostGlobalsExplainThemselves(t *testing.T) {
	for _, name := range []string{"require", "process", "fetch", "Buffer"} {
		t.Run(name, func(t *testing.T) {
			src := "const x = 1\nconst y = " + name + "('x')"
			if name == "process" {
				src = "const x = 1\nconst y = process.env.HOME"
			}
			res := runJS(t, src, nil)
			wantFailure(t, res, KindRuntime, "ReferenceError: "+name+" is not defined: ", "(at line 2:")
			if name != "Buffer" && !strings.Contains(res.Err.Message, "tools") {
				t.Fatalf("message %q does not point at tools", res.Err.Message)
			}
		})
	}
	// Feature detection keeps working: the names are simply absent.
	wantValue(t, runJS(t, `return [typeof require, typeof process, typeof fetch, typeof window]`, nil), `["undefined","undefined","undefined","undefined"]`)
}

func TestPositionsAreTheModelsOwn(t *testing.T) {
	tests := []struct {
		name, src, want string
	}{
		{"first line column", "null.x", "(at line 1:"},
		{"stack line numbers", "function f() { return new Error('e').stack }\nconst s = f()\nreturn s", ""},
		{"after a fence", "```js\nconst a = 1\nnull.x\n```", "(at line 3:"},
		{"reshaped call", "async function main() {\n  null.x\n}\nmain()", "(at line 2:"},
		{"typescript one line", "const x: any = null; x.y.z", "(at line 1:"},
		{"typescript lowered for await", "async function* g() { yield 1 }\nfor await (const v of g()) {\n  throw new Error('in loop: ' + v)\n}", "Error: in loop: 1 (at line 3:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := CompileAuto(tt.src)
			if err != nil {
				t.Fatalf("compile: %v", err)
			}
			res := Run(t.Context(), p, nil, Options{})
			if tt.want == "" {
				// Line numbers are the model's (columns on the first line include the wrapper).
				if res.Err != nil || !regexp.MustCompile(`at f \(program\.js:1:\d+\(\d+\)\)\\n\\tat program\.js:2:1[12]\(`).Match(res.Value) {
					t.Fatalf("stack = %s %v", res.Value, res.Err)
				}
				return
			}
			wantFailure(t, res, KindRuntime, tt.want)
		})
	}
	// Syntax errors: the column on the first line is the model's, not the wrapper's.
	_, err := Compile("const = 1", JavaScript)
	if err == nil || !strings.Contains(err.Error(), "(at line 1:7)") {
		t.Fatalf("err = %v", err)
	}
}

// TypeScript allows namespaces only at a file's top level; a program is a function body, so
// each top-level declaration is compiled on its own and the lines after it keep their numbers.
func TestTypeScriptNamespaces(t *testing.T) {
	ts := func(src string) Result { return runLang(t, src, TypeScript, nil, Options{}) }
	tests := []struct{ name, src, want string }{
		{"namespace", "namespace N { export const x = 1 }\nreturn N.x", `1`},
		{"exported namespace with a function", "export namespace N {\n  export const x = 1\n  export function f(): number { return x + 1 }\n}\nreturn [N.f(), N.x]", `[2,1]`},
		{"module keyword", "module M { export const y: number = 2 }; return M.y", `2`},
		{"dotted name", "namespace A.B { export const c = 3 }\nreturn A.B.c", `3`},
		{"ambient declaration", "declare namespace D { const q: number }\nreturn typeof D", `"undefined"`},
		{"nested in a block stays a syntax error's business", "const module = {exports: 4}; return module.exports", `4`},
		{"enum inside", "namespace E { export enum Color { Red, Green } }\nreturn E.Color.Green", `1`},
		// A declaration merges with the earlier ones of its name and sees their exports
		// unqualified, as tsc compiles it; what they do not export stays theirs.
		{"merged declarations", "namespace A { export const x = 1; const hidden = 5 }\nconst between = 10\nnamespace A { export const y: number = x + 1; export function f() { return typeof hidden } }\nnamespace B { export const x = 100 }\nnamespace A { export const z = y + x + between }\nreturn [A.x, A.y, A.z, A.f(), B.x]", `[1,2,13,"undefined",100]`},
		{"merged dotted declarations", "namespace A.B { export const c = 3 }\nnamespace A.B { export const d = c * 2 }\nnamespace A { export const e = B.d + 1 }\nreturn [A.B.c, A.B.d, A.e]", `[3,6,7]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { wantValue(t, ts(tt.src), tt.want) })
	}
	// Positions after a declaration are the model's own.
	wantFailure(t, ts("namespace N {\n  export const a = 1\n}\nthrow new Error('at four ' + N.a)"), KindRuntime, "at four 1", "line 4")
	// A syntax error inside one names its own line.
	_, err := Compile("const ok = 1\nnamespace N {\n  let y = \n}\nreturn ok", TypeScript)
	if err == nil || !strings.Contains(err.Error(), "line 4:1") {
		t.Fatalf("compile error = %v, want one at line 4:1", err)
	}
	// So does one in a later declaration of a merged namespace.
	_, err = Compile("namespace N {\n  export const a = 1\n}\nnamespace N {\n  export const b = a +\n}\nreturn N.b", TypeScript)
	if err == nil || !strings.Contains(err.Error(), "line 6:1") {
		t.Fatalf("compile error = %v, want one at line 6:1", err)
	}
	_, err = Compile("namespace N { export const a = 1 }\nnamespace N { export const b = ) }", TypeScript)
	if err == nil || !strings.Contains(err.Error(), "line 2:32") {
		t.Fatalf("compile error = %v, want one at line 2:32", err)
	}
}
