package openapi

import (
	"encoding/json"
	"regexp"
	"testing"
)

var mcpName = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,128}$`)

// FuzzParse feeds arbitrary bytes to Parse and Operations: neither may panic,
// and every operation they return has a valid, unique name and valid JSON
// schemas.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		`{"openapi": "3.0.3", "paths": {"/a/{id}": {"parameters": [{"$ref": "#/components/parameters/id"}], "get": {"operationId": "a/get", "responses": {"200": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/n"}}}}}}}},
		  "components": {"parameters": {"id": {"name": "id", "in": "path", "schema": {"type": "integer", "nullable": true}}}, "schemas": {"n": {"type": "object", "properties": {"n": {"$ref": "#/components/schemas/n"}}}}}}`,
		`{"openapi": "3.1.0", "paths": {"/x": {"post": {"requestBody": {"content": {"application/json": {"schema": {"type": "array", "items": [true, {"$ref": "#"}]}}}}}}}}`,
		`{"openapi": "3.0.0", "paths": {"/a": {"$ref": "#/paths/~1a"}}}`,
		`{"openapi": "3.0.0", "paths": {"/a": {"get": {"operationId": "x"}}, "/b": {"get": {"operationId": "x"}}}}`,
		`{"openapi": "3.1"}`,
		"openapi: 3.0.3\npaths:\n  /a:\n    get:\n      operationId: a\n      responses:\n        200: {description: ok}\n",
		"openapi: 3.1.0\nx: &a [1, 2]\ny: &b [*a, *a]\npaths: {}\n",
		"openapi: 3.1.0\npaths:\n  /a: &p {get: {}}\n  /b: *p\n",
		`[]`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		d, err := Parse(doc)
		if err != nil {
			return
		}
		ops, err := d.Operations()
		if err != nil {
			return
		}
		seen := map[string]bool{}
		for _, op := range ops {
			if !mcpName.MatchString(op.Name) || seen[op.Name] {
				t.Fatalf("name %q is invalid or repeated", op.Name)
			}
			seen[op.Name] = true
			var input struct {
				Properties map[string]json.RawMessage `json:"properties"`
			}
			if err := json.Unmarshal(op.InputSchema, &input); err != nil || (op.OutputSchema != nil && !json.Valid(op.OutputSchema)) {
				t.Fatalf("%s: invalid schema JSON", op.Name)
			}
			for _, in := range op.Inputs {
				if _, ok := input.Properties[in.Name]; !ok {
					t.Fatalf("%s: input %q is not a property", op.Name, in.Name)
				}
			}
			if len(op.Inputs) != len(input.Properties) {
				t.Fatalf("%s: %d inputs for %d properties", op.Name, len(op.Inputs), len(input.Properties))
			}
		}
	})
}
