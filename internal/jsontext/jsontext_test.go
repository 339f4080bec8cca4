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

// AppendString writes what encoding/json writes with HTML escaping off.
func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "plain", "q\"b\\s", "\b\f\n\r\t\x00\x1f\x7f", "<&>", "\u2028\u2029", "\xff\xfe", "é€😀", "a\xc3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := string(AppendString([]byte("x"), s)), "x"+encoded(t, s); got != want {
			t.Fatalf("AppendString(%q) = %s, want %s", s, got, want)
		}
	})
}
