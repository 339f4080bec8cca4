package tools

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"image/png"
	goruntime "runtime"
	"strings"
	"testing"
	"time"

	"github.com/codemode/codemode/registry"
	"github.com/codemode/codemode/runtime"
)

func newRuntime(t *testing.T) *runtime.Runtime {
	t.Helper()
	reg := registry.New()
	if err := reg.CreateScope("default", registry.Global, registry.ModeNative); err != nil {
		t.Fatal(err)
	}
	if _, err := New().Register(reg, "default"); err != nil {
		t.Fatal(err)
	}
	return runtime.New(reg, runtime.Options{})
}

func call(t *testing.T, rt *runtime.Runtime, session, name, args string) *runtime.Result {
	t.Helper()
	return rt.Execute(context.Background(), runtime.Request{Name: name, Arguments: args, Scope: "default", SessionID: session})
}

func ok(t *testing.T, r *runtime.Result, want string) {
	t.Helper()
	if r.IsError() {
		t.Fatalf("%s failed: %+v", r.Name(), r.Error())
	}
	if want != "" && r.Value().String() != want {
		t.Fatalf("%s = %s, want %s", r.Name(), r.Value(), want)
	}
}

func TestPackMatchesTheContract(t *testing.T) {
	rt := newRuntime(t)
	v, _ := rt.Registry().View("default")
	var names []string
	for _, tool := range v.SDKTools() {
		names = append(names, tool.Name())
	}
	want := "files_edit,files_list,files_read,files_write,kv_get,kv_set,math_add,util_echo,util_fail,util_sleep,util_swatch"
	if strings.Join(names, ",") != want {
		t.Fatalf("tools %v", names)
	}
	safe := map[string]bool{"math_add": true, "util_echo": true, "util_sleep": true, "kv_get": true, "files_read": true, "files_list": true, "util_swatch": true}
	args := map[string]string{
		"math_add": `{"a":1,"b":2}`, "util_echo": `{"value":1}`, "util_sleep": `{"ms":0}`, "util_fail": `{"message":"x"}`,
		"util_swatch": `{"color":"#000000"}`, "kv_set": `{"key":"k","value":1}`, "kv_get": `{"key":"k"}`,
		"files_write": `{"path":"p","content":""}`, "files_read": `{"path":"p"}`, "files_edit": `{"path":"p","old":"a","new":"b"}`, "files_list": `{}`,
	}
	for _, n := range names {
		if got := rt.ConcurrencySafe("default", n, args[n]); got != safe[n] {
			t.Errorf("%s concurrency-safe = %v", n, got)
		}
	}
	// Only the tools that change nothing are read-only: their sub-calls skip
	// the log's write-ahead wait.
	readOnly := map[string]bool{"math_add": true, "util_echo": true, "util_sleep": true, "util_fail": true, "util_swatch": true, "kv_get": true, "files_read": true, "files_list": true}
	for _, tool := range v.SDKTools() {
		h := tool.Hints()
		if h.ReadOnly != readOnly[tool.Name()] {
			t.Errorf("%s read-only = %v", tool.Name(), h.ReadOnly)
		}
		if !h.ReadOnly && (h.Destructive == nil || !*h.Destructive) {
			t.Errorf("%s writes but is not marked destructive", tool.Name())
		}
	}
}

func TestStatelessTools(t *testing.T) {
	rt := newRuntime(t)
	ok(t, call(t, rt, "s", "math_add", `{"a":2,"b":3}`), `{"sum":5}`)
	ok(t, call(t, rt, "s", "util_echo", `{"value":{"deep":[1,"x",null,123456789012345678901234567890]}}`), `{"value":{"deep":[1,"x",null,123456789012345678901234567890]}}`)
	ok(t, call(t, rt, "s", "util_sleep", `{"ms":1}`), `{"slept_ms":1}`)
	if r := call(t, rt, "s", "util_sleep", `{"ms":60001}`); r.Code() != registry.CodeInvalidArgs {
		t.Fatalf("ms over the limit: %v", r.Error())
	}
	if r := call(t, rt, "s", "util_fail", `{"message":"boom"}`); r.Code() != registry.CodeToolFailed || r.Error().Message != "boom" {
		t.Fatalf("util_fail: %+v", r.Error())
	}
	if r := call(t, rt, "s", "math_add", `{"a":"x","b":1}`); r.Code() != registry.CodeInvalidArgs {
		t.Fatalf("bad args: %v", r.Error())
	}
}

