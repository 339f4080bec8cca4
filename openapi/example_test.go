package openapi_test

import (
	"fmt"
	"log"

	"github.com/codemode/codemode/openapi"
)

func Example() {
	doc, err := openapi.Parse([]byte(`{
	  "openapi": "3.0.3",
	  "paths": {"/repos/{owner}/{repo}/pulls": {"get": {
	    "operationId": "pulls/list",
	    "summary": "List pull requests",
	    "parameters": [
	      {"name": "owner", "in": "path", "required": true, "schema": {"type": "string"}},
	      {"name": "repo", "in": "path", "required": true, "schema": {"type": "string"}},
	      {"name": "state", "in": "query", "schema": {"type": "string", "enum": ["open", "closed", "all"], "x-internal": true}}
	    ],
	    "responses": {"200": {"content": {"application/json": {"schema": {"type": "array", "items": {"$ref": "#/components/schemas/pr"}}}}}}
	  }}},
	  "components": {"schemas": {"pr": {"type": "object", "properties": {"title": {"type": "string", "nullable": true}}}}}
	}`))
	if err != nil {
		log.Fatal(err)
	}
	ops, err := doc.Operations()
	if err != nil {
		log.Fatal(err)
	}
	for _, op := range ops {
		fmt.Println(op.Name, op.Method, op.Path, op.ReadOnly)
		fmt.Println(string(op.InputSchema))
		fmt.Println(string(op.OutputSchema))
	}
	// Output:
	// pulls_list GET /repos/{owner}/{repo}/pulls true
	// {"type":"object","properties":{"owner":{"type":"string"},"repo":{"type":"string"},"state":{"enum":["open","closed","all"],"type":"string"}},"required":["owner","repo"],"additionalProperties":false}
	// {"items":{"properties":{"title":{"type":["string","null"]}},"type":"object"},"type":"array"}
}
