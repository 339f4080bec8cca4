package openapi

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// operations parses doc and returns its operations by name.
func operations(t *testing.T, doc string) map[string]Operation {
	t.Helper()
	d, err := Parse([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	ops, err := d.Operations()
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]Operation{}
	for _, op := range ops {
		byName[op.Name] = op
	}
	return byName
}

// equalJSON fails unless got and want are the same JSON value.
func equalJSON(t *testing.T, what string, got json.RawMessage, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("%s: %v in %s", what, err, got)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("%s: bad want: %v", what, err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("%s:\n got %s\nwant %s", what, got, want)
	}
}

func TestParametersAndBodyMerge(t *testing.T) {
	ops := operations(t, `{
	  "openapi": "3.0.3",
	  "paths": {
	    "/repos/{owner}/{repo}/issues": {
	      "parameters": [{"$ref": "#/components/parameters/owner"}, {"name": "repo", "in": "path", "schema": {"type": "string"}}],
	      "post": {
	        "operationId": "issues/create",
	        "summary": "Create an issue",
	        "description": "Any user with pull access can create an issue.",
	        "tags": ["issues"],
	        "parameters": [
	          {"name": "dry_run", "in": "query", "description": "Only validate.", "schema": {"type": "boolean", "example": true}},
	          {"name": "session", "in": "cookie", "schema": {"type": "string"}}
	        ],
	        "requestBody": {"required": true, "content": {"application/json": {"schema": {
	          "type": "object", "required": ["title"],
	          "properties": {"title": {"type": "string", "x-internal": 1}, "labels": {"type": "array", "items": {"type": "string"}}}
	        }}}},
	        "responses": {"201": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/issue"}}}}, "404": {"description": "nope"}}
	      }
	    }
	  },
	  "components": {
	    "parameters": {"owner": {"name": "owner", "in": "path", "required": true, "description": "The account owner.", "schema": {"type": "string"}}},
	    "schemas": {"issue": {"type": "object", "properties": {"number": {"type": "integer"}}, "xml": {"name": "i"}}}
	  }
	}`)
	op, ok := ops["issues_create"]
	if !ok {
		t.Fatalf("no issues_create in %v", ops)
	}
	if op.Method != "POST" || op.Path != "/repos/{owner}/{repo}/issues" || op.OperationID != "issues/create" || op.ReadOnly || op.Idempotent {
		t.Errorf("operation = %+v", op)
	}
	if want := "Create an issue.\n\nAny user with pull access can create an issue."; op.Description != want {
		t.Errorf("description = %q, want %q", op.Description, want)
	}
	equalJSON(t, "input", op.InputSchema, `{
	  "type": "object",
	  "properties": {
	    "owner": {"type": "string", "description": "The account owner."},
	    "repo": {"type": "string"},
	    "dry_run": {"type": "boolean", "description": "Only validate."},
	    "labels": {"type": "array", "items": {"type": "string"}},
	    "title": {"type": "string"}
	  },
	  "required": ["owner", "repo", "title"],
	  "additionalProperties": false
	}`)
	// Parameters come first, in declared order.
	if i, j := strings.Index(string(op.InputSchema), `"owner"`), strings.Index(string(op.InputSchema), `"dry_run"`); i > j {
		t.Errorf("parameters out of order: %s", op.InputSchema)
	}
	equalJSON(t, "output", op.OutputSchema, `{"type": "object", "properties": {"number": {"type": "integer"}}}`)
	wantInputs := []Input{{"owner", InPath, "simple", false}, {"repo", InPath, "simple", false}, {"dry_run", InQuery, "form", true}, {Name: "labels", In: InField}, {Name: "title", In: InField}}
	if !reflect.DeepEqual(op.Inputs, wantInputs) || op.ContentType != "application/json" {
		t.Errorf("inputs = %v, content type %q; want %v, application/json", op.Inputs, op.ContentType, wantInputs)
	}
}

func TestBodyUnderBody(t *testing.T) {
	for _, tc := range []struct {
		name, body, want string
		in               Location
	}{
		{"array", `{"required": true, "content": {"application/json": {"schema": {"type": "array", "items": {"type": "string"}}}}}`,
			`{"type": "object", "properties": {"id": {"type": "integer"}, "body": {"type": "array", "items": {"type": "string"}}}, "required": ["id", "body"], "additionalProperties": false}`, InBody},
		{"clash with a parameter", `{"content": {"application/json": {"schema": {"type": "object", "properties": {"id": {"type": "string"}}}}}}`,
			`{"type": "object", "properties": {"id": {"type": "integer"}, "body": {"type": "object", "properties": {"id": {"type": "string"}}}}, "required": ["id"], "additionalProperties": false}`, InBody},
		{"not JSON", `{"content": {"text/plain": {"schema": {"type": "string"}}}}`,
			`{"type": "object", "properties": {"id": {"type": "integer"}, "body": {"type": "string"}}, "required": ["id"], "additionalProperties": false}`, InBody},
		{"optional object body", `{"content": {"application/vnd.api+json": {"schema": {"properties": {"a": {"type": "string"}}, "required": ["a"]}}}}`,
			`{"type": "object", "properties": {"id": {"type": "integer"}, "a": {"type": "string"}}, "required": ["id"], "additionalProperties": false}`, InField},
		{"nullable object body", `{"content": {"application/json": {"schema": {"type": "object", "nullable": true, "properties": {"a": {"type": "string"}}}}}}`,
			`{"type": "object", "properties": {"id": {"type": "integer"}, "a": {"type": "string"}}, "required": ["id"], "additionalProperties": false}`, InField},
		{"constrained object body", `{"content": {"application/json": {"schema": {"type": "object", "anyOf": [{"required": ["a"]}], "properties": {"a": {"type": "string"}}}}}}`,
			`{"type": "object", "properties": {"id": {"type": "integer"}, "body": {"type": "object", "anyOf": [{"required": ["a"]}], "properties": {"a": {"type": "string"}}}}, "required": ["id"], "additionalProperties": false}`, InBody},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ops := operations(t, `{"openapi": "3.1.0", "paths": {"/x/{id}": {"put": {"operationId": "put", "parameters": [{"name": "id", "in": "path", "schema": {"type": "integer"}}], "requestBody": `+tc.body+`}}}}`)
			op := ops["put"]
			equalJSON(t, "input", op.InputSchema, tc.want)
			if !op.Idempotent || op.ReadOnly || op.OutputSchema != nil {
				t.Errorf("operation = %+v", op)
			}
			if last := op.Inputs[len(op.Inputs)-1]; last.In != tc.in || op.Inputs[0] != (Input{"id", InPath, "simple", false}) {
				t.Errorf("inputs = %v, want id in path and the body's last input in %s", op.Inputs, tc.in)
			}
		})
	}
}

