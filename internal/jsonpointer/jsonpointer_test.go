package jsonpointer

import (
	"encoding/json"
	"testing"
)

func TestLookup(t *testing.T) {
	var doc any
	if err := json.Unmarshal([]byte(`{"a":{"b/c":[10,{"~d":"x"}]},"":1}`), &doc); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		ptr  string
		want string
		ok   bool
	}{
		{"", `{"":1,"a":{"b/c":[10,{"~d":"x"}]}}`, true},
		{"/a/b~1c/0", `10`, true},
		{"/a/b~1c/1/~0d", `"x"`, true},
		{"/", `1`, true},
		{"/a/b~1c/2", ``, false},
		{"/a/b~1c/-1", ``, false},
		{"/a/b/c", ``, false},
		{"a", ``, false},
		{"/a/b~1c/0/x", ``, false},
	} {
		got, ok := Lookup(doc, tt.ptr)
		if ok != tt.ok {
			t.Errorf("%q: ok %v, want %v", tt.ptr, ok, tt.ok)
			continue
		}
		if ok {
			b, _ := json.Marshal(got)
			if string(b) != tt.want {
				t.Errorf("%q: %s, want %s", tt.ptr, b, tt.want)
			}
		}
	}
}

// FuzzLookup: a lookup in any document with any pointer ends, without a
// panic; what it finds is inside the document.
func FuzzLookup(f *testing.F) {
	f.Add(`{"a":[1,{"b":2}]}`, "/a/1/b")
	f.Add(`[[[]]]`, "/0/0/~1")
	f.Fuzz(func(t *testing.T, doc, ptr string) {
		var v any
		if json.Unmarshal([]byte(doc), &v) != nil {
			return
		}
		if got, ok := Lookup(v, ptr); ok && ptr == "" && got == nil && v != nil {
			t.Fatalf("the empty pointer did not find the document")
		}
	})
}
