package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/codemode/codemode/app"
	"github.com/codemode/codemode/config"
	httpapi "github.com/codemode/codemode/http"
	"github.com/codemode/codemode/session"
)

// A client's program runs in Code Mode through POST /v1/run; its result is
// the program's return value (and its console logs).
func Example() {
	cfg := config.Default()
	a, err := app.New(context.Background(), cfg, app.Options{Store: session.NewMemory(), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		panic(err)
	}
	defer a.Close()
	srv, err := httpapi.New(a, httpapi.Options{})
	if err != nil {
		panic(err)
	}
	hs := httptest.NewServer(srv)
	defer hs.Close()

	resp, err := http.Post(hs.URL+"/v1/run", "application/json", strings.NewReader(
		`{"code": "const a = await tools.math_add({a: 2, b: 3}); console.log('adding'); return {sum: a.sum}"}`))
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	var res struct {
		IsError bool `json:"is_error"`
		Value   struct {
			Logs   []string        `json:"logs"`
			Result json.RawMessage `json:"result"`
		} `json:"value"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&res); err != nil {
		panic(err)
	}
	fmt.Println(resp.StatusCode, res.IsError, res.Value.Logs, string(res.Value.Result))
	// Output: 200 false [adding] {"sum":5}
}
