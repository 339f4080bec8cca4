package bridge

import "testing"

// A resumed call matches its logged one when both are the same JSON value,
// whatever the spacing and the order of members, and only then.
func TestSameJSON(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		same bool
	}{
		{`{"a":1,"b":[1,2]}`, `{"a":1,"b":[1,2]}`, true},
		{`{"a":1,"b":[1,2]}`, `{ "b": [1, 2], "a": 1 }`, true},
		{`{"n":9007199254740993}`, `{"n":9007199254740992}`, false},
		{`{"a":1}`, `{"a":2}`, false},
		{`[1,2]`, `[2,1]`, false},
		{`{"a":1}`, `{"a":1,"b":null}`, false},
		{`{"a":`, `{"a":`, true}, // byte for byte: the same call, even unparsed
		{`{"a":`, `{"a": 1}`, false},
	} {
		if got := sameJSON([]byte(tt.a), []byte(tt.b)); got != tt.same {
			t.Errorf("sameJSON(%s, %s) = %v, want %v", tt.a, tt.b, got, tt.same)
		}
	}
}
