package httpsource_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/codemode/codemode/agent"
	"github.com/codemode/codemode/app"
	"github.com/codemode/codemode/config"
	"github.com/codemode/codemode/httpsource"
	"github.com/codemode/codemode/registry"
)

// petsDoc is a small API: list (query filters), get (path), create (JSON
// body), delete, a text and an image operation, and an API key scheme.
const petsDoc = `{
  "openapi": "3.0.3",
  "info": {"title": "pets", "version": "1"},
  "servers": [{"url": "https://pets.invalid/v1"}],
  "components": {
    "securitySchemes": {"key": {"type": "apiKey", "in": "header", "name": "X-Pets-Key"}},
    "schemas": {
      "Pet": {"type": "object", "required": ["id", "name"], "properties": {
        "id": {"type": "integer"}, "name": {"type": "string"}, "tag": {"type": "string"}}}
    }
  },
  "paths": {
    "/pets": {
      "get": {"operationId": "listPets", "tags": ["pets"], "summary": "List pets",
        "parameters": [
          {"name": "tag", "in": "query", "schema": {"type": "array", "items": {"type": "string"}}},
          {"name": "limit", "in": "query", "schema": {"type": "integer"}}],
        "responses": {"200": {"description": "ok", "content": {"application/json": {"schema": {"type": "array", "items": {"$ref": "#/components/schemas/Pet"}}}}}}},
      "post": {"operationId": "createPet", "tags": ["pets"], "summary": "Create a pet",
        "requestBody": {"required": true, "content": {"application/json": {"schema": {"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}, "tag": {"type": "string"}}}}}},
        "responses": {"201": {"description": "created", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Pet"}}}}}}
    },
    "/pets/{petId}": {
      "parameters": [{"name": "petId", "in": "path", "required": true, "schema": {"type": "string"}}],
      "get": {"operationId": "showPet", "tags": ["pets"], "responses": {"200": {"description": "ok", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Pet"}}}}}},
      "put": {"operationId": "updatePet", "tags": ["pets"],
        "requestBody": {"content": {"application/json": {"schema": {"type": "object", "properties": {"name": {"type": "string"}, "tag": {"type": "string"}}}}}},
        "responses": {"200": {"description": "ok", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Pet"}}}}}},
      "delete": {"operationId": "deletePet", "tags": ["admin"], "responses": {"204": {"description": "gone"}}}
    },
    "/notes": {"get": {"operationId": "notes", "tags": ["misc"], "responses": {"200": {"description": "text", "content": {"text/plain": {}}}}}},
    "/avatar": {"get": {"operationId": "avatar", "tags": ["misc"], "responses": {"200": {"description": "png", "content": {"image/png": {}}}}}},
    "/big": {"get": {"operationId": "big", "tags": ["misc"], "responses": {"200": {"description": "large"}}}},
    "/slow": {"get": {"operationId": "slow", "tags": ["misc"], "responses": {"200": {"description": "never"}}}},
    "/flaky": {"get": {"operationId": "flaky", "tags": ["misc"], "responses": {"200": {"description": "503 first"}}},
               "post": {"operationId": "flakyPost", "tags": ["misc"], "responses": {"200": {"description": "503 first"}}}},
    "/away": {"get": {"operationId": "away", "tags": ["misc"], "responses": {"200": {"description": "redirects"}}}}
  }
}`

// setup builds an in-process app from yml (openapi_sources included),
// starts its sources and returns both.
func setup(t *testing.T, yml string, opts app.Options) (*app.App, *httpsource.Sources) {
	t.Helper()
	cfg, err := config.Parse(strings.NewReader("isolation: inproc\nstore: memory://\ndemo: false\n" + yml))
	if err != nil {
		t.Fatal(err)
	}
	a, err := app.New(context.Background(), cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	src, err := httpsource.Start(context.Background(), a.Registry, cfg.OpenAPISources, httpsource.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(src.Close)
	return a, src
}

// run runs a program and returns its result value ({logs, result}).
func run(t *testing.T, a *app.App, code string) app.RunResult {
	t.Helper()
	res, err := a.Run(context.Background(), app.RunRequest{Code: code})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// result decodes the program's returned value.
func result(t *testing.T, res app.RunResult) any {
	t.Helper()
	if res.IsError {
		t.Fatalf("run failed: %+v", res.Error)
	}
	var v struct {
		Result any `json:"result"`
	}
	if err := json.Unmarshal(res.Value, &v); err != nil {
		t.Fatal(err)
	}
	return v.Result
}

// sessionLog is every event of the run's session, as one text.
func sessionLog(t *testing.T, a *app.App, res app.RunResult) string {
	t.Helper()
	evs, err := a.Store.Events(context.Background(), res.SessionID, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, e := range evs {
		b.WriteString(e.Type)
		b.Write(e.Data)
		b.WriteByte('\n')
	}
	return b.String()
}

var _ = agent.Allow

// startOnly parses yml's openapi_sources and starts them on a bare
// registry with a default scope, without an app: the sources alone.
func startOnly(t *testing.T, yml string) (*httpsource.Sources, error) {
	t.Helper()
	cfg, err := config.Parse(strings.NewReader(yml))
	if err != nil {
		t.Fatal(err)
	}
	reg := registry.New()
	if err := reg.CreateScope(config.DefaultScope, "", registry.ModeNative); err != nil {
		t.Fatal(err)
	}
	src, err := httpsource.Start(context.Background(), reg, cfg.OpenAPISources, httpsource.Options{})
	if err == nil {
		t.Cleanup(src.Close)
	}
	return src, err
}
