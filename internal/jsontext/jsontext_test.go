package jsontext

import (
	"bytes"
	"encoding/json"
	"testing"
)

func encoded(t *testing.T, s string) string {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		t.Fatal(err)
	}
	return string(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
}

// AppendString writes what encoding/json writes with HTML escaping off,
// AppendStringHTML what json.Marshal writes.
func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "plain", "q\"b\\s", "\b\f\n\r\t\x00\x1f\x7f", "<&>", "\u2028\u2029", "\xff\xfe", "é€😀", "a\xc3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := string(AppendString([]byte("x"), s)), "x"+encoded(t, s); got != want {
			t.Fatalf("AppendString(%q) = %s, want %s", s, got, want)
		}
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := AppendStringHTML([]byte("x"), s); string(got) != "x"+string(want) {
			t.Fatalf("AppendStringHTML(%q) = %s, want x%s", s, got, want)
		}
	})
}

func TestSkipSpace(t *testing.T) {
	for _, tc := range []struct {
		text    string
		i, want int
	}{{"", 0, 0}, {" \t\r\n{", 0, 4}, {"a  b", 1, 3}, {"\v{", 0, 0}, {"  ", 0, 2}} {
		if got := SkipSpace(tc.text, tc.i); got != tc.want {
			t.Errorf("SkipSpace(%q, %d) = %d, want %d", tc.text, tc.i, got, tc.want)
		}
		if got := SkipSpace([]byte(tc.text), tc.i); got != tc.want {
			t.Errorf("SkipSpace([]byte(%q), %d) = %d, want %d", tc.text, tc.i, got, tc.want)
		}
	}
}

func TestMarshal(t *testing.T) {
	got, err := Marshal(map[string]any{"b": "<a&b>", "a": []int{1}})
	if err != nil || string(got) != `{"a":[1],"b":"<a&b>"}` {
		t.Fatalf("Marshal = %s, %v", got, err)
	}
	if _, err := Marshal(func() {}); err == nil {
		t.Fatal("a function marshalled")
	}
}
