package catalog_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/codemode/codemode/catalog"
	"github.com/codemode/codemode/sdkgen"
	"github.com/codemode/codemode/sdkgen/tokens"
)

// A catalog of 100,000 tools is a bounded prompt and a bounded answer, in seconds, not a stall
// (20,000 under the race detector, which slows it tenfold).
func TestHundredThousandTools(t *testing.T) {
	n := 100_000
	if raceEnabled || testing.Short() {
		n = 20_000
	}
	verbs := []string{"list", "get", "create", "update", "delete", "search"}
	tools := make([]sdkgen.Tool, n)
	for i := range tools {
		group, verb := fmt.Sprintf("svc%03d", i%700), verbs[i%len(verbs)]
		tools[i] = sdkgen.Tool{
			Name:        fmt.Sprintf("%s.%s_thing%d", group, verb, i),
			Description: fmt.Sprintf("%s thing number %d of service %s.", verb, i, group),
			Parameters:  []byte(`{"type":"object","properties":{"id":{"type":"string","description":"Which thing."}},"required":["id"]}`),
		}
	}
	start := time.Now()
	set := sdkgen.NewSet(tools)
	prompt := sdkgen.PromptWith(set, sdkgen.PromptOptions{})
	ix := catalog.New(set, nil)
	res, err := ix.Search(catalog.Query{Text: "delete thing number 4242 of service svc042", Limit: 1000})
	t.Logf("%d tools: set, prompt (%d tokens), index and a search in %v", n, tokens.Count(string(prompt)), time.Since(start))
	if err != nil || res.Total != n || len(res.Tools) != catalog.MaxLimit {
		t.Fatalf("search: %v, total %d, %d tools", err, res.Total, len(res.Tools))
	}
	if n := tokens.Count(string(prompt)); n > sdkgen.DefaultPromptBudget {
		t.Fatalf("prompt %d tokens", n)
	}
}
