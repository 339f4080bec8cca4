package schema

import (
	"bytes"
	"encoding/json"
	"testing"
)

// decode parses JSON the way callers of Validate do (UseNumber).
func decode(t testing.TB, s string) any {
	t.Helper()
	v, err := decodeJSON([]byte(s))
	if err != nil {
		t.Fatalf("decode %s: %v", s, err)
	}
	return v
}

func decodeJSON(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

func mustCompile(t testing.TB, n *Node, kind Kind) *Schema {
	t.Helper()
	s, err := Compile(n, kind)
	if err != nil {
		t.Fatalf("Compile: %v", err)
	}
	return s
}

func mustCompileJSON(t testing.TB, src string, kind Kind) *Schema {
	t.Helper()
	s, err := CompileJSON([]byte(src), kind)
	if err != nil {
		t.Fatalf("CompileJSON(%s): %v", src, err)
	}
	return s
}

func ptr[T any](v T) *T { return &v }

// messages renders violations one per element, for compact comparisons.
func messages(vs []Violation) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = v.String()
	}
	return out
}
