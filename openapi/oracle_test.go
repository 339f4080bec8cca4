package openapi_test

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/codemode/codemode/openapi"
)

// published are real documents installed by .ci/node-deps, each read by
// package openapi and by kin-openapi (a well-kept parser nobody here
// wrote), which must agree on what operations there are and on every
// operation's parameters.
var published = []string{
	"../httpsource/testdata/prism/node_modules/@octokit/openapi/generated/api.github.com.json",
	"../httpsource/testdata/prism/node_modules/@octokit/openapi/generated/ghes-3.17.json",
	"../httpsource/testdata/prism/node_modules/@readme/oas-examples/3.1/json/readme.json",
	"../httpsource/testdata/prism/node_modules/@readme/oas-examples/3.0/json/uspto.json",
	"../httpsource/testdata/prism/node_modules/@readme/oas-examples/3.1/yaml/train-travel.yaml",
	"../httpsource/testdata/prism/node_modules/@readme/oas-examples/3.0/yaml/petstore.yaml",
}

func readPublished(t testing.TB, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		msg := p + " is missing: run .ci/node-deps (npm ci in httpsource/testdata/prism)"
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return b
}

// TestAgreesWithKinOpenAPI: for each published document, the operations
// (method and path) and each one's path, query and header parameters are
// those kin-openapi finds.
func TestAgreesWithKinOpenAPI(t *testing.T) {
	for _, p := range published {
		t.Run(filepath.Base(p), func(t *testing.T) {
			b := readPublished(t, p)
			doc, err := openapi.Parse(b)
			if err != nil {
				t.Fatal(err)
			}
			ops, err := doc.Operations()
			if err != nil {
				t.Fatal(err)
			}
			kin, err := openapi3.NewLoader().LoadFromData(b)
			if err != nil {
				t.Fatalf("kin-openapi: %v", err)
			}
			want := map[string]string{}
			for path, item := range kin.Paths.Map() {
				for method, op := range item.Operations() {
					var params []string
					seen := map[string]bool{}
					for _, list := range []openapi3.Parameters{op.Parameters, item.Parameters} {
						for _, pr := range list {
							key := pr.Value.In + ":" + pr.Value.Name
							if pr.Value.In == "cookie" || seen[key] {
								continue
							}
							seen[key] = true
							params = append(params, key)
						}
					}
					sort.Strings(params)
					want[method+" "+path] = strings.Join(params, ",")
				}
			}
			got := map[string]string{}
			for _, op := range ops {
				var params []string
				for _, in := range op.Inputs {
					if in.In == openapi.InPath || in.In == openapi.InQuery || in.In == openapi.InHead {
						params = append(params, string(in.In)+":"+in.Name)
					}
				}
				sort.Strings(params)
				got[op.Method+" "+op.Path] = strings.Join(params, ",")
			}
			if len(got) != len(want) {
				t.Errorf("%d operations, kin-openapi finds %d", len(got), len(want))
			}
			for k, w := range want {
				if g, ok := got[k]; !ok {
					t.Errorf("%s: missing", k)
				} else if g != w {
					t.Errorf("%s: parameters %q, kin-openapi %q", k, g, w)
				}
			}
			t.Logf("%d operations agree", len(got))
		})
	}
}

// BenchmarkParseGitHub compares reading GitHub's REST description (1,200
// operations, 13 MB) into tool definitions with loading it into
// kin-openapi's model alone, in the same run.
func BenchmarkParseGitHub(b *testing.B) {
	doc := readPublished(b, published[0])
	b.Run("codemode", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			d, err := openapi.Parse(doc)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := d.Operations(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("kin-openapi-load", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := openapi3.NewLoader().LoadFromData(doc); err != nil {
				b.Fatal(err)
			}
		}
	})
}
