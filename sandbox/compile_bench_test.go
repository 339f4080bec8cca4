package sandbox_test

import (
	"strconv"
	"testing"

	"github.com/codemode/codemode/sandbox"
	"github.com/codemode/codemode/sandbox/sandboxtest"
)

// BenchmarkCompileUncached measures Compile of a program the cache has not
// seen (a trailing comment changes every op): lang=typescript strips types
// with esbuild before goja compiles; the floor, lang=javascript, compiles
// the same program written without types.
func BenchmarkCompileUncached(b *testing.B) {
	for _, c := range []struct {
		name string
		src  string
		lang sandbox.Lang
	}{{"lang=typescript", sandboxtest.TypicalTS, sandbox.TypeScript}, {"lang=javascript", sandboxtest.TypicalJS, sandbox.JavaScript}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			n := 0
			for b.Loop() {
				n++
				if _, err := sandbox.Compile(c.src+"// "+strconv.Itoa(n)+"\n", c.lang); err != nil {
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
	if _, err := sandbox.Compile(sandboxtest.TypicalTS, sandbox.TypeScript); err != nil {
		b.Fatal(err)
	}
	b.Run("lang=typescript", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := sandbox.Compile(sandboxtest.TypicalTS, sandbox.TypeScript); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("auto=typescript", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if p, err := sandbox.CompileAuto(sandboxtest.TypicalTS); err != nil || p.Lang() != sandbox.TypeScript {
				b.Fatal(err)
			}
		}
	})
}
