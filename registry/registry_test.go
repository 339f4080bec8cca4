package registry_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/codemode/codemode/registry"
	"github.com/codemode/codemode/registry/frozen"
	"github.com/codemode/codemode/registry/schema"
)

func TestDuplicateNamesWithinALayer(t *testing.T) {
	r := registry.New()
	mustScope(t, r, "s", registry.Global, registry.ModeNative)
	mustScope(t, r, "sibling", registry.Global, registry.ModeNative)
	mustRegister(t, r, registry.Global, newTool(t, "x"))
	mustRegister(t, r, "s", newTool(t, "x"))       // same name, another layer
	mustRegister(t, r, "sibling", newTool(t, "x")) // and a third
	for _, layer := range []string{registry.Global, "s", "sibling"} {
		if _, err := r.Register(layer, newTool(t, "x")); err == nil || !strings.Contains(err.Error(), `"x"`) {
			t.Errorf("duplicate in %q: err = %v", layer, err)
		}
	}
	if _, err := r.Register("nope", newTool(t, "y")); !errors.Is(err, registry.ErrNotFound) {
		t.Errorf("register in unknown scope: %v", err)
	}
	if _, err := r.Register(registry.Global, nil); err == nil {
		t.Error("registering nil accepted")
	}
}

func TestUnregisterRemovesExactlyItsRegistration(t *testing.T) {
	for _, layer := range []string{registry.Global, "s"} {
		t.Run("layer "+layer, func(t *testing.T) {
			r := registry.New()
			mustScope(t, r, "s", registry.Global, registry.ModeNative)
			old := mustRegister(t, r, layer, newTool(t, "x"))
			old()
			if _, ok := mustView(t, r, layer).Get("x"); ok {
				t.Fatal("x still visible after unregister")
			}
			second := newTool(t, "x")
			unSecond := mustRegister(t, r, layer, second)
			old() // stale: must not remove the new registration
			if got, ok := mustView(t, r, layer).Get("x"); !ok || got != second {
				t.Fatal("a stale unregister removed a newer registration")
			}
			unSecond()
			unSecond() // idempotent
			if _, ok := mustView(t, r, layer).Get("x"); ok {
				t.Fatal("x still visible")
			}
		})
	}
}

