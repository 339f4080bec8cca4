package sdkgen

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestSignature(t *testing.T) {
	for _, tc := range []struct {
		tool Tool
		want string
	}{
		{Tool{Name: "math_add",
			Parameters: raw(`{"type":"object","properties":{"a":{"type":"number","description":"The first addend."},"b":{"type":"number"}},"required":["a","b"],"additionalProperties":false}`),
			Output:     raw(`{"type":"object","properties":{"sum":{"type":"number","description":"a + b"}},"required":["sum"],"additionalProperties":false}`)},
			`math_add(args: { a: number; b: number }): Promise<{ sum: number }>`},
		{Tool{Name: "files_list", Parameters: raw(`{"type":"object","properties":{"prefix":{"type":"string"}}}`)},
			`files_list(args?: { prefix?: string; [key: string]: unknown }): Promise<unknown>`},
		{Tool{Name: "notes.search", Parameters: raw(`{"type":"object","properties":{"q":{"type":"string","description":"*/ x"},"nested":{"type":"object","properties":{"deep":{"enum":["a\nb","*/"]}},"additionalProperties":false}},"required":["q"],"additionalProperties":false}`)},
			`"notes.search"(args: { nested?: { deep?: "a\nb" | "*/" }; q: string }): Promise<unknown>`},
		{Tool{Name: "no_params"}, `no_params(args?: { [key: string]: unknown }): Promise<unknown>`},
		{Tool{Name: "broken", Parameters: raw(`{"type":`)}, `broken(args: unknown): Promise<unknown>`},
	} {
		got := Signature(tc.tool)
		if got != tc.want {
			t.Errorf("Signature(%s)\n got %s\nwant %s", tc.tool.Name, got, tc.want)
		}
		assertSignature(t, tc.tool)
	}
}

func TestSignatureClipsLongTypes(t *testing.T) {
	props := make([]string, 60)
	for i := range props {
		props[i] = `"property_number_` + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + `_` + string(rune('a'+i/26)) + `":{"type":"string"}`
	}
	tool := Tool{Name: "wide", Parameters: raw(`{"type":"object","properties":{` + strings.Join(props, ",") + `},"additionalProperties":false}`)}
	got := Signature(tool)
	if n := utf8.RuneCountInString(got); n != maxSignatureRunes {
		t.Errorf("clipped signature has %d runes, want %d: %s", n, maxSignatureRunes, got)
	}
	if !strings.HasPrefix(got, "wide(args?: { property_number_a_a?: string; ") || !strings.HasSuffix(got, "…") {
		t.Errorf("clipped signature %q", got)
	}
	assertSignature(t, tool)
}

// assertSignature checks the invariants of Signature: one line, bounded, no JSDoc, and, unless
// clipped, exactly the member of the tool in the prompt's declarations without its JSDoc.
func assertSignature(t testing.TB, tool Tool) {
	t.Helper()
	sig := Signature(tool)
	if strings.ContainsAny(sig, "\n\r\u2028\u2029") {
		t.Fatalf("Signature has a line break: %q", sig)
	}
	if utf8.RuneCountInString(sig) > maxSignatureRunes {
		t.Fatalf("Signature longer than %d runes: %q", maxSignatureRunes, sig)
	}
	if !utf8.ValidString(sig) {
		t.Fatalf("Signature is not valid UTF-8: %q", sig)
	}
	if strings.HasSuffix(sig, "…") {
		return
	}
	if !strings.HasPrefix(sig, propertyKey(tool.Name)+"(args") || !strings.HasSuffix(sig, ">") {
		t.Fatalf("Signature %q does not have the shape name(args…): Promise<…>", sig)
	}
	if tool.Name != RunCodeName {
		assertDeclarations(t, []byte("declare const tools: { "+sig+" };\n"))
	}
}
