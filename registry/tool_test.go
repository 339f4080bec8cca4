package registry_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/codemode/codemode/registry"
	"github.com/codemode/codemode/registry/frozen"
	"github.com/codemode/codemode/registry/schema"
)

func TestDefineRejects(t *testing.T) {
	body := returning("ok")
	cases := []struct {
		name string
		def  registry.Definition
		want []string // substrings of the error
	}{
		{"no execute", registry.Definition{Name: "t", Output: str()}, []string{"Execute"}},
		{"no output schema", registry.Definition{Name: "t", Behavior: registry.Behavior{Execute: body}}, []string{"output schema"}},
		{"run_code", registry.Definition{Name: registry.RunCode, Output: str(), Behavior: registry.Behavior{Execute: body}}, []string{"reserved"}},
		{"empty name", registry.Definition{Name: "", Output: str(), Behavior: registry.Behavior{Execute: body}}, []string{"name"}},
		{"too long", registry.Definition{Name: strings.Repeat("n", 129), Output: str(), Behavior: registry.Behavior{Execute: body}}, []string{"name"}},
		{"newline", registry.Definition{Name: "a\nb", Output: str(), Behavior: registry.Behavior{Execute: body}}, []string{"name"}},
		{"nul", registry.Definition{Name: "a\x00b", Output: str(), Behavior: registry.Behavior{Execute: body}}, []string{"name"}},
		{"del", registry.Definition{Name: "a\x7f", Output: str(), Behavior: registry.Behavior{Execute: body}}, []string{"name"}},
		{"negative timeout", registry.Definition{Name: "t", Output: str(), Behavior: registry.Behavior{Execute: body, Timeout: -time.Second}}, []string{"timeout"}},
		{
			"nested object without additionalProperties",
			registry.Definition{
				Name: "t",
				Parameters: &schema.Node{Type: "object", Properties: map[string]*schema.Node{
					"outerprop": closedObject(map[string]*schema.Node{
						"innerprop": {Type: "object", Properties: map[string]*schema.Node{"x": str()}},
					}),
				}},
				Output:   str(),
				Behavior: registry.Behavior{Execute: body},
			},
			[]string{`"t"`, "parameters", "outerprop", "innerprop"},
		},
		{
			"unknown parameter type",
			registry.Definition{
				Name:       "t",
				Parameters: &schema.Node{Type: "object", Properties: map[string]*schema.Node{"badprop": {Type: "strnig"}}},
				Output:     str(),
				Behavior:   registry.Behavior{Execute: body},
			},
			[]string{"parameters", "badprop"},
		},
		{
			"bad output schema",
			registry.Definition{
				Name:     "t",
				Output:   &schema.Node{Type: "object", Properties: map[string]*schema.Node{"outprop": {Type: "object"}}, AdditionalProperties: boolPtr(true)},
				Behavior: registry.Behavior{Execute: body},
			},
			[]string{"output", "outprop"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tool, err := registry.Define(tc.def)
			if err == nil {
				t.Fatalf("Define accepted the definition: %v", tool.Name())
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

func TestDefineAcceptsNames(t *testing.T) {
	for _, name := range []string{"a", "read_file", "fs.read", "with space", strings.Repeat("n", 128), strings.Repeat("é", 128)} {
		if _, err := registry.Define(registry.Definition{Name: name, Output: str(), Behavior: registry.Behavior{Execute: returning("")}}); err != nil {
			t.Errorf("Define(%q): %v", name, err)
		}
	}
}

func TestMustDefinePanicsOnError(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("MustDefine did not panic on a definition without Execute")
		}
	}()
	registry.MustDefine(registry.Definition{Name: "t", Output: str()})
}

func TestDefineAccessors(t *testing.T) {
	fin := func(frozen.Value, registry.Final) []registry.ContentBlock { return nil }
	tool := registry.MustDefine(registry.Definition{
		Name:        "acc",
		Description: "describes acc",
		Output:      str(),
		Behavior: registry.Behavior{
			Execute:         returning("x"),
			Timeout:         3 * time.Second,
			FinalizeContent: fin,
		},
	})
	if tool.Name() != "acc" || tool.Description() != "describes acc" {
		t.Fatalf("name/description: %q %q", tool.Name(), tool.Description())
	}
	if !tool.ValidatesArgs() {
		t.Error("a Define'd tool must validate its arguments")
	}
	if tool.Timeout() != 3*time.Second {
		t.Errorf("timeout %v", tool.Timeout())
	}
	if !tool.HasFinalizer() || tool.Finalizer() == nil {
		t.Error("finalizer lost")
	}
	if tool.HasPresentationMeta() {
		t.Error("HasPresentationMeta true without presentationMeta")
	}
	var params map[string]any
	if err := json.Unmarshal(tool.Parameters(), &params); err != nil || params["type"] != "object" {
		t.Errorf("default parameters %s (%v): want an object schema", tool.Parameters(), err)
	}
	var out map[string]any
	if err := json.Unmarshal(tool.OutputSchema(), &out); err != nil || out["type"] != "string" {
		t.Errorf("output schema %s (%v)", tool.OutputSchema(), err)
	}

	bare := newTool(t, "bare")
	if bare.HasFinalizer() || bare.Finalizer() != nil || bare.Timeout() != 0 {
		t.Error("a bare tool reports a finalizer or timeout")
	}
}

// argsTool has parameters {name: string (required), count: integer,
// opts: {verbose: boolean} closed} and counts body calls.
func argsTool(t *testing.T, calls *atomic.Int32) *registry.Tool {
	t.Helper()
	return registry.MustDefine(registry.Definition{
		Name: "args",
		Parameters: &schema.Node{
			Type: "object",
			Properties: map[string]*schema.Node{
				"name":  str(),
				"count": intg(),
				"opts":  closedObject(map[string]*schema.Node{"verbose": {Type: "boolean"}}),
			},
			Required: []string{"name"},
		},
		Output: &schema.Node{Type: "json"},
		Behavior: registry.Behavior{
			Execute: func(_ context.Context, _ registry.Exec, args frozen.Value) (any, error) {
				calls.Add(1)
				return args, nil
			},
		},
	})
}

func TestDefineValidatesArgumentsBeforeBody(t *testing.T) {
	cases := []struct {
		name  string
		args  string
		ok    bool
		paths []string // violation locations the message must name
	}{
		{"valid", `{"name":"a","count":2,"opts":{"verbose":true}}`, true, nil},
		{"extra root key passes (open root)", `{"name":"a","extra":1}`, true, nil},
		{"required null is present, but not a string", `{"name":null}`, false, []string{"/name"}},
		{"missing required", `{}`, false, []string{`"name"`}},
		{"not an object", `"just text"`, false, nil},
		{"every violation listed", `{"count":"two","opts":{"verbose":"yes","extra":1}}`, false, []string{`"name"`, "/count", "/opts/verbose", "/opts/extra"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var calls atomic.Int32
			tool := argsTool(t, &calls)
			v, err := tool.Invoke(context.Background(), stubExec{}, frozen.MustParse(tc.args))
			if tc.ok {
				if err != nil {
					t.Fatalf("Invoke: %v", err)
				}
				if calls.Load() != 1 {
					t.Fatalf("body ran %d times", calls.Load())
				}
				if got := v.(frozen.Value).String(); got != frozen.MustParse(tc.args).String() {
					t.Fatalf("body saw %s", got)
				}
				if err := tool.CheckArgs(frozen.MustParse(tc.args)); err != nil {
					t.Fatalf("CheckArgs: %v", err)
				}
				return
			}
			e := asError(t, err, registry.CodeInvalidArgs)
			if calls.Load() != 0 {
				t.Fatal("body ran with invalid arguments")
			}
			if v != nil {
				t.Fatalf("value %v returned with an error", v)
			}
			for _, p := range tc.paths {
				if !strings.Contains(e.Message, p) {
					t.Errorf("message %q does not name %q", e.Message, p)
				}
			}
			if !strings.Contains(e.Message, "args") {
				t.Errorf("message %q does not name the tool", e.Message)
			}
			asError(t, tool.CheckArgs(frozen.MustParse(tc.args)), registry.CodeInvalidArgs)
		})
	}
}

func TestCheckArgsOfValidArgumentsDoesNotDecode(t *testing.T) {
	var calls atomic.Int32
	tool := argsTool(t, &calls)
	args := frozen.MustParse(`{"name":"a","count":2,"opts":{"verbose":true}}`)
	if n := testing.AllocsPerRun(100, func() {
		if err := tool.CheckArgs(args); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Fatalf("CheckArgs of valid arguments allocated %v times", n)
	}
}

func TestDefineAbsentArgumentsAreInvalid(t *testing.T) {
	var calls atomic.Int32
	_, err := argsTool(t, &calls).Invoke(context.Background(), stubExec{}, frozen.Value{})
	asError(t, err, registry.CodeInvalidArgs)
	if calls.Load() != 0 {
		t.Fatal("body ran with absent arguments")
	}
}

func TestInvokePassesExecAndErrors(t *testing.T) {
	sentinel := errors.New("sentinel")
	var seen string
	tool := registry.MustDefine(registry.Definition{
		Name:   "e",
		Output: str(),
		Behavior: registry.Behavior{Execute: func(_ context.Context, ex registry.Exec, _ frozen.Value) (any, error) {
			seen = ex.CallID()
			return nil, sentinel
		}},
	})
	_, err := tool.Invoke(context.Background(), stubExec{callID: "call-7"}, frozen.MustParse(`{}`))
	if !errors.Is(err, sentinel) {
		t.Fatalf("error %v, want the body's error", err)
	}
	if seen != "call-7" {
		t.Fatalf("body saw call id %q", seen)
	}
}

func rawParams() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"],"additionalProperties":false}`)
}

func TestRawDoesNotValidateArguments(t *testing.T) {
	for _, args := range []string{`"a string where an object belongs"`, `{"n":"x","extra":true}`, `[1,2]`, `null`} {
		t.Run(args, func(t *testing.T) {
			var got frozen.Value
			calls := 0
			tool, err := registry.Raw(registry.RawDefinition{
				Name:       "raw",
				Parameters: rawParams(),
				Output:     json.RawMessage(`{"type":"string"}`),
				Behavior: registry.Behavior{
					Execute: func(_ context.Context, _ registry.Exec, a frozen.Value) (any, error) {
						calls++
						got = a
						return "done", nil
					},
					IsConcurrencySafe: func(frozen.Value) bool { return true },
				},
			})
			if err != nil {
				t.Fatal(err)
			}
			if tool.ValidatesArgs() {
				t.Fatal("a raw tool claims to validate arguments")
			}
			if err := tool.CheckArgs(frozen.MustParse(args)); err != nil {
				t.Fatalf("CheckArgs on a raw tool: %v", err)
			}
			v, err := tool.Invoke(context.Background(), stubExec{}, frozen.MustParse(args))
			if err != nil || v != "done" {
				t.Fatalf("Invoke = %v, %v", v, err)
			}
			if calls != 1 || got.String() != frozen.MustParse(args).String() {
				t.Fatalf("body ran %d times and saw %s", calls, got)
			}
			if !tool.ConcurrencySafe(frozen.MustParse(args)) {
				t.Fatal("a raw tool's classifier was not consulted")
			}
			// The parameters are shown verbatim to models.
			var p map[string]any
			if err := json.Unmarshal(tool.Parameters(), &p); err != nil || p["additionalProperties"] != false {
				t.Fatalf("raw parameters %s", tool.Parameters())
			}
		})
	}
}

func TestRawRejects(t *testing.T) {
	body := registry.Behavior{Execute: returning("x")}
	out := json.RawMessage(`{"type":"string"}`)
	cases := []struct {
		name string
		def  registry.RawDefinition
		want string
	}{
		{"no output schema", registry.RawDefinition{Name: "r", Parameters: rawParams(), Behavior: body}, "output schema"},
		{"no execute", registry.RawDefinition{Name: "r", Output: out}, "Execute"},
		{"run_code", registry.RawDefinition{Name: registry.RunCode, Output: out, Behavior: body}, "reserved"},
		{"bad name", registry.RawDefinition{Name: "", Output: out, Behavior: body}, "name"},
		{"parameters not JSON", registry.RawDefinition{Name: "r", Parameters: json.RawMessage(`{nope`), Output: out, Behavior: body}, "parameters"},
		{"output not JSON", registry.RawDefinition{Name: "r", Output: json.RawMessage(`{nope`), Behavior: body}, "output"},
		{"parameters not a schema", registry.RawDefinition{Name: "r", Parameters: json.RawMessage(`{"type":42}`), Output: out, Behavior: body}, "parameters"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := registry.Raw(tc.def)
			if err == nil {
				t.Fatal("Raw accepted the definition")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q does not mention %q", err, tc.want)
			}
		})
	}
}

func TestRawDefaultParameters(t *testing.T) {
	tool, err := registry.Raw(registry.RawDefinition{Name: "r", Output: json.RawMessage(`{"type":"string"}`), Behavior: registry.Behavior{Execute: returning("x")}})
	if err != nil {
		t.Fatal(err)
	}
	var p map[string]any
	if err := json.Unmarshal(tool.Parameters(), &p); err != nil || p["type"] != "object" {
		t.Fatalf("default raw parameters %s", tool.Parameters())
	}
}

func TestValidateOutput(t *testing.T) {
	out := closedObject(map[string]*schema.Node{"n": intg()}, "n")
	define := registry.MustDefine(registry.Definition{Name: "d", Output: out, Behavior: registry.Behavior{Execute: returning(nil)}})
	raw, err := registry.Raw(registry.RawDefinition{
		Name:     "r",
		Output:   json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"],"additionalProperties":false}`),
		Behavior: registry.Behavior{Execute: returning(nil)},
	})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		value string
		ok    bool
	}{
		{`{"n":1}`, true},
		{`{"n":12345678901234567890}`, true},
		{`{"n":"1"}`, false},
		{`{"n":1.5}`, false},
		{`{}`, false},
		{`{"n":1,"x":2}`, false},
		{`[]`, false},
		{`null`, false},
	}
	for _, tool := range []*registry.Tool{define, raw} {
		for _, tc := range cases {
			t.Run(tool.Name()+" "+tc.value, func(t *testing.T) {
				err := tool.ValidateOutput(frozen.MustParse(tc.value))
				if tc.ok {
					if err != nil {
						t.Fatalf("ValidateOutput: %v", err)
					}
					return
				}
				e := asError(t, err, registry.CodeInvalidToolOutput)
				if !strings.Contains(e.Message, tool.Name()) {
					t.Fatalf("message %q does not name the tool", e.Message)
				}
			})
		}
		asError(t, tool.ValidateOutput(frozen.Value{}), registry.CodeInvalidToolOutput)
	}
}

func TestInvokeRecoversPanic(t *testing.T) {
	tool := registry.MustDefine(registry.Definition{
		Name:   "boomer",
		Output: str(),
		Behavior: registry.Behavior{Execute: func(context.Context, registry.Exec, frozen.Value) (any, error) {
			panic("kaboom")
		}},
	})
	v, err := tool.Invoke(context.Background(), stubExec{}, frozen.MustParse(`{}`))
	var pe *registry.PanicError
	if !errors.As(err, &pe) {
		t.Fatalf("error %v (%T), want *PanicError", err, err)
	}
	if v != nil || pe.Value != "kaboom" || !strings.Contains(err.Error(), "boomer") || !strings.Contains(err.Error(), "kaboom") {
		t.Fatalf("v=%v err=%q value=%v", v, err, pe.Value)
	}
}

func deepArray(n int) string {
	return strings.Repeat("[", n) + "1" + strings.Repeat("]", n)
}

func TestDefaultRender(t *testing.T) {
	cases := []struct {
		name, value, want string
	}{
		{"string raw", `"line one\nline \"two\""`, "line one\nline \"two\""},
		{"empty string", `""`, ""},
		{"object pretty", `{"a":1,"b":[true,null]}`, "{\n  \"a\": 1,\n  \"b\": [\n    true,\n    null\n  ]\n}"},
		{"number verbatim", `12345678901234567890.50`, "12345678901234567890.50"},
		{"null", `null`, "null"},
		{"bool", `false`, "false"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := registry.DefaultRender(frozen.MustParse(tc.value))
			if len(got) != 1 || got[0].Type != "text" || got[0].Text != tc.want {
				t.Fatalf("DefaultRender(%s) = %#v, want text %q", tc.value, got, tc.want)
			}
		})
	}
	t.Run("deep", func(t *testing.T) {
		const depth = 1500 // pretty-printed text grows with depth², so keep it modest
		got := registry.DefaultRender(frozen.MustParse(deepArray(depth)))
		if len(got) != 1 || !strings.HasPrefix(got[0].Text, "[\n  [\n    [") || strings.Count(got[0].Text, "[") != depth {
			t.Fatalf("deep render: %d blocks, prefix %q", len(got), got[0].Text[:min(20, len(got[0].Text))])
		}
	})
}