func TestScopeRegistrationsDisappearWithTheScope(t *testing.T) {
	r := registry.New()
	mustScope(t, r, "s", registry.Global, registry.ModeNative)
	mustScope(t, r, "child", "s", registry.ModeNative)
	un := mustRegister(t, r, "s", newTool(t, "local"))
	mustRegister(t, r, registry.Global, newTool(t, "g"))

	if err := r.RemoveScope("s"); err == nil || !strings.Contains(err.Error(), "child") {
		t.Fatalf("removing a scope with a child: %v", err)
	}
	if err := r.RemoveScope("child"); err != nil {
		t.Fatal(err)
	}
	if err := r.RemoveScope("s"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.View("s"); !errors.Is(err, registry.ErrNotFound) {
		t.Fatalf("view of a removed scope: %v", err)
	}
	if err := r.RemoveScope("s"); !errors.Is(err, registry.ErrNotFound) {
		t.Fatalf("removing twice: %v", err)
	}

	mustScope(t, r, "s", registry.Global, registry.ModeNative)
	wantNames(t, "recreated scope", visible(t, r, "s"), "g")
	again := newTool(t, "local")
	mustRegister(t, r, "s", again)
	un() // belongs to the removed scope: a no-op
	if got, ok := mustView(t, r, "s").Get("local"); !ok || got != again {
		t.Fatal("an unregister from a removed scope hit the recreated scope")
	}
}

func TestScopeLifecycleErrors(t *testing.T) {
	r := registry.New()
	mustScope(t, r, "a", registry.Global, registry.ModeBoth)
	cases := []struct {
		name string
		err  error
		is   error
	}{
		{"empty name", r.CreateScope("", registry.Global, registry.ModeNative), nil},
		{"invalid mode", r.CreateScope("b", registry.Global, "turbo"), nil},
		{"duplicate", r.CreateScope("a", registry.Global, registry.ModeNative), nil},
		{"unknown parent", r.CreateScope("b", "ghost", registry.ModeNative), registry.ErrNotFound},
		{"set mode unknown scope", r.SetMode("ghost", registry.ModeCode), registry.ErrNotFound},
		{"set invalid mode", r.SetMode("a", ""), nil},
		{"remove unknown", r.RemoveScope("ghost"), registry.ErrNotFound},
		{"invalid global mode", r.SetGlobalMode("x"), nil},
	}
	for _, tc := range cases {
		if tc.err == nil {
			t.Errorf("%s: accepted", tc.name)
			continue
		}
		if tc.is != nil && !errors.Is(tc.err, tc.is) {
			t.Errorf("%s: %v is not %v", tc.name, tc.err, tc.is)
		}
	}
	if r.HasScope("b") {
		t.Error("a rejected scope was created")
	}
	if _, err := r.View("ghost"); !errors.Is(err, registry.ErrNotFound) {
		t.Errorf("view of unknown scope: %v", err)
	}
	if mustView(t, r, "a").Mode() != registry.ModeBoth {
		t.Error("a failed SetMode changed the mode")
	}
}

func TestScopeTree(t *testing.T) {
	r := registry.New()
	mustScope(t, r, "root", registry.Global, registry.ModeNative)
	mustScope(t, r, "mid", "root", registry.ModeNative)
	mustScope(t, r, "leaf", "mid", registry.ModeNative)
	mustScope(t, r, "alpha", registry.Global, registry.ModeNative)
	wantNames(t, "Scopes", r.Scopes(), "alpha", "leaf", "mid", "root")
	wantNames(t, "Ancestry(leaf)", r.Ancestry("leaf"), "leaf", "mid", "root")
	wantNames(t, "Ancestry(global)", r.Ancestry(registry.Global))
	wantNames(t, "Ancestry(unknown)", r.Ancestry("ghost"))
	for name, want := range map[string]bool{registry.Global: true, "leaf": true, "ghost": false} {
		if r.HasScope(name) != want {
			t.Errorf("HasScope(%q) = %v", name, !want)
		}
	}
	if v := mustView(t, r, "leaf"); v.Scope() != "leaf" {
		t.Errorf("view scope %q", v.Scope())
	}
}

func TestScopedToolVisibility(t *testing.T) {
	r := registry.New()
	mustScope(t, r, "a", registry.Global, registry.ModeNative)
	mustScope(t, r, "a1", "a", registry.ModeNative)
	mustScope(t, r, "a1x", "a1", registry.ModeNative)
	mustScope(t, r, "b", registry.Global, registry.ModeNative)
	local := newTool(t, "local")
	mustRegister(t, r, "a", local)
	for scope, want := range map[string]bool{"a": true, "a1": true, "a1x": true, "b": false, registry.Global: false} {
		got, ok := mustView(t, r, scope).Get("local")
		if ok != want || (ok && got != local) {
			t.Errorf("Get(local) in %q: %v, want %v", scope, ok, want)
		}
	}
	if _, ok := mustView(t, r, "a").Get("nothing"); ok {
		t.Error("Get found an unknown tool")
	}
}

func TestScopedToolShadowsGlobalWhicheverCameFirst(t *testing.T) {
	for _, globalFirst := range []bool{true, false} {
		t.Run(fmt.Sprintf("globalFirst=%v", globalFirst), func(t *testing.T) {
			r := registry.New()
			mustScope(t, r, "s", registry.Global, registry.ModeNative)
			mustScope(t, r, "child", "s", registry.ModeNative)
			g, l := newTool(t, "x"), newTool(t, "x")
			if globalFirst {
				mustRegister(t, r, registry.Global, g)
				mustRegister(t, r, "s", l)
			} else {
				mustRegister(t, r, "s", l)
				mustRegister(t, r, registry.Global, g)
			}
			for scope, want := range map[string]*registry.Tool{"s": l, "child": l, registry.Global: g} {
				v := mustView(t, r, scope)
				if got, _ := v.Get("x"); got != want {
					t.Errorf("Get(x) in %q picked the wrong definition", scope)
				}
				if n := len(v.SDKTools()); n != 1 {
					t.Errorf("%q lists %d tools, want 1", scope, n)
				}
			}
		})
	}
}

func TestNearerAncestorShadowsFarther(t *testing.T) {
	r := registry.New()
	mustScope(t, r, "a", registry.Global, registry.ModeNative)
	mustScope(t, r, "b", "a", registry.ModeNative)
	mustScope(t, r, "c", "b", registry.ModeNative)
	g, ta, tb := newTool(t, "x"), newTool(t, "x"), newTool(t, "x")
	mustRegister(t, r, "b", tb) // nearer first
	mustRegister(t, r, "a", ta)
	mustRegister(t, r, registry.Global, g)
	for scope, want := range map[string]*registry.Tool{"c": tb, "b": tb, "a": ta, registry.Global: g} {
		if got, _ := mustView(t, r, scope).Get("x"); got != want {
			t.Errorf("Get(x) in %q picked the wrong definition", scope)
		}
	}
}

// restrictFixture: globals g1..g3, scope p (owns p1) with child s (owns own).
func restrictFixture(t *testing.T) *registry.Registry {
	t.Helper()
	r := registry.New()
	for _, n := range []string{"g1", "g2", "g3"} {
		mustRegister(t, r, registry.Global, newTool(t, n))
	}
	mustScope(t, r, "p", registry.Global, registry.ModeNative)
	mustScope(t, r, "s", "p", registry.ModeNative)
	mustRegister(t, r, "p", newTool(t, "p1"))
	mustRegister(t, r, "s", newTool(t, "own"))
	return r
}

func TestRestrictionsMaskInheritedToolsOnly(t *testing.T) {
	cases := []struct {
		name    string
		filters []registry.Filter
		want    []string
	}{
		{"none", nil, []string{"g1", "g2", "g3", "own", "p1"}},
		{"allow global", []registry.Filter{{Allow: []string{"g1"}}}, []string{"g1", "own"}},
		{"deny global", []registry.Filter{{Deny: []string{"g2"}}}, []string{"g1", "g3", "own", "p1"}},
		{"deny ancestor tool", []registry.Filter{{Deny: []string{"p1"}}}, []string{"g1", "g2", "g3", "own"}},
		{"allow ancestor tool", []registry.Filter{{Allow: []string{"p1", "g3"}}}, []string{"g3", "own", "p1"}},
		{"allows intersect", []registry.Filter{{Allow: []string{"g1", "g2"}}, {Allow: []string{"g2", "g3"}}}, []string{"g2", "own"}},
		{"allow and deny intersect", []registry.Filter{{Allow: []string{"g1", "g2", "p1"}}, {Deny: []string{"g1"}}}, []string{"g2", "own", "p1"}},
		{"disjoint allows leave only own", []registry.Filter{{Allow: []string{"g1"}}, {Allow: []string{"g2"}}}, []string{"own"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := restrictFixture(t)
			for _, f := range tc.filters {
				mustRestrict(t, r, "s", f)
			}
			wantNames(t, "s", visible(t, r, "s"), tc.want...)
			wantNames(t, "p unaffected", visible(t, r, "p"), "g1", "g2", "g3", "p1")
			wantNames(t, "global unaffected", visible(t, r, registry.Global), "g1", "g2", "g3")
		})
	}
}

func TestRestrictionsAlongTheChainIntersect(t *testing.T) {
	r := restrictFixture(t)
	mustRestrict(t, r, "p", registry.Filter{Allow: []string{"g1", "g2"}})
	mustRestrict(t, r, "s", registry.Filter{Deny: []string{"g2"}})
	wantNames(t, "p", visible(t, r, "p"), "g1", "g2", "p1")
	wantNames(t, "s", visible(t, r, "s"), "g1", "own")
}

func TestOwnToolExemptFromInheritedMask(t *testing.T) {
	r := restrictFixture(t)
	mustRestrict(t, r, "s", registry.Filter{Deny: []string{"g1"}})
	shadow := newTool(t, "g1")
	un := mustRegister(t, r, "s", shadow)
	if got, ok := mustView(t, r, "s").Get("g1"); !ok || got != shadow {
		t.Fatal("a deny mask hid the scope's own registration")
	}
	un()
	if _, ok := mustView(t, r, "s").Get("g1"); ok {
		t.Fatal("the inherited g1 came back through the deny mask")
	}
}

func TestRemovingARestrictionLiftsOnlyIt(t *testing.T) {
	r := restrictFixture(t)
	rm1 := mustRestrict(t, r, "s", registry.Filter{Deny: []string{"g1"}})
	rm2 := mustRestrict(t, r, "s", registry.Filter{Deny: []string{"g2"}})
	wantNames(t, "both", visible(t, r, "s"), "g3", "own", "p1")
	rm1()
	wantNames(t, "after removing the first", visible(t, r, "s"), "g1", "g3", "own", "p1")
	rm1() // a second call is a no-op
	wantNames(t, "after removing the first twice", visible(t, r, "s"), "g1", "g3", "own", "p1")
	rm2()
	wantNames(t, "none", visible(t, r, "s"), "g1", "g2", "g3", "own", "p1")
}

func TestMasksAndLaterRegistrations(t *testing.T) {
	r := restrictFixture(t)
	mustScope(t, r, "denied", registry.Global, registry.ModeNative)
	mustScope(t, r, "allowed", registry.Global, registry.ModeNative)
	mustRestrict(t, r, "denied", registry.Filter{Deny: []string{"g1"}})
	mustRestrict(t, r, "allowed", registry.Filter{Allow: []string{"g1"}})
	mustRegister(t, r, registry.Global, newTool(t, "later"))
	wantNames(t, "deny admits later globals", visible(t, r, "denied"), "g2", "g3", "later")
	wantNames(t, "allow excludes later names", visible(t, r, "allowed"), "g1")
}

func TestFiltersAreSnapshotted(t *testing.T) {
	r := restrictFixture(t)
	mustScope(t, r, "a", registry.Global, registry.ModeNative)
	mustScope(t, r, "d", registry.Global, registry.ModeNative)
	allow := []string{"g1"}
	deny := []string{"g1"}
	mustRestrict(t, r, "a", registry.Filter{Allow: allow})
	mustRestrict(t, r, "d", registry.Filter{Deny: deny})
	allow[0], deny[0] = "g2", "g2"
	wantNames(t, "allow", visible(t, r, "a"), "g1")
	wantNames(t, "deny", visible(t, r, "d"), "g2", "g3")
}

func TestRestrictRejects(t *testing.T) {
	cases := []struct {
		name  string
		scope string
		f     registry.Filter
		is    error
		want  string
	}{
		{"global scope", registry.Global, registry.Filter{Deny: []string{"g1"}}, nil, "global"},
		{"empty filter", "s", registry.Filter{}, nil, "empty"},
		{"empty lists", "s", registry.Filter{Allow: []string{}, Deny: []string{}}, nil, "empty"},
		{"both lists", "s", registry.Filter{Allow: []string{"g1"}, Deny: []string{"g2"}}, nil, "both"},
		{"not inherited", "s", registry.Filter{Deny: []string{"nope"}}, nil, "nope"},
		{"sibling's tool", "p", registry.Filter{Deny: []string{"own"}}, nil, "own"},
		{"own tool", "s", registry.Filter{Allow: []string{"g1", "own"}}, nil, "own"},
		{"own tool shadowing an inherited one", "s", registry.Filter{Deny: []string{"g3"}}, nil, "own tool"},
		{"run_code deny", "s", registry.Filter{Deny: []string{registry.RunCode}}, nil, registry.RunCode},
		{"run_code allow", "s", registry.Filter{Allow: []string{"g1", registry.RunCode}}, nil, registry.RunCode},
		{"unknown scope", "ghost", registry.Filter{Deny: []string{"g1"}}, registry.ErrNotFound, "ghost"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := restrictFixture(t)
			r.SetCodeTransport(transport(t))
			mustRegister(t, r, "s", newTool(t, "g3")) // s's own g3 shadows the global
			before := visible(t, r, "s")
			rm, err := r.Restrict(tc.scope, tc.f)
			if err == nil {
				t.Fatal("restriction accepted")
			}
			if rm != nil {
				t.Error("a rejected restriction returned a remove function")
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("error %v is not %v", err, tc.is)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not mention %q", err, tc.want)
			}
			wantNames(t, "view unchanged", visible(t, r, "s"), before...)
		})
	}
}

