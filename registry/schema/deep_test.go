package schema

import (
	"bytes"
	"strings"
	"testing"
)

// deepDepth is the nesting used by the deep tests: well past the point where
// unchunked jsonschema/v5 compilation would need gigabytes.
const deepDepth = 5000

// deepCase builds a schema nested depth levels and a matching value, with the
// path of the leaf.
type deepCase struct {
	name  string
	level func(i int, child *Node) *Node // wraps child in one level
	value func(i int, child any) any     // wraps a value in the matching level
	token func(i int) string             // path token the level adds ("" for none)
}

var deepCases = []deepCase{
	{"objects",
		func(_ int, c *Node) *Node { return Object(map[string]*Node{"a": c}, []string{"a"}, true) },
		func(_ int, c any) any { return map[string]any{"a": c} },
		func(int) string { return "/a" }},
	{"arrays",
		func(_ int, c *Node) *Node { return Array(c, "") },
		func(_ int, c any) any { return []any{c} },
		func(int) string { return "/0" }},
	{"mixed with oneOf",
		func(i int, c *Node) *Node {
			switch i % 3 {
			case 0:
				return Object(map[string]*Node{"k": c}, nil, false)
			case 1:
				return Array(c, "")
			}
			return OneOf(c, Null(""))
		},
		func(i int, c any) any {
			switch i % 3 {
			case 0:
				return map[string]any{"k": c}
			case 1:
				return []any{c}
			}
			return c
		},
		func(i int) string { return [...]string{"/k", "/0", ""}[i%3] }},
}

func TestDeepSchemas(t *testing.T) {
	for _, dc := range deepCases {
		t.Run(dc.name, func(t *testing.T) {
			n := Integer("leaf")
			var good, bad any = 1, "x"
			var leafPath strings.Builder
			for i := deepDepth - 1; i >= 0; i-- {
				n = dc.level(i, n)
				good, bad = dc.value(i, good), dc.value(i, bad)
			}
			for i := 0; i < deepDepth; i++ {
				leafPath.WriteString(dc.token(i))
			}
			s := mustCompile(t, n, Value)

			if vs := s.Validate(good); vs != nil {
				t.Fatalf("valid deep value: %d violations, first %.200s", len(vs), vs[0])
			}
			vs := s.Validate(bad)
			if len(vs) != 1 {
				t.Fatalf("invalid deep value: %d violations", len(vs))
			}
			checkViolations(t, bad, vs)
			if dc.name == "mixed with oneOf" {
				// The first oneOf (level 2) fails as a whole; its summary is bounded.
				if vs[0].Path != "/k/0" || !strings.HasPrefix(vs[0].Message, "matches none of the 2 oneOf alternatives") || len(vs[0].Message) > 2000 {
					t.Errorf("violation = %.300s (len %d)", vs[0], len(vs[0].Message))
				}
			} else if vs[0].Path != leafPath.String() || vs[0].Message != "expected integer, got string" {
				t.Errorf("violation = %.100s… %s", vs[0].Path, vs[0].Message)
			}

			// JSON() renders the whole schema, and parses back to the same
			// schema (checked once: it doubles the cost).
			out := s.JSON()
			if strings.Contains(string(out), chunkKeyword) {
				t.Fatal("JSON() leaks the chunk keyword")
			}
			if dc.name != "objects" {
				return
			}
			again, err := CompileJSON(out, Value)
			if err != nil {
				t.Fatalf("recompiling JSON(): %v", err)
			}
			if !bytes.Equal(again.JSON(), out) {
				t.Error("JSON() does not round-trip")
			}
		})
	}
}

func TestDeepViolationAtEveryChunkBoundary(t *testing.T) {
	// Closed objects 3*chunkDepth deep with an extra key at every level: the
	// paths must be re-based correctly across chunk boundaries.
	const depth = 3*chunkDepth + 1
	n := String("")
	for i := 0; i < depth; i++ {
		n = Object(map[string]*Node{"a": n}, nil, true)
	}
	var v any = 1
	for i := 0; i < depth; i++ {
		v = map[string]any{"a": v, "x": true}
	}
	s := mustCompile(t, n, Value)
	vs := s.Validate(v)
	if len(vs) != depth+1 {
		t.Fatalf("%d violations, want %d: %v", len(vs), depth+1, vs)
	}
	got := map[string]string{}
	for _, x := range vs {
		got[x.Path] = x.Message
	}
	prefix := ""
	for i := 0; i < depth; i++ {
		if msg := got[prefix+"/x"]; msg != `unexpected property "x" (allowed: "a")` {
			t.Errorf("at %s/x: %q", prefix, msg)
		}
		prefix += "/a"
	}
	if msg := got[prefix]; msg != "expected string, got number 1" {
		t.Errorf("at the leaf: %q", msg)
	}
	checkViolations(t, v, vs)
}

func TestDepthLimits(t *testing.T) {
	n := Boolean("")
	for i := 0; i < MaxDepth+1; i++ {
		n = Array(n, "")
	}
	_, err := Compile(n, Value)
	if err == nil || !strings.HasSuffix(err.Error(), "schema is nested deeper than 10000 levels") ||
		!strings.HasPrefix(err.Error(), "items.items.") {
		t.Errorf("err = %.100s…", err)
	}

	// A value under an any-value schema may nest up to the value limit.
	var v any = 1
	for i := 0; i < maxValueDepth; i++ {
		v = []any{v}
	}
	s := mustCompile(t, Array(nil, ""), Value)
	if vs := s.Validate(v); vs != nil {
		t.Errorf("value %d deep: %.200v", maxValueDepth, vs)
	}
	if vs := s.Validate([]any{v}); len(vs) != 1 || !strings.HasSuffix(vs[0].Message, "nested deeper than 10000 levels (or is cyclic)") {
		t.Errorf("value %d deep: %.200v", maxValueDepth+1, vs)
	}
}
