package githubapi

import (
	"bytes"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v5"
)

// Every schema package openapi makes of GitHub's descriptions is a valid
// JSON Schema (draft 2020-12), input and output alike.
func TestSchemasCompile(t *testing.T) {
	all := tools(t)
	if testing.Short() {
		all = all[:100]
	}
	for _, tool := range all {
		for _, s := range []struct {
			kind   string
			schema []byte
		}{{"parameters", tool.Parameters}, {"output", tool.Output}} {
			if s.schema == nil {
				continue
			}
			c := jsonschema.NewCompiler()
			c.Draft = jsonschema.Draft2020
			url := "mem:///" + tool.Name + "/" + s.kind + ".json"
			if err := c.AddResource(url, bytes.NewReader(s.schema)); err != nil {
				t.Fatalf("%s %s: %v", tool.Name, s.kind, err)
			}
			if _, err := c.Compile(url); err != nil {
				t.Errorf("%s %s: %v", tool.Name, s.kind, err)
			}
		}
	}
}