func TestRestrictionRemovalAfterScopeRecreated(t *testing.T) {
	r := restrictFixture(t)
	mustScope(t, r, "x", registry.Global, registry.ModeNative)
	rm := mustRestrict(t, r, "x", registry.Filter{Deny: []string{"g1"}})
	if err := r.RemoveScope("x"); err != nil {
		t.Fatal(err)
	}
	mustScope(t, r, "x", registry.Global, registry.ModeNative)
	wantNames(t, "restriction gone with the scope", visible(t, r, "x"), "g1", "g2", "g3")
	keep := mustRestrict(t, r, "x", registry.Filter{Deny: []string{"g2"}})
	defer keep()
	fired := 0
	defer r.OnChange(func() { fired++ })()
	rm() // belongs to the removed scope
	if fired != 0 {
		t.Error("a stale restriction remove reported a change")
	}
	wantNames(t, "new restriction kept", visible(t, r, "x"), "g1", "g3")
}

func TestRunCodeCannotBeRegistered(t *testing.T) {
	r := registry.New()
	mustScope(t, r, "s", registry.Global, registry.ModeCode)
	r.SetCodeTransport(transport(t))
	rc := r.CodeTransport()
	if rc == nil || rc.Name() != registry.RunCode {
		t.Fatalf("installed transport is named %q, want %q", rc.Name(), registry.RunCode)
	}
	for _, layer := range []string{registry.Global, "s"} {
		if _, err := r.Register(layer, rc); err == nil || !strings.Contains(err.Error(), "reserved") {
			t.Errorf("registering run_code in %q: %v", layer, err)
		}
	}
	if got, _ := mustView(t, r, "s").Get(registry.RunCode); got != rc {
		t.Error("run_code does not resolve to the transport")
	}
}