func TestNames(t *testing.T) {
	long := strings.Repeat("a", 140)
	d, err := Parse([]byte(`{"openapi": "3.0.0", "paths": {
	  "/a": {"get": {"operationId": "pulls/list"}, "post": {"operationId": "pulls list"}},
	  "/b": {"get": {"operationId": "pulls_list"}, "delete": {"operationId": "pulls_list_2"}},
	  "/c/{id}": {"head": {}, "get": {"operationId": "` + long + `"}, "put": {"operationId": "` + long + `"}},
	  "/d": {"get": {"operationId": "éa/b.c-d"}}
	}}`))
	if err != nil {
		t.Fatal(err)
	}
	ops, err := d.Operations()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, op := range ops {
		got = append(got, op.Name)
	}
	want := []string{"pulls_list", "pulls_list_2", "pulls_list_3", "pulls_list_2_2",
		long[:128], long[:126] + "_2", "head_c_id", "a_b.c-d"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("names:\n got %q\nwant %q", got, want)
	}
	if ops[6].Method != "HEAD" || !ops[6].ReadOnly || !ops[6].Idempotent {
		t.Errorf("head operation = %+v", ops[6])
	}
}

func TestErrorsNamePointer(t *testing.T) {
	for _, tc := range []struct {
		name, doc, pointer string
	}{
		{"swagger 2", `{"swagger": "2.0", "paths": {}}`, "/openapi"},
		{"paths not object", `{"openapi": "3.0.0", "paths": []}`, "/paths"},
		{"operation not object", `{"openapi": "3.0.0", "paths": {"/a/b": {"get": 1}}}`, "/paths/~1a~1b/get"},
		{"parameter without name", `{"openapi": "3.0.0", "paths": {"/a": {"get": {"parameters": [{"in": "query"}]}}}}`, "/paths/~1a/get/parameters/0"},
		{"bad location", `{"openapi": "3.0.0", "paths": {"/a": {"get": {"parameters": [{"name": "x", "in": "body"}]}}}}`, "/paths/~1a/get/parameters/0"},
		{"dangling ref", `{"openapi": "3.0.0", "paths": {"/a": {"get": {"responses": {"200": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/nope"}}}}}}}}}`,
			"/paths/~1a/get/responses/200/content/application~1json/schema/$ref"},
		{"remote ref", `{"openapi": "3.0.0", "paths": {"/a": {"get": {"parameters": [{"$ref": "other.json#/p"}]}}}}`, "/paths/~1a/get/parameters/0/$ref"},
		{"schema not object", `{"openapi": "3.0.0", "paths": {"/a": {"get": {"parameters": [{"name": "x", "in": "query", "schema": {"properties": {"y": 3}}}]}}}}`,
			"/paths/~1a/get/parameters/0/schema/properties/y"},
		{"ref chain loop", `{"openapi": "3.0.0", "paths": {"/a": {"$ref": "#/components/x"}}, "components": {"x": {"$ref": "#/components/x"}}}`, "/components/x"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := Parse([]byte(tc.doc))
			if err == nil {
				_, err = d.Operations()
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error = %v, want an *Error", err)
			}
			if e.Pointer != tc.pointer {
				t.Errorf("pointer = %q, want %q (%v)", e.Pointer, tc.pointer, err)
			}
		})
	}
}
