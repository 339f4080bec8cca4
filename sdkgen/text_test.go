package sdkgen

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestQuoteJS(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", `""`},
		{"plain", `"plain"`},
		{`say "hi"`, `"say \"hi\""`},
		{`a\b`, `"a\\b"`},
		{"a\nb\rc\td", `"a\nb\rc\td"`},
		{"nul\x00 bell\a del\x7f", `"nul\u0000 bell\u0007 del\u007f"`},
		{"ls\u2028ps\u2029", `"ls\u2028ps\u2029"`},
		{"ünïcödé 🙂", `"ünïcödé 🙂"`},
		{"bad\xff\xfe", `"bad\ufffd\ufffd"`},
		{"</script>", `"</script>"`},
	}
	for _, tc := range tests {
		if got := quoteJS(tc.in); got != tc.want {
			t.Errorf("quoteJS(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

// TestQuoteJSRoundTrips checks the literal means the original string: quoteJS only uses escapes
// JSON shares with JS, so a JSON decoder can read it back.
func TestQuoteJSRoundTrips(t *testing.T) {
	for _, s := range []string{"", "a\"b\\c", "\x00\x1f\x7f", "\u2028\u2029", "日本語", "\t\n\r\b\f"} {
		assertQuoteRoundTrips(t, s)
	}
}

func assertQuoteRoundTrips(t testing.TB, s string) {
	t.Helper()
	var back string
	if err := json.Unmarshal([]byte(quoteJS(s)), &back); err != nil {
		t.Fatalf("quoteJS(%q) = %s is not a valid literal: %v", s, quoteJS(s), err)
	}
	if utf8.ValidString(s) && back != s {
		t.Fatalf("quoteJS(%q) reads back as %q", s, back)
	}
}

func TestPropertyKey(t *testing.T) {
	tests := []struct{ in, want string }{
		{"math_add", "math_add"},
		{"$x", "$x"},
		{"_", "_"},
		{"camelCase9", "camelCase9"},
		{"type", "type"},
		{"get", "get"},
		{"", `""`},
		{"9lives", `"9lives"`},
		{"42", `"42"`},
		{"my-mcp.tool", `"my-mcp.tool"`},
		{"with space", `"with space"`},
		{"__proto__", `"__proto__"`},
		{"constructor", `"constructor"`},
		{"new", `"new"`},
		{"delete", `"delete"`},
		{"class", `"class"`},
		{"null", `"null"`},
		{"ünï", `"ünï"`},
	}
	for _, tc := range tests {
		if got := propertyKey(tc.in); got != tc.want {
			t.Errorf("propertyKey(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

func TestDocSummary(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"empty", "", ""},
		{"blank", " \n\t\r ", ""},
		{"one sentence", "Adds two numbers.", "Adds two numbers."},
		{"first sentence", "Adds two numbers. Returns the sum.", "Adds two numbers."},
		{"question and exclamation", "Why? Because!", "Why?"},
		{"no sentence end", "adds numbers", "adds numbers"},
		{"dotted words stay", "Reads a.b.c files. Then more.", "Reads a.b.c files."},
		{"wrapped lines", "Reads a file from\nthe workspace. More.", "Reads a file from the workspace."},
		{"first paragraph", "Summary line\n\nDetails. More.", "Summary line"},
		{"leading blank lines", "\n\n  Summary.\n\nDetails.", "Summary."},
		{"collapsed whitespace", "a \t\v\f  b\u00a0\u2028c", "a b c"},
		{"controls", "a\x00b\x1bc", "a b c"},
		{"comment end", "ends */ here", `ends *\/ here`},
		{"comment ends in a row", "**/*/", `**\/*\/`},
		{"invalid UTF-8", "a\xffb", "a\ufffdb"},
		{"truncated at a word", strings.Repeat("word ", 50), strings.TrimSpace(strings.Repeat("word ", 31)) + "…"},
		{"truncated mid-word", strings.Repeat("x", 300), strings.Repeat("x", maxDocRunes-1) + "…"},
		{"counted in runes", strings.Repeat("é", maxDocRunes), strings.Repeat("é", maxDocRunes)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := docSummary(tc.in)
			if got != tc.want {
				t.Errorf("docSummary(%q)\n got: %q\nwant: %q", tc.in, got, tc.want)
			}
			if strings.Contains(got, "*/") || strings.ContainsAny(got, "\n\r\u2028\u2029") {
				t.Errorf("summary %q can end the comment or the line", got)
			}
			if n := utf8.RuneCountInString(strings.ReplaceAll(got, `*\/`, "*/")); n > maxDocRunes {
				t.Errorf("summary has %d runes, limit %d", n, maxDocRunes)
			}
		})
	}
}