// The transport is run_code from its definition: Define and Raw refuse the
// name, DefineCodeTransport wants it, SetCodeTransport installs the very tool
// and refuses any other.
func TestCodeTransportIsDefinedAsRunCode(t *testing.T) {
	if _, err := registry.Define(registry.Definition{Name: registry.RunCode, Output: str(), Behavior: registry.Behavior{Execute: returning("")}}); err == nil || !strings.Contains(err.Error(), "reserved") {
		t.Errorf("Define(run_code): %v", err)
	}
	if _, err := registry.Raw(registry.RawDefinition{Name: registry.RunCode, Output: json.RawMessage(`{}`), Behavior: registry.Behavior{Execute: returning("")}}); err == nil || !strings.Contains(err.Error(), "reserved") {
		t.Errorf("Raw(run_code): %v", err)
	}
	if _, err := registry.DefineCodeTransport(registry.Definition{Name: "transport", Output: str(), Behavior: registry.Behavior{Execute: returning("")}}); err == nil {
		t.Error("DefineCodeTransport took another name")
	}
	r := registry.New()
	tr := transport(t)
	r.SetCodeTransport(tr)
	if r.CodeTransport() != tr {
		t.Fatal("SetCodeTransport installed a copy, not the tool")
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("SetCodeTransport took a tool not named run_code")
			}
		}()
		r.SetCodeTransport(newTool(t, "other"))
	}()
	if r.CodeTransport() != tr {
		t.Fatal("a refused SetCodeTransport changed the transport")
	}
	r.SetCodeTransport(nil)
	if r.CodeTransport() != nil {
		t.Fatal("transport not removed")
	}
	if err := r.SetGlobalMode(registry.ModeCode); err != nil {
		t.Fatal(err)
	}
	if _, ok := mustView(t, r, registry.Global).Get(registry.RunCode); ok {
		t.Fatal("run_code visible with no transport installed")
	}
}

