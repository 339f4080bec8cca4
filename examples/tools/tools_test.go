package tools

import (
	"bytes"
	"context"
	"encoding/base64"
	"image/png"
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

func TestLimitsBoundState(t *testing.T) {
	rt := newRuntime(t)
	big := strings.Repeat("x", MaxValueBytes+1)
	if r := call(t, rt, "a", "files_write", `{"path":"big","content":"`+big+`"}`); r.Code() != registry.CodeToolFailed {
		t.Fatalf("an over-limit file: %+v", r.Error())
	}
	p := New()
	p.mu.Lock()
	for i := 0; i < MaxWorkspaces+5; i++ {
		p.workspaceLocked(strings.Repeat("s", 1+i%3) + string(rune('a'+i%26)) + time.Duration(i).String())
	}
	n := len(p.workspaces)
	p.mu.Unlock()
	if n > MaxWorkspaces {
		t.Fatalf("%d workspaces kept, limit %d", n, MaxWorkspaces)
	}
}

func TestEditDiffIsUnified(t *testing.T) {
	d := EditDiff("f.txt", "a\nb", "a\nc")
	if !strings.HasPrefix(d, "--- a/f.txt\n+++ b/f.txt\n@@") || !strings.Contains(d, "-b\n+c\n") {
		t.Fatalf("diff %q", d)
	}
}