func TestRenderUsesDefaultWithoutRenderer(t *testing.T) {
	tool := newTool(t, "plain")
	blocks, err := tool.Render(frozen.MustParse(`{}`), frozen.MustParse(`"hello"`))
	if err != nil || len(blocks) != 1 || blocks[0].Text != "hello" {
		t.Fatalf("Render = %#v, %v", blocks, err)
	}
}

func TestRenderCopiesAndRecovers(t *testing.T) {
	shared := []registry.ContentBlock{registry.Text("shared")}
	var gotArgs, gotValue string
	tool := registry.MustDefine(registry.Definition{
		Name:   "r",
		Output: &schema.Node{Type: "json"},
		Behavior: registry.Behavior{
			Execute: returning(1),
			Render: func(args, value frozen.Value) []registry.ContentBlock {
				gotArgs, gotValue = args.String(), value.String()
				return shared
			},
		},
	})
	blocks, err := tool.Render(frozen.MustParse(`{"q":1}`), frozen.MustParse(`[2]`))
	if err != nil || len(blocks) != 1 || blocks[0].Text != "shared" {
		t.Fatalf("Render = %#v, %v", blocks, err)
	}
	if gotArgs != `{"q":1}` || gotValue != `[2]` {
		t.Fatalf("renderer saw %s %s", gotArgs, gotValue)
	}
	blocks[0].Text = "mutated"
	if shared[0].Text != "shared" {
		t.Fatal("Render returned the renderer's own slice")
	}

	panicky := registry.MustDefine(registry.Definition{
		Name:   "p",
		Output: str(),
		Behavior: registry.Behavior{
			Execute: returning("x"),
			Render:  func(frozen.Value, frozen.Value) []registry.ContentBlock { panic(errors.New("render broke")) },
		},
	})
	blocks, err = panicky.Render(frozen.MustParse(`{}`), frozen.MustParse(`"x"`))
	var pe *registry.PanicError
	if !errors.As(err, &pe) || blocks != nil || !strings.Contains(err.Error(), "render broke") {
		t.Fatalf("panicking render: %#v, %v", blocks, err)
	}
}