func TestModes(t *testing.T) {
	cases := []struct {
		mode        registry.Mode
		transport   bool
		model       []string
		getRunCode  bool
		directly    map[string]bool
		sdk         []string
		schemaNames []string
	}{
		{registry.ModeNative, true, []string{"alpha", "zeta"}, false,
			map[string]bool{"alpha": true, "zeta": true}, []string{"alpha", "zeta"}, []string{"alpha", "zeta"}},
		{registry.ModeCode, true, []string{registry.RunCode}, true,
			map[string]bool{"alpha": false, "zeta": false, registry.RunCode: true}, []string{"alpha", "zeta"}, []string{registry.RunCode}},
		// run_code comes first, so that a client reading one page of a long list finds it.
		{registry.ModeBoth, true, []string{registry.RunCode, "alpha", "zeta"}, true,
			map[string]bool{"alpha": true, "zeta": true, registry.RunCode: true}, []string{"alpha", "zeta"}, []string{registry.RunCode, "alpha", "zeta"}},
		{registry.ModeCode, false, []string{}, false,
			map[string]bool{"alpha": false, registry.RunCode: true}, []string{"alpha", "zeta"}, []string{}},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("%s transport=%v", tc.mode, tc.transport), func(t *testing.T) {
			for _, scope := range []string{registry.Global, "s"} {
				r := registry.New()
				if tc.transport {
					r.SetCodeTransport(transport(t))
				}
				mustRegister(t, r, registry.Global, newTool(t, "zeta"))
				if scope == registry.Global {
					if err := r.SetGlobalMode(tc.mode); err != nil {
						t.Fatal(err)
					}
				} else {
					mustScope(t, r, scope, registry.Global, tc.mode)
				}
				mustRegister(t, r, scope, newTool(t, "alpha"))
				v := mustView(t, r, scope)
				if v.Mode() != tc.mode {
					t.Fatalf("mode %q", v.Mode())
				}
				wantNames(t, "ModelTools", toolNames(v.ModelTools()), tc.model...)
				wantNames(t, "SDKTools", toolNames(v.SDKTools()), tc.sdk...)
				var names []string
				for _, s := range v.Schemas() {
					names = append(names, s.Name)
				}
				wantNames(t, "Schemas", names, tc.schemaNames...)
				if rc, ok := v.Get(registry.RunCode); ok != tc.getRunCode || (ok && rc.Name() != registry.RunCode) {
					t.Fatalf("Get(run_code) ok=%v, want %v", ok, tc.getRunCode)
				}
				for name, want := range tc.directly {
					if v.DirectlyCallable(name) != want {
						t.Errorf("DirectlyCallable(%q) = %v", name, !want)
					}
				}
			}
		})
	}
}

func TestSetModeIsLive(t *testing.T) {
	r := registry.New()
	r.SetCodeTransport(transport(t))
	mustScope(t, r, "s", registry.Global, registry.ModeNative)
	before := mustView(t, r, "s")
	if err := r.SetMode("s", registry.ModeCode); err != nil {
		t.Fatal(err)
	}
	after := mustView(t, r, "s")
	if after.Mode() != registry.ModeCode {
		t.Fatalf("mode after SetMode: %q", after.Mode())
	}
	if _, ok := after.Get(registry.RunCode); !ok {
		t.Fatal("run_code missing after switching to code")
	}
	if before.Mode() != registry.ModeNative {
		t.Fatal("an old view changed mode")
	}
	if _, ok := before.Get(registry.RunCode); ok {
		t.Fatal("an old view gained run_code")
	}
}

