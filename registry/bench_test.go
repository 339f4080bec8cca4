package registry_test

import (
	"fmt"
	"testing"

	"github.com/codemode/codemode/registry"
)

// benchRegistry: 200 globals, a three-level chain of scopes with local tools
// and a restriction at each level.
func benchRegistry(b *testing.B) *registry.Registry {
	r := registry.New()
	r.SetCodeTransport(transport(b))
	for i := range 200 {
		mustRegister(b, r, registry.Global, newTool(b, fmt.Sprintf("g%03d", i)))
	}
	parent := registry.Global
	for _, s := range []string{"a", "b", "c"} {
		mustScope(b, r, s, parent, registry.ModeBoth)
		for i := range 10 {
			mustRegister(b, r, s, newTool(b, fmt.Sprintf("%s%d", s, i)))
		}
		mustRestrict(b, r, s, registry.Filter{Deny: []string{"g000", "g001"}})
		parent = s
	}
	return r
}

// BenchmarkViewCached is the per-call cost when nothing changed.
func BenchmarkViewCached(b *testing.B) {
	r := benchRegistry(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := r.View("c"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkViewResolve is the cost of the first call after a change.
func BenchmarkViewResolve(b *testing.B) {
	r := benchRegistry(b)
	extra := newTool(b, "extra")
	b.ReportAllocs()
	for b.Loop() {
		un := mustRegister(b, r, registry.Global, extra)
		if _, err := r.View("c"); err != nil {
			b.Fatal(err)
		}
		un()
	}
}