func TestMeta(t *testing.T) {
	cases := []struct {
		name    string
		meta    registry.MetaFunc
		want    string // "" means absent
		wantErr bool
		panics  bool
	}{
		{"absent", nil, "", false, false},
		{"value", func(args, value frozen.Value) (any, error) {
			return map[string]any{"args": args, "value": value}, nil
		}, `{"args":{"a":1},"value":"v"}`, false, false},
		{"nil means none", func(frozen.Value, frozen.Value) (any, error) { return nil, nil }, "", false, false},
		{"error", func(frozen.Value, frozen.Value) (any, error) { return nil, errors.New("meta failed") }, "", true, false},
		{"not JSON", func(frozen.Value, frozen.Value) (any, error) { return make(chan int), nil }, "", true, false},
		{"panic", func(frozen.Value, frozen.Value) (any, error) { panic("meta panic") }, "", true, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tool := registry.MustDefine(registry.Definition{
				Name:     "m",
				Output:   str(),
				Behavior: registry.Behavior{Execute: returning("v"), PresentationMeta: tc.meta},
			})
			if tool.HasPresentationMeta() != (tc.meta != nil) {
				t.Fatalf("HasPresentationMeta = %v", tool.HasPresentationMeta())
			}
			m, err := tool.Meta(frozen.MustParse(`{"a":1}`), frozen.MustParse(`"v"`))
			if tc.wantErr {
				if err == nil {
					t.Fatalf("Meta = %s, want an error", m)
				}
				var pe *registry.PanicError
				if errors.As(err, &pe) != tc.panics {
					t.Fatalf("error %v (%T): panic error = %v, want %v", err, err, !tc.panics, tc.panics)
				}
				if !m.IsZero() {
					t.Fatalf("meta %s returned with an error", m)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.want == "" {
				if !m.IsZero() {
					t.Fatalf("meta %s, want absent", m)
				}
				return
			}
			if m.String() != tc.want {
				t.Fatalf("meta %s, want %s", m, tc.want)
			}
		})
	}
}

func TestConcurrencySafe(t *testing.T) {
	params := &schema.Node{Type: "object", Properties: map[string]*schema.Node{"path": str()}, Required: []string{"path"}}
	valid := frozen.MustParse(`{"path":"/tmp"}`)
	cases := []struct {
		name       string
		classifier func(frozen.Value) bool
		args       frozen.Value
		want       bool
		wantCalled bool
	}{
		{"exact true", func(frozen.Value) bool { return true }, valid, true, true},
		{"false", func(frozen.Value) bool { return false }, valid, false, true},
		{"no classifier", nil, valid, false, false},
		{"invalid arguments", func(frozen.Value) bool { return true }, frozen.MustParse(`{"path":7}`), false, false},
		{"absent arguments", func(frozen.Value) bool { return true }, frozen.Value{}, false, false},
		{"panicking classifier", func(frozen.Value) bool { panic("classify") }, valid, false, true},
		{"depends on arguments", func(a frozen.Value) bool { return strings.Contains(a.String(), "/tmp") }, valid, true, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			called := false
			var classify func(frozen.Value) bool
			if tc.classifier != nil {
				classify = func(a frozen.Value) bool { called = true; return tc.classifier(a) }
			}
			tool := registry.MustDefine(registry.Definition{
				Name:       "c",
				Parameters: params,
				Output:     str(),
				Behavior:   registry.Behavior{Execute: returning("x"), IsConcurrencySafe: classify},
			})
			if got := tool.ConcurrencySafe(tc.args); got != tc.want {
				t.Fatalf("ConcurrencySafe = %v, want %v", got, tc.want)
			}
			if called != tc.wantCalled {
				t.Fatalf("classifier called = %v, want %v", called, tc.wantCalled)
			}
		})
	}
}