func TestViewsAreLiveAndImmutable(t *testing.T) {
	r := registry.New()
	mustScope(t, r, "s", registry.Global, registry.ModeNative)
	mustRegister(t, r, registry.Global, newTool(t, "a"))
	v1 := mustView(t, r, "s")
	if again := mustView(t, r, "s"); again != v1 {
		t.Error("View without a change did not reuse the resolved view")
	}
	un := mustRegister(t, r, registry.Global, newTool(t, "b"))
	v2 := mustView(t, r, "s")
	wantNames(t, "old view", toolNames(v1.SDKTools()), "a")
	wantNames(t, "new view", toolNames(v2.SDKTools()), "a", "b")
	if _, ok := v1.Get("b"); ok {
		t.Error("an old view sees a later registration")
	}
	if v2.Generation() <= v1.Generation() {
		t.Errorf("generation %d after %d", v2.Generation(), v1.Generation())
	}
	mustRestrict(t, r, "s", registry.Filter{Deny: []string{"a"}})
	v3 := mustView(t, r, "s")
	wantNames(t, "restricted", toolNames(v3.SDKTools()), "b")
	un()
	wantNames(t, "after unregister", visible(t, r, "s"))
	wantNames(t, "v2 unchanged", toolNames(v2.SDKTools()), "a", "b")
	wantNames(t, "v3 unchanged", toolNames(v3.SDKTools()), "b")

	// Lists handed out are the caller's.
	list := v2.SDKTools()
	list[0] = nil
	wantNames(t, "v2 after caller mutation", toolNames(v2.SDKTools()), "a", "b")
}

func TestSchemasAreCopies(t *testing.T) {
	r := registry.New()
	tool := registry.MustDefine(registry.Definition{
		Name:        "t",
		Description: "desc",
		Parameters:  &schema.Node{Type: "object", Properties: map[string]*schema.Node{"p": str()}},
		Output:      str(),
		Behavior:    registry.Behavior{Execute: returning("x")},
	})
	mustRegister(t, r, registry.Global, tool)
	v := mustView(t, r, registry.Global)
	first := v.Schemas()
	wantParams, wantOut := string(first[0].Parameters), string(first[0].OutputSchema)
	for i := range first[0].Parameters {
		first[0].Parameters[i] = 'X'
	}
	for i := range first[0].OutputSchema {
		first[0].OutputSchema[i] = 'Y'
	}
	first[0].Name, first[0].Description = "renamed", "changed"
	p := tool.Parameters()
	p[0] = 'Z'

	second := v.Schemas()
	if string(second[0].Parameters) != wantParams || string(second[0].OutputSchema) != wantOut {
		t.Fatalf("schemas changed after mutating a copy: %s %s", second[0].Parameters, second[0].OutputSchema)
	}
	if second[0].Name != "t" || second[0].Description != "desc" {
		t.Fatalf("schema name/description changed: %+v", second[0])
	}
	if string(tool.Parameters()) != wantParams {
		t.Fatal("Parameters() hands out shared bytes")
	}
	if !json.Valid(second[0].Parameters) || !strings.Contains(wantParams, `"p"`) {
		t.Fatalf("parameters %s", wantParams)
	}
}

