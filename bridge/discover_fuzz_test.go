package bridge

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/codemode/codemode/catalog"
	"github.com/codemode/codemode/sandbox"
	"github.com/codemode/codemode/sdkgen"
)

// FuzzDiscover feeds arbitrary argument lists to the discovery calls: an answer is JSON of the
// documented shape, a refusal is a catalog error (ErrQuery or ErrUnknown), nothing panics.
func FuzzDiscover(f *testing.F) {
	ix := catalog.New(sdkgen.NewSet([]sdkgen.Tool{
		{Name: "math_add", Description: "Adds two numbers.", Parameters: json.RawMessage(`{"type":"object","properties":{"a":{"type":"number"}}}`)},
		{Name: "files_read", Description: "Reads a file."},
	}), nil)
	for _, seed := range []string{`["add numbers"]`, `["x",{"limit":2,"group":"math"}]`, `[null,{"limit":1e300}]`, `[["math_add"]]`, `["nope"]`, `{}`, `[1,2,3]`, `[""]`, `["a",{"limit":"5"}]`} {
		f.Add(seed, true)
		f.Add(seed, false)
	}
	f.Fuzz(func(t *testing.T, args string, search bool) {
		name := sandbox.DescribeName
		if search {
			name = sandbox.SearchName
		}
		out, err := discover(ix, name, []byte(args))
		if err != nil {
			if !errors.Is(err, catalog.ErrQuery) && !errors.Is(err, catalog.ErrUnknown) && !isDecodeError(err) {
				t.Fatalf("%s(%s): unexpected error %v", name, args, err)
			}
			return
		}
		if search {
			var res catalog.Result
			if json.Unmarshal(out, &res) != nil || res.Total != 2 || len(res.Tools) > catalog.MaxLimit {
				t.Fatalf("%s(%s) = %s", name, args, out)
			}
		} else {
			var text string
			if json.Unmarshal(out, &text) != nil || text == "" {
				t.Fatalf("%s(%s) = %s", name, args, out)
			}
		}
	})
}

// isDecodeError reports the error of arguments that are not a JSON list at all (the sandbox
// always sends one; only a fuzzer sends anything else).
func isDecodeError(err error) bool {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	return errors.As(err, &se) || errors.As(err, &te)
}