// presenterTool's current schema requires "path"; an older schema called it
// "file".
func presenterTool(call registry.PresentCallFunc, result registry.PresentResultFunc) *registry.Tool {
	return registry.MustDefine(registry.Definition{
		Name: "present",
		Parameters: &schema.Node{Type: "object", Properties: map[string]*schema.Node{
			"path": str(),
			"mode": {Type: "string", Enum: []any{"r", "w"}},
		}, Required: []string{"path"}},
		Output: str(),
		Behavior: registry.Behavior{
			Execute:       returning("x"),
			PresentCall:   call,
			PresentResult: result,
		},
	})
}

func TestPresentersAreSoft(t *testing.T) {
	current := frozen.MustParse(`{"path":"/a","mode":"r"}`)
	cases := []struct {
		name string
		args frozen.Value
		call registry.PresentCallFunc
		res  registry.PresentResultFunc
		want any
	}{
		{"current arguments", current,
			func(a frozen.Value) any { return "call " + a.String() },
			func(a frozen.Value, r registry.ResultView) any { return "result " + r.Content[0].Text },
			"ok"},
		{"older schema: renamed key", frozen.MustParse(`{"file":"/a"}`),
			func(frozen.Value) any { return "called" },
			func(frozen.Value, registry.ResultView) any { return "called" },
			nil},
		{"older schema: enum value gone", frozen.MustParse(`{"path":"/a","mode":"append"}`),
			func(frozen.Value) any { return "called" },
			func(frozen.Value, registry.ResultView) any { return "called" },
			nil},
		{"not an object", frozen.MustParse(`[1]`),
			func(frozen.Value) any { return "called" },
			func(frozen.Value, registry.ResultView) any { return "called" },
			nil},
		{"absent arguments", frozen.Value{},
			func(frozen.Value) any { return "called" },
			func(frozen.Value, registry.ResultView) any { return "called" },
			nil},
		{"panicking presenters", current,
			func(frozen.Value) any { panic("call presenter") },
			func(frozen.Value, registry.ResultView) any { var m map[string]int; m["x"] = 1; return m },
			nil},
		{"absent presenters", current, nil, nil, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tool := presenterTool(tc.call, tc.res)
			content := []registry.ContentBlock{registry.Text("shown")}
			call := tool.PresentCall(tc.args)
			res := tool.PresentResult(tc.args, registry.ResultView{Content: content})
			if tc.want == nil {
				if call != nil || res != nil {
					t.Fatalf("PresentCall = %v, PresentResult = %v; want nil", call, res)
				}
				return
			}
			if call != "call "+current.String() || res != "result shown" {
				t.Fatalf("PresentCall = %v, PresentResult = %v", call, res)
			}
		})
	}
}