func TestSchemasCarryNoHostOnlyData(t *testing.T) {
	r := registry.New()
	r.SetCodeTransport(transport(t))
	mustScope(t, r, "s", registry.Global, registry.ModeBoth)
	tool := registry.MustDefine(registry.Definition{
		Name:        "host",
		Description: "model text",
		Parameters:  &schema.Node{Type: "object", Properties: map[string]*schema.Node{"q": {Type: "string", Description: "query"}}},
		Output:      str(),
		Behavior: registry.Behavior{
			Execute:           returning("x"),
			Render:            func(frozen.Value, frozen.Value) []registry.ContentBlock { return nil },
			FinalizeContent:   func(frozen.Value, registry.Final) []registry.ContentBlock { return nil },
			PresentationMeta:  func(frozen.Value, frozen.Value) (any, error) { return nil, nil },
			PresentCall:       func(frozen.Value) any { return nil },
			PresentResult:     func(frozen.Value, registry.ResultView) any { return nil },
			IsConcurrencySafe: func(frozen.Value) bool { return true },
			Timeout:           1234567 * time.Millisecond,
		},
	})
	mustRegister(t, r, "s", tool)
	data, err := json.Marshal(mustView(t, r, "s").Schemas())
	if err != nil {
		t.Fatal(err)
	}
	text := strings.ToLower(string(data))
	for _, bad := range []string{"timeout", "1234", "concurren", "execute", "render", "finaliz", "present", "meta"} {
		if strings.Contains(text, bad) {
			t.Errorf("model schemas mention %q: %s", bad, data)
		}
	}
	var decoded []map[string]json.RawMessage
	if err := json.Unmarshal(data, &decoded); err != nil {
		t.Fatal(err)
	}
	for _, s := range decoded {
		keys := make([]string, 0, len(s))
		for k := range s {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		wantNames(t, "schema keys", keys, "description", "name", "output_schema", "parameters")
	}
}

func TestOnChange(t *testing.T) {
	r := restrictFixture(t)
	var fired atomic.Int32
	var sawGen atomic.Uint64
	remove := r.OnChange(func() {
		fired.Add(1)
		// Listeners run outside the lock and see the new state.
		v, err := r.View(registry.Global)
		if err == nil {
			sawGen.Store(v.Generation())
		}
	})
	var un, rm func()
	steps := []struct {
		name   string
		change func() error
		fires  bool
	}{
		{"register", func() (err error) { un, err = r.Register(registry.Global, newTool(t, "n")); return }, true},
		{"unregister", func() error { un(); return nil }, true},
		{"stale unregister", func() error { un(); return nil }, false},
		{"create scope", func() error { return r.CreateScope("c", registry.Global, registry.ModeNative) }, true},
		{"restrict", func() (err error) { rm, err = r.Restrict("c", registry.Filter{Deny: []string{"g1"}}); return }, true},
		{"lift", func() error { rm(); return nil }, true},
		{"lift again", func() error { rm(); return nil }, false},
		{"set mode", func() error { return r.SetMode("c", registry.ModeBoth) }, true},
		{"set code transport", func() error { r.SetCodeTransport(transport(t)); return nil }, true},
		{"set global mode", func() error { return r.SetGlobalMode(registry.ModeBoth) }, true},
		{"remove scope", func() error { return r.RemoveScope("c") }, true},
		{"rejected duplicate", func() error { _, err := r.Register(registry.Global, newTool(t, "g1")); return expectErr(err) }, false},
		{"rejected restriction", func() error { _, err := r.Restrict("s", registry.Filter{}); return expectErr(err) }, false},
		{"rejected scope", func() error { return expectErr(r.CreateScope("s", registry.Global, registry.ModeNative)) }, false},
		{"view", func() error { _, err := r.View("s"); return err }, false},
	}
	for _, st := range steps {
		before := fired.Load()
		if err := st.change(); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		n := fired.Load() - before
		if (st.fires && n != 1) || (!st.fires && n != 0) {
			t.Errorf("%s: listener fired %d times", st.name, n)
		}
		if st.fires {
			if now := mustView(t, r, registry.Global).Generation(); sawGen.Load() != now {
				t.Errorf("%s: listener saw generation %d, current %d", st.name, sawGen.Load(), now)
			}
		}
	}

	second := 0
	removeSecond := r.OnChange(func() { second++ })
	remove()
	before := fired.Load()
	mustRegister(t, r, registry.Global, newTool(t, "after"))
	if fired.Load() != before {
		t.Error("a removed listener fired")
	}
	if second != 1 {
		t.Errorf("remaining listener fired %d times", second)
	}
	removeSecond()
}

func expectErr(err error) error {
	if err == nil {
		return errors.New("expected an error")
	}
	return nil
}

func TestConcurrentChangesAndViews(t *testing.T) {
	r := registry.New()
	r.SetCodeTransport(transport(t))
	mustScope(t, r, "s", registry.Global, registry.ModeBoth)
	mustScope(t, r, "child", "s", registry.ModeCode)
	for i := range 4 {
		mustRegister(t, r, registry.Global, newTool(t, fmt.Sprintf("base%d", i)))
	}
	var listened atomic.Int64
	defer r.OnChange(func() { listened.Add(1) })()

	const writers, readers, rounds = 4, 4, 150
	tools := make([][]*registry.Tool, writers)
	for w := range writers {
		for k := range 5 {
			tools[w] = append(tools[w], newTool(t, fmt.Sprintf("w%d-%d", w, k)))
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, writers+readers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			layer := registry.Global
			if w%2 == 1 {
				layer = "s"
			}
			for i := range rounds {
				un, err := r.Register(layer, tools[w][i%5])
				if err != nil {
					errs <- err
					return
				}
				rm, err := r.Restrict("child", registry.Filter{Deny: []string{"base0"}})
				if err != nil {
					errs <- err
					return
				}
				if w == 0 && i%10 == 0 {
					_ = r.SetMode("child", registry.ModeBoth)
					_ = r.SetMode("child", registry.ModeCode)
				}
				rm()
				un()
			}
		}()
	}
	for range readers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range rounds {
				for _, scope := range []string{registry.Global, "s", "child"} {
					v, err := r.View(scope)
					if err != nil {
						errs <- err
						return
					}
					if _, ok := v.Get("base1"); !ok {
						errs <- fmt.Errorf("base1 missing from %q", scope)
						return
					}
					if scope == "s" {
						if _, ok := v.Get(registry.RunCode); !ok {
							errs <- errors.New("run_code missing from s")
							return
						}
					}
					_ = v.Schemas()
					_ = v.ModelTools()
					if i%7 == 0 {
						_ = r.Scopes()
						_ = r.Ancestry("child")
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	wantNames(t, "after the storm", visible(t, r, "s"), "base0", "base1", "base2", "base3")
	wantNames(t, "child after the storm", visible(t, r, "child"), "base0", "base1", "base2", "base3")
	if listened.Load() < writers*rounds*4 {
		t.Errorf("listener fired %d times, want at least %d", listened.Load(), writers*rounds*4)
	}
}

// Batch announces any number of changes once, when it returns; views inside see each change.
func TestBatchNotifiesOnce(t *testing.T) {
	r := registry.New()
	calls := 0
	r.OnChange(func() { calls++ })
	r.Batch(func() {
		for _, name := range []string{"a", "b", "c"} {
			mustRegister(t, r, registry.Global, newTool(t, name))
		}
		r.Batch(func() { mustRegister(t, r, registry.Global, newTool(t, "d")) }) // nested: still one
		if v := mustView(t, r, registry.Global); len(v.Names()) != 4 {
			t.Errorf("inside the batch the view has %v", v.Names())
		}
		if calls != 0 {
			t.Errorf("listeners ran %d times during the batch", calls)
		}
	})
	if calls != 1 {
		t.Fatalf("listeners ran %d times, want once", calls)
	}
	r.Batch(func() {})
	if calls != 1 {
		t.Fatalf("an empty batch notified")
	}
}

// Annotate labels tools in a scope and its descendants; the nearest scope's first note wins,
// Global's apply everywhere, and removing a note takes it away.
func TestAnnotate(t *testing.T) {
	r := registry.New()
	mustRegister(t, r, registry.Global, newTool(t, "files_delete"))
	mustRegister(t, r, registry.Global, newTool(t, "files_read"))
	mustScope(t, r, "parent", registry.Global, registry.ModeCode)
	mustScope(t, r, "child", "parent", registry.ModeCode)
	files := func(n string) bool { return strings.HasPrefix(n, "files_") }
	del := func(n string) bool { return n == "files_delete" }
	if _, err := r.Annotate(registry.Global, files, "global note"); err != nil {
		t.Fatal(err)
	}
	removeParent, err := r.Annotate("parent", del, "denied here")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Annotate("child", del, "asks a person first"); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ scope, tool, want string }{
		{"child", "files_delete", "asks a person first"},
		{"parent", "files_delete", "denied here"},
		{"parent", "files_read", "global note"},
		{registry.Global, "files_delete", "global note"},
	} {
		if got := mustView(t, r, tc.scope).Note(tc.tool); got != tc.want {
			t.Errorf("%s %s: %q, want %q", tc.scope, tc.tool, got, tc.want)
		}
	}
	removeParent()
	if got := mustView(t, r, "parent").Note("files_delete"); got != "global note" {
		t.Errorf("after removal: %q", got)
	}
	if _, err := r.Annotate("nope", del, "x"); !errors.Is(err, registry.ErrNotFound) {
		t.Errorf("unknown scope: %v", err)
	}
}

func TestDollarNamesAreReserved(t *testing.T) {
	_, err := registry.Define(registry.Definition{Name: "$search", Output: &schema.Node{Type: "json"}, Behavior: registry.Behavior{Execute: func(context.Context, registry.Exec, frozen.Value) (any, error) { return nil, nil }}})
	if err == nil || !strings.Contains(err.Error(), "reserved") {
		t.Fatalf("$search: %v", err)
	}
}

// TestLayerLimit: a layer holds at most SetLayerLimit tools of its own;
// past it Register fails with ErrLayerFull naming the key, other layers
// are not affected, and an unregistration makes room.
func TestLayerLimit(t *testing.T) {
	r := registry.New()
	r.SetLayerLimit(2)
	if err := r.CreateScope("s", registry.Global, registry.ModeNative); err != nil {
		t.Fatal(err)
	}
	un := mustRegister(t, r, "s", newTool(t, "a"))
	mustRegister(t, r, "s", newTool(t, "b"))
	_, err := r.Register("s", newTool(t, "c"))
	if !errors.Is(err, registry.ErrLayerFull) || !strings.Contains(err.Error(), "limits.max_tools_per_scope") {
		t.Fatalf("third tool: %v", err)
	}
	mustRegister(t, r, registry.Global, newTool(t, "g"))
	un()
	mustRegister(t, r, "s", newTool(t, "c"))
}
