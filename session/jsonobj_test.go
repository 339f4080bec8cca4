package session

import "testing"

// skipStringByBytes is the plain reading of a JSON string: a backslash
// escapes the byte after it, and the first unescaped quote ends it.
func skipStringByBytes(data []byte, i int) (int, error) {
	for i++; i < len(data); i++ {
		switch data[i] {
		case '\\':
			i++
		case '"':
			return i + 1, nil
		}
	}
	return 0, errMalformed
}

// skipString, which jumps from quote to quote, ends every string where the
// byte-by-byte reading does, and fails where it fails.
func FuzzSkipString(f *testing.F) {
	for _, s := range []string{`"abc"`, `"a\"b" ,`, `"a\\"b"`, `"a\\\"b"x"`, `"\\\\"`, `"abc\`, `"abc\"`, `"`, `""`, `"\"\"\""`, `"x\\\\\\" "`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 || data[0] != '"' {
			return
		}
		got, gerr := skipString(data, 0)
		want, werr := skipStringByBytes(data, 0)
		if got != want || (gerr == nil) != (werr == nil) {
			t.Fatalf("skipString(%q) = %d, %v; the byte loop says %d, %v", data, got, gerr, want, werr)
		}
	})
}
