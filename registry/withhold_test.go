package registry_test

import (
	"strings"
	"testing"

	"github.com/codemode/codemode/registry"
)

// A withheld tool is out of every list of its scope and the scope's descendants, found by
// Get (so a call still reaches the pipeline), reported with its reason, and matched among
// tools registered later.
func TestWithheldToolsLeaveTheViews(t *testing.T) {
	r := registry.New()
	for _, s := range [][2]string{{"p", registry.Global}, {"c", "p"}, {"other", registry.Global}} {
		if err := r.CreateScope(s[0], s[1], registry.ModeNative); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range []string{"util_echo", "util_fail", "kv_get"} {
		if _, err := r.Register(registry.Global, newTool(t, n)); err != nil {
			t.Fatal(err)
		}
	}
	remove, err := r.Withhold("p", func(n string) bool { return strings.HasPrefix(n, "util_") }, "owner veto")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Register(registry.Global, newTool(t, "util_late")); err != nil {
		t.Fatal(err)
	}
	for _, scope := range []string{"p", "c"} {
		v, err := r.View(scope)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(v.Names(), ","); got != "kv_get" {
			t.Errorf("%s: names = %s, want kv_get", scope, got)
		}
		if len(v.ModelTools()) != 1 || v.HasSDKTool("util_echo") {
			t.Errorf("%s: a withheld tool is offered", scope)
		}
		if _, ok := v.Get("util_echo"); !ok {
			t.Errorf("%s: Get does not find the withheld tool", scope)
		}
		held := v.Withheld()
		if len(held) != 3 || held[0] != (registry.Withheld{Name: "util_echo", Reason: "owner veto"}) || held[2].Name != "util_late" {
			t.Errorf("%s: withheld = %+v", scope, held)
		}
	}
	v, _ := r.View("other")
	if len(v.Names()) != 4 || len(v.Withheld()) != 0 {
		t.Errorf("a sibling scope is affected: %v %v", v.Names(), v.Withheld())
	}
	before, _ := r.View("p")
	remove()
	after, _ := r.View("p")
	if after.Generation() == before.Generation() || len(after.Names()) != 4 || len(after.Withheld()) != 0 {
		t.Errorf("after remove: names %v, withheld %v", after.Names(), after.Withheld())
	}
	if _, err := r.Withhold("nope", func(string) bool { return true }, ""); err == nil {
		t.Error("withholding in an unknown scope succeeded")
	}
	// On the global layer it binds every view.
	if _, err := r.Withhold(registry.Global, func(n string) bool { return n == "kv_get" }, "no"); err != nil {
		t.Fatal(err)
	}
	for _, scope := range []string{registry.Global, "other", "c"} {
		if v, _ := r.View(scope); v.HasSDKTool("kv_get") {
			t.Errorf("%q still lists kv_get", scope)
		}
	}
}