func TestPresentResultGetsACopyOfContent(t *testing.T) {
	var sawMeta string
	tool := presenterTool(nil, func(_ frozen.Value, r registry.ResultView) any {
		r.Content[0].Text = "scribbled"
		sawMeta = r.Meta.String()
		return r.IsError
	})
	content := []registry.ContentBlock{registry.Text("original")}
	got := tool.PresentResult(frozen.MustParse(`{"path":"/a"}`), registry.ResultView{Content: content, IsError: true, Meta: frozen.MustParse(`{"m":1}`)})
	if got != true || sawMeta != `{"m":1}` {
		t.Fatalf("presenter returned %v, saw meta %q", got, sawMeta)
	}
	if content[0].Text != "original" {
		t.Fatal("a result presenter mutated the caller's content")
	}
}

type nilDerefErr struct{ msg string }

func (e *nilDerefErr) Error() string { return e.msg } // dereferences a nil receiver

type panicErr struct{}

func (panicErr) Error() string { panic("Error panics") }

type panicStringer struct{}

func (panicStringer) String() string { panic(fmt.Errorf("String panics")) }

type okStringer struct{}

func (okStringer) String() string { return "stringer text" }

func TestSafeStringIsTotal(t *testing.T) {
	var typedNil *nilDerefErr
	cases := []struct {
		name string
		v    any
		want string // exact, or "" for any non-empty text
	}{
		{"nil", nil, "nil"},
		{"error", errors.New("plain error"), "plain error"},
		{"string", "just text", "just text"},
		{"int", 42, "42"},
		{"stringer", okStringer{}, "stringer text"},
		{"typed nil error", error(typedNil), ""},
		{"panicking error", panicErr{}, ""},
		{"panicking stringer", panicStringer{}, ""},
		{"struct", struct{ A int }{7}, "{7}"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := registry.SafeString(tc.v)
			if tc.want != "" && got != tc.want {
				t.Fatalf("SafeString = %q, want %q", got, tc.want)
			}
			if got == "" {
				t.Fatal("SafeString returned no text")
			}
			pe := &registry.PanicError{Where: "here", Value: tc.v}
			if msg := pe.Error(); !strings.HasPrefix(msg, "here panicked: ") {
				t.Fatalf("PanicError.Error() = %q", msg)
			}
		})
	}
}

