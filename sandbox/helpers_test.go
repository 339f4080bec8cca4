package sandbox

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"
)

// fakeHost records every dispatched call. By default it settles synchronously with
// {"tool": name, "args": args}; handle replaces that.
type fakeHost struct {
	names  []string
	handle func(c Call, settle func(Settlement))

	mu    sync.Mutex
	calls []Call
}

func newFakeHost(names ...string) *fakeHost { return &fakeHost{names: names} }

func (h *fakeHost) Call(c Call, settle func(Settlement)) {
	h.mu.Lock()
	h.calls = append(h.calls, c)
	h.mu.Unlock()
	if h.handle != nil {
		h.handle(c, settle)
		return
	}
	settle(Settlement{Value: []byte(`{"tool":` + quoteJSON(c.Name) + `,"args":` + string(c.Args) + `}`)})
}

func (h *fakeHost) Has(name string) bool { return slices.Contains(h.names, name) }
func (h *fakeHost) Names() []string      { return h.names }

func (h *fakeHost) recorded() []Call {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]Call(nil), h.calls...)
}

func quoteJSON(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// runJS compiles src as lang and runs it; a compile failure fails the test.
func runLang(t testing.TB, src string, lang Lang, host Host, opts Options) Result {
	t.Helper()
	p, err := Compile(src, lang)
	if err != nil {
		t.Fatalf("compile %q: %v", src, err)
	}
	return Run(context.Background(), p, host, opts)
}

func runJS(t testing.TB, src string, host Host) Result {
	t.Helper()
	return runLang(t, src, JavaScript, host, Options{})
}

// valueCase is a program, JavaScript or TypeScript, and the JSON value it must return.
type valueCase struct{ name, src, want string }

// runValueCases runs each case as a subtest, compiled with CompileAuto.
func runValueCases(t *testing.T, cases []valueCase) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			p, err := CompileAuto(tt.src)
			if err != nil {
				t.Fatalf("compile: %v", err)
			}
			wantValue(t, Run(t.Context(), p, nil, Options{}), tt.want)
		})
	}
}

// wantValue fails unless res succeeded with JSON equal to want.
func wantValue(t testing.TB, res Result, want string) {
	t.Helper()
	if res.Err != nil {
		t.Fatalf("run failed: %v (logs %q)", res.Err, res.Logs)
	}
	if !jsonEqual(string(res.Value), want) {
		t.Fatalf("value = %s, want %s", res.Value, want)
	}
}

// wantFailure fails unless res failed with kind and a message containing every fragment.
func wantFailure(t testing.TB, res Result, kind string, fragments ...string) {
	t.Helper()
	if res.Err == nil {
		t.Fatalf("run succeeded with %s, want a %s failure", res.Value, kind)
	}
	if res.Err.Kind != kind {
		t.Fatalf("failure kind = %q (%s), want %q", res.Err.Kind, res.Err.Message, kind)
	}
	for _, f := range fragments {
		if !strings.Contains(res.Err.Message, f) {
			t.Fatalf("failure message %q does not contain %q", res.Err.Message, f)
		}
	}
	if res.Value != nil {
		t.Fatalf("failed run has a value: %s", res.Value)
	}
}

func jsonEqual(a, b string) bool {
	if a == b {
		return true
	}
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return false
	}
	xb, _ := json.Marshal(x)
	yb, _ := json.Marshal(y)
	return string(xb) == string(yb)
}

func ctxCancelled() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}
