package registry_test

import (
	"context"
	"testing"

	"github.com/codemode/codemode/registry"
	"github.com/codemode/codemode/registry/frozen"
	"github.com/codemode/codemode/registry/schema"
)

// FuzzToolArguments feeds model-supplied argument text through everything a
// tool does with arguments: the body runs exactly when validation passes,
// and nothing panics.
func FuzzToolArguments(f *testing.F) {
	for _, seed := range []string{
		`{}`, `{"path":"/a","depth":2,"opts":{"follow":true}}`, `{"path":null}`,
		`{"opts":{"follow":1,"x":2}}`, `[]`, `"s"`, `null`, `1e999`, `{"__proto__":{"path":1}}`,
		deepArray(3000), `{"path":"a","depth":1.5}`, `{"tags":["a",1,null]}`,
	} {
		f.Add(seed)
	}
	ran := false
	tool := registry.MustDefine(registry.Definition{
		Name: "fuzz",
		Parameters: &schema.Node{
			Type: "object",
			Properties: map[string]*schema.Node{
				"path":  str(),
				"depth": intg(),
				"tags":  {Type: "array", Items: str()},
				"opts":  closedObject(map[string]*schema.Node{"follow": {Type: "boolean"}}),
			},
			Required: []string{"path"},
		},
		Output: str(),
		Behavior: registry.Behavior{
			Execute:           func(context.Context, registry.Exec, frozen.Value) (any, error) { ran = true; return "ok", nil },
			IsConcurrencySafe: func(frozen.Value) bool { return true },
			PresentCall:       func(a frozen.Value) any { return a.Len() },
		},
	})
	f.Fuzz(func(t *testing.T, text string) {
		args, err := frozen.ParseString(text)
		if err != nil {
			return
		}
		ran = false
		valid := tool.CheckArgs(args) == nil
		_, err = tool.Invoke(context.Background(), stubExec{}, args)
		if ran != valid || (err == nil) != valid {
			t.Fatalf("valid=%v but body ran=%v, err=%v", valid, ran, err)
		}
		if tool.ConcurrencySafe(args) != valid {
			t.Fatalf("ConcurrencySafe disagrees with validation (valid=%v)", valid)
		}
		if (tool.PresentCall(args) != nil) != valid {
			t.Fatalf("PresentCall disagrees with validation (valid=%v)", valid)
		}
	})
}