func TestErrorAndContent(t *testing.T) {
	e := registry.Errorf(registry.CodeDenied, "no %s", "way")
	if e.Code != registry.CodeDenied || e.Message != "no way" || e.Error() != "DENIED: no way" {
		t.Fatalf("Errorf: %+v %q", e, e.Error())
	}
	k := &registry.Error{Code: registry.CodeCodeRunFailed, Kind: "syntax", Message: "bad"}
	if k.Error() != "CODE_RUN_FAILED (syntax): bad" {
		t.Fatalf("kind error: %q", k.Error())
	}

	img := registry.Image("image/png", "AAAA")
	if !img.IsImage() || img.MimeType != "image/png" || img.Data != "AAAA" || registry.Text("t").IsImage() {
		t.Fatalf("image block %+v", img)
	}
	b, _ := json.Marshal(registry.Text("hi"))
	if string(b) != `{"type":"text","text":"hi"}` {
		t.Fatalf("text block JSON %s", b)
	}

	if registry.CloneContent(nil) != nil {
		t.Fatal("CloneContent(nil) != nil")
	}
	orig := []registry.ContentBlock{registry.Text("a")}
	c := registry.CloneContent(orig)
	c[0].Text = "b"
	if orig[0].Text != "a" {
		t.Fatal("CloneContent shares its backing array")
	}
}