func TestSleepHonoursCancellation(t *testing.T) {
	rt := newRuntime(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	start := time.Now()
	r := rt.Execute(ctx, runtime.Request{Name: "util_sleep", Arguments: `{"ms":60000}`, Scope: "default"})
	if r.Code() != registry.CodeAborted || time.Since(start) > 10*time.Second {
		t.Fatalf("%+v after %v", r.Error(), time.Since(start))
	}
}

func TestSwatchCarriesAPNG(t *testing.T) {
	rt := newRuntime(t)
	r := call(t, rt, "s", "util_swatch", `{"color":"#ff8800"}`)
	ok(t, r, `{"height":8,"mime":"image/png","width":8}`)
	c := r.Content()
	if len(c) != 2 || !c[1].IsImage() || c[1].MimeType != "image/png" {
		t.Fatalf("content %+v", c)
	}
	raw, err := base64.StdEncoding.DecodeString(c[1].Data)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	if r, g, b, _ := img.At(3, 3).RGBA(); r>>8 != 0xff || g>>8 != 0x88 || b>>8 != 0 || img.Bounds().Dx() != 8 {
		t.Fatalf("pixel %x %x %x", r, g, b)
	}
	if r := call(t, rt, "s", "util_swatch", `{"color":"orange"}`); r.Code() != registry.CodeInvalidArgs {
		t.Fatal("a color that is not #rrggbb was accepted")
	}
}

func TestKVIsPerSession(t *testing.T) {
	rt := newRuntime(t)
	ok(t, call(t, rt, "a", "kv_set", `{"key":"k","value":{"n":-0}}`), `{"ok":true}`)
	ok(t, call(t, rt, "a", "kv_get", `{"key":"k"}`), `{"found":true,"value":{"n":-0}}`)
	ok(t, call(t, rt, "b", "kv_get", `{"key":"k"}`), `{"found":false}`)
}

func TestFilesWorkspace(t *testing.T) {
	rt := newRuntime(t)
	ok(t, call(t, rt, "a", "files_write", `{"path":"docs/a.md","content":"one\ntwo two\n"}`), `{"bytes":12,"path":"docs/a.md"}`)
	ok(t, call(t, rt, "a", "files_write", `{"path":"b.txt","content":"x"}`), "")
	ok(t, call(t, rt, "a", "files_read", `{"path":"docs/a.md"}`), `{"content":"one\ntwo two\n","lines":2,"path":"docs/a.md"}`)
	r := call(t, rt, "a", "files_edit", `{"path":"docs/a.md","old":"two","new":"2"}`)
	ok(t, r, `{"path":"docs/a.md","replaced":2}`)
	var meta struct{ Kind, Path, Diff string }
	if err := r.Meta().Unmarshal(&meta); err != nil || meta.Kind != "diff" || !strings.Contains(meta.Diff, "--- a/docs/a.md") || !strings.Contains(meta.Diff, "-two") || !strings.Contains(meta.Diff, "+2") {
		t.Fatalf("meta %+v (%v)", meta, err)
	}
	ok(t, call(t, rt, "a", "files_read", `{"path":"docs/a.md"}`), `{"content":"one\n2 2\n","lines":2,"path":"docs/a.md"}`)
	ok(t, call(t, rt, "a", "files_list", `{"prefix":"docs/"}`), `{"paths":["docs/a.md"]}`)
	ok(t, call(t, rt, "a", "files_list", `{}`), `{"paths":["b.txt","docs/a.md"]}`)
	ok(t, call(t, rt, "b", "files_list", `{}`), `{"paths":[]}`)
	for _, tc := range []struct{ name, args string }{
		{"files_read", `{"path":"missing"}`},
		{"files_edit", `{"path":"docs/a.md","old":"absent","new":"x"}`},
		{"files_edit", `{"path":"missing","old":"a","new":"b"}`},
	} {
		if r := call(t, rt, "a", tc.name, tc.args); r.Code() != registry.CodeToolFailed {
			t.Errorf("%s %s: %+v", tc.name, tc.args, r.Error())
		}
	}
	for _, args := range []string{`{"path":"","content":"x"}`} {
		if r := call(t, rt, "a", "files_write", args); r.Code() != registry.CodeInvalidArgs {
			t.Errorf("files_write %s: %+v", args, r.Error())
		}
	}
	if r := call(t, rt, "a", "files_edit", `{"path":"b.txt","old":"","new":"y"}`); r.Code() != registry.CodeInvalidArgs {
		t.Errorf("empty old: %+v", r.Error())
	}
}

func newRuntimeWith(t *testing.T, p *Pack) *runtime.Runtime {
	t.Helper()
	reg := registry.New()
	if err := reg.CreateScope("default", registry.Global, registry.ModeNative); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Register(reg, "default"); err != nil {
		t.Fatal(err)
	}
	return runtime.New(reg, runtime.Options{})
}

// refused checks that a call failed as a tool error whose message names want.
func refused(t *testing.T, r *runtime.Result, want string) {
	t.Helper()
	if r.Code() != registry.CodeToolFailed || !strings.Contains(r.Error().Message, want) {
		t.Fatalf("%s: want a tool error naming %q, got %s %+v", r.Name(), want, r.Code(), r.Error())
	}
}

func TestValueAndKeyLimits(t *testing.T) {
	rt := newRuntime(t)
	big := strings.Repeat("x", DefaultMaxValueBytes+1)
	refused(t, call(t, rt, "a", "files_write", `{"path":"big","content":"`+big+`"}`), "demo_state.max_value_bytes")
	refused(t, call(t, rt, "a", "kv_set", `{"key":"big","value":"`+big+`"}`), "demo_state.max_value_bytes")
	refused(t, call(t, rt, "a", "util_echo", `{"value":"`+big+`"}`), "demo_state.max_value_bytes")
	long := strings.Repeat("k", MaxKeyBytes+1)
	for _, tc := range []struct{ name, args string }{
		{"kv_set", `{"key":"` + long + `","value":1}`},
		{"files_write", `{"path":"` + long + `","content":""}`},
		{"kv_set", `{"key":"","value":1}`},
	} {
		if r := call(t, rt, "a", tc.name, tc.args); r.Code() != registry.CodeInvalidArgs {
			t.Errorf("%s with a bad key: %+v", tc.name, r.Error())
		}
	}
	// Nothing refused left state behind.
	if n, b := New().Usage(); n != 0 || b != 0 {
		t.Fatalf("a fresh pack holds %d sessions, %d bytes", n, b)
	}
	ok(t, call(t, rt, "a", "util_echo", `{"value":{"n":123456789012345678901234567890,"z":-0}}`), `{"value":{"n":123456789012345678901234567890,"z":-0}}`)
	// Exactly at the limit fits.
	exact := strings.Repeat("x", DefaultMaxValueBytes)
	ok(t, call(t, rt, "a", "files_write", `{"path":"exact","content":"`+exact+`"}`), "")
	ok(t, call(t, rt, "a", "util_echo", `{"value":"`+exact[2:]+`"}`), "")
	ok(t, call(t, rt, "b", "kv_set", `{"key":"exact","value":"`+exact[2:]+`"}`), "")
}

// TestEditIsSizedBeforeItIsBuilt: an edit whose result would pass a quota
// is refused before the replaced text is built, so that multiplying a file
// by a long replacement (1 MiB times 1 MiB is 1 TiB) costs nothing.
func TestEditIsSizedBeforeItIsBuilt(t *testing.T) {
	p := NewWithQuotas(Quotas{MaxValueBytes: 64 << 10})
	rt := newRuntimeWith(t, p)
	file := strings.Repeat("a", 60<<10)
	ok(t, call(t, rt, "s", "files_write", `{"path":"f","content":"`+file+`"}`), "")
	huge := strings.Repeat("b", 60<<10)
	args := `{"path":"f","old":"a","new":"` + huge + `"}`
	var before, after goruntime.MemStats
	goruntime.GC()
	goruntime.ReadMemStats(&before)
	r := call(t, rt, "s", "files_edit", args)
	goruntime.ReadMemStats(&after)
	refused(t, r, "the edited file would be 3774873600 bytes; the limit is 65536")
	// The result would be 3.4 GiB; the refusal allocates about the arguments a few times over.
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 16<<20 {
		t.Fatalf("the refused edit allocated %d MiB", grew>>20)
	}
	ok(t, call(t, rt, "s", "files_read", `{"path":"f"}`), `{"content":"`+file+`","lines":1,"path":"f"}`)
	// An edit that fits is applied, and an edit that shrinks always fits.
	ok(t, call(t, rt, "s", "files_edit", `{"path":"f","old":"aa","new":"a"}`), `{"path":"f","replaced":30720}`)
}

func TestSessionQuotas(t *testing.T) {
	p := NewWithQuotas(Quotas{MaxSessionBytes: 100, MaxEntries: 2})
	rt := newRuntimeWith(t, p)
	ok(t, call(t, rt, "a", "kv_set", `{"key":"k1","value":"`+strings.Repeat("x", 40)+`"}`), "")
	ok(t, call(t, rt, "a", "kv_set", `{"key":"k2","value":1}`), "")
	refused(t, call(t, rt, "a", "kv_set", `{"key":"k3","value":1}`), "this session already holds 2 keys; the limit is 2 (demo_state.max_entries)")
	ok(t, call(t, rt, "a", "kv_set", `{"key":"k2","value":2}`), "") // overwriting adds no entry
	ok(t, call(t, rt, "a", "files_write", `{"path":"p","content":"`+strings.Repeat("y", 40)+`"}`), "")
	refused(t, call(t, rt, "a", "files_write", `{"path":"q","content":"`+strings.Repeat("y", 40)+`"}`), "demo_state.max_session_bytes")
	// Another session has its own quota.
	ok(t, call(t, rt, "b", "files_write", `{"path":"q","content":"`+strings.Repeat("y", 40)+`"}`), "")
	if n, b := p.Usage(); n != 2 || b != 2+42+2+1+1+40+1+40 {
		t.Fatalf("usage %d sessions, %d bytes", n, b)
	}
}

// TestSessionsCannotEvictEachOther: when the demo state is full (sessions,
// or bytes in all), a new write is refused with a clear error and every
// other session's state stays as it was; reads create no state.
func TestSessionsCannotEvictEachOther(t *testing.T) {
	p := NewWithQuotas(Quotas{MaxSessions: 3, MaxTotalBytes: 1000})
	rt := newRuntimeWith(t, p)
	for _, s := range []string{"a", "b", "c"} {
		ok(t, call(t, rt, s, "kv_set", `{"key":"k","value":"`+s+`"}`), "")
	}
	for i := 0; i < 50; i++ {
		id := fmt.Sprint("reader-", i)
		ok(t, call(t, rt, id, "kv_get", `{"key":"k"}`), `{"found":false}`)
		ok(t, call(t, rt, id, "files_list", `{}`), `{"paths":[]}`)
		refused(t, call(t, rt, id, "files_read", `{"path":"x"}`), "no such file")
		refused(t, call(t, rt, id, "files_edit", `{"path":"x","old":"a","new":"b"}`), "no such file")
	}
	refused(t, call(t, rt, "d", "kv_set", `{"key":"k","value":"d"}`), "already hold state for 3 sessions (demo_state.max_sessions); nothing of another session is evicted")
	refused(t, call(t, rt, "a", "files_write", `{"path":"big","content":"`+strings.Repeat("z", 990)+`"}`), "demo_state.max_total_bytes")
	for _, s := range []string{"a", "b", "c"} {
		ok(t, call(t, rt, s, "kv_get", `{"key":"k"}`), `{"found":true,"value":"`+s+`"}`)
	}
	ok(t, call(t, rt, "d", "kv_get", `{"key":"k"}`), `{"found":false}`)
	if n, _ := p.Usage(); n != 3 {
		t.Fatalf("%d sessions hold state, want 3", n)
	}
}

// TestIdleStateExpires: state no tool used for IdleTTL is released when a
// write needs room, never state still in use.
func TestIdleStateExpires(t *testing.T) {
	p := NewWithQuotas(Quotas{MaxSessions: 2, IdleTTL: time.Hour})
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	p.state.now = func() time.Time { return now }
	rt := newRuntimeWith(t, p)
	ok(t, call(t, rt, "old", "kv_set", `{"key":"k","value":1}`), "")
	now = now.Add(50 * time.Minute)
	ok(t, call(t, rt, "busy", "kv_set", `{"key":"k","value":2}`), "")
	refused(t, call(t, rt, "new", "kv_set", `{"key":"k","value":3}`), "demo_state.max_sessions")
	now = now.Add(20 * time.Minute) // old idle for 70 minutes, busy for 20
	ok(t, call(t, rt, "new", "kv_set", `{"key":"k","value":3}`), "")
	ok(t, call(t, rt, "old", "kv_get", `{"key":"k"}`), `{"found":false}`)
	ok(t, call(t, rt, "busy", "kv_get", `{"key":"k"}`), `{"found":true,"value":2}`)
	// Reading counts as use: busy stays while it is read.
	for i := 0; i < 3; i++ {
		now = now.Add(50 * time.Minute)
		ok(t, call(t, rt, "busy", "kv_get", `{"key":"k"}`), `{"found":true,"value":2}`)
	}
	if n, _ := NewWithQuotas(Quotas{}).Usage(); n != 0 {
		t.Fatal("usage of an empty pack")
	}
}

func TestLargeEditDiffIsOmitted(t *testing.T) {
	rt := newRuntime(t)
	old := strings.Repeat("o", maxDiffBytes)
	ok(t, call(t, rt, "a", "files_write", `{"path":"f","content":"`+old+`"}`), "")
	r := call(t, rt, "a", "files_edit", `{"path":"f","old":"`+old+`","new":"n"}`)
	ok(t, r, `{"path":"f","replaced":1}`)
	var meta map[string]string
	if err := r.Meta().Unmarshal(&meta); err != nil || meta["kind"] != "diff" || meta["diff"] != "" || !strings.Contains(meta["diff_omitted"], "diffs are shown up to 262144") {
		t.Fatalf("meta %v (%v)", meta, err)
	}
	if r.Meta().Len() > 1024 {
		t.Fatalf("meta is %d bytes", r.Meta().Len())
	}
}

func TestEditDiffIsUnified(t *testing.T) {
	d := EditDiff("f.txt", "a\nb", "a\nc")
	if !strings.HasPrefix(d, "--- a/f.txt\n+++ b/f.txt\n@@") || !strings.Contains(d, "-b\n+c\n") {
		t.Fatalf("diff %q", d)
	}
}

// FuzzEditedSize: files_edit sizes its result exactly as strings.ReplaceAll builds it.
func FuzzEditedSize(f *testing.F) {
	f.Add("aaa", "a", "bb")
	f.Add("héllo wörld", "ö", "")
	f.Add("abab", "aba", "x")
	f.Fuzz(func(t *testing.T, content, old, new string) {
		if old == "" {
			return
		}
		n := strings.Count(content, old)
		if got, want := editedSize(content, old, new, n), int64(len(strings.ReplaceAll(content, old, new))); got != want {
			t.Fatalf("editedSize(%q, %q, %q) = %d, want %d", content, old, new, got, want)
		}
	})
}