func TestRawEnforceParameters(t *testing.T) {
	calls := 0
	tool, err := registry.Raw(registry.RawDefinition{
		Name:              "raw",
		Parameters:        json.RawMessage(`{"type":"object","properties":{"uri":{"type":"string","minLength":1}},"required":["uri"],"additionalProperties":false}`),
		EnforceParameters: true,
		Output:            json.RawMessage(`{"type":"string"}`),
		Behavior: registry.Behavior{Execute: func(context.Context, registry.Exec, frozen.Value) (any, error) {
			calls++
			return "done", nil
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if !tool.ValidatesArgs() {
		t.Fatal("EnforceParameters: ValidatesArgs is false")
	}
	_, err = tool.Invoke(context.Background(), stubExec{}, frozen.MustParse(`{"uri":7,"extra":1}`))
	var e *registry.Error
	if !errors.As(err, &e) || e.Code != registry.CodeInvalidArgs || !strings.Contains(e.Message, "/uri") || !strings.Contains(e.Message, "extra") {
		t.Fatalf("invalid arguments: %v", err)
	}
	if calls != 0 {
		t.Fatal("the body ran with invalid arguments")
	}
	if v, err := tool.Invoke(context.Background(), stubExec{}, frozen.MustParse(`{"uri":"a://b"}`)); err != nil || v != "done" || calls != 1 {
		t.Fatalf("valid arguments: %v %v (%d calls)", v, err, calls)
	}
}
