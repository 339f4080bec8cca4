package sdkgen

import (
	"strings"
	"testing"
)

// multiLine is a rendered type as tstype.go lays it out, with hostile text inside literals.
const multiLine = `{
    /** The first addend. */
    a: number;
    /** The key. @minLength 1 */
    key: string;
    /** The file path. */
    path: string;
    /** @integer */
    n: number;
    /** Pixels. @integer */
    width: number;
    nested: {
      /** The leaf of the tree. */
      leaf: "/** not a doc */" | "{\n};";
    };
    "quote\"d"?: string;
    [key: string]: unknown;
  }`

func TestInline(t *testing.T) {
	got := inline(multiLine)
	want := `{ /** The first addend. */ a: number; /** The key. @minLength 1 */ key: string; /** The file path. */ path: string; /** @integer */ n: number; /** Pixels. @integer */ width: number; nested: { /** The leaf of the tree. */ leaf: "/** not a doc */" | "{\n};" }; "quote\"d"?: string; [key: string]: unknown }`
	if got != want {
		t.Errorf("inline\n got %s\nwant %s", got, want)
	}
	if inline("string[]") != "string[]" {
		t.Errorf("inline changed a one-line type")
	}
}

func TestStripDocs(t *testing.T) {
	got := inline(stripDocs(multiLine))
	want := `{ a: number; key: string; path: string; n: number; width: number; nested: { leaf: "/** not a doc */" | "{\n};" }; "quote\"d"?: string; [key: string]: unknown }`
	if got != want {
		t.Errorf("stripDocs\n got %s\nwant %s", got, want)
	}
}

func TestDropDocTag(t *testing.T) {
	got := inline(dropDocTag(multiLine, "@integer"))
	for _, want := range []string{" n: number;", "/** Pixels. */ width", "/** The key. @minLength 1 */ key"} {
		if !strings.Contains(got, want) {
			t.Errorf("dropDocTag: %q missing in %s", want, got)
		}
	}
	if strings.Contains(got, "@integer") {
		t.Errorf("dropDocTag left the tag: %s", got)
	}
}

func TestDropRestatedDocs(t *testing.T) {
	got := inline(dropRestatedDocs(multiLine, "files_read"))
	for _, want := range []string{
		"/** The first addend. */ a: number;", // informative: kept
		"/** @minLength 1 */ key: string;",    // "The key." restates key; the tag stays
		"; path: string;",                     // "The file path." restates path of files_read
		"/** The leaf of the tree. */ leaf:",  // nested members too
		"/** Pixels. @integer */ width",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("dropRestatedDocs: %q missing in %s", want, got)
		}
	}
	// Without the tool's name, "file" is information.
	if got := dropRestatedDocs(multiLine, "kv_get"); !strings.Contains(got, "/** The file path. */") {
		t.Errorf("dropRestatedDocs dropped an informative description:\n%s", got)
	}
}

func TestRestatesName(t *testing.T) {
	for _, tc := range []struct {
		description, names string
		want               bool
	}{
		{"The key.", "key", true},
		{"Key", "key", true},
		{"The file path.", "path files_write", true},
		{"The user IDs.", "user_ids", true},
		{"The userId", "userId", true},
		{"The paths", "path", true},
		{"The file path.", "path", false},
		{"The first addend.", "a math_add", false},
		{"a + b", "sum", false},
		{"Any JSON value.", "value", false},
		{"The.", "key", false}, // nothing but fillers says nothing either way: kept
		{"", "key", false},
		{"Number of lines.", "lines", false},
	} {
		if got := restatesName(tc.description, tc.names); got != tc.want {
			t.Errorf("restatesName(%q, %q) = %v, want %v", tc.description, tc.names, got, tc.want)
		}
	}
}

func TestMemberKey(t *testing.T) {
	for line, want := range map[string]string{
		`a: number;`:        "a",
		`prefix?: string;`:  "prefix",
		`"new": string;`:    "new",
		`"a\"b\\c"?: x;`:    `a"b\c`,
		`"line\nbreak": x;`: "line\nbreak",
		`"\u2028": x;`:      "\u2028",
		`[key: string]: x;`: "",
		`}): Promise<{`:     "",
		`"unterminated: x;`: "",
	} {
		got, ok := memberKey(line)
		if got != want || ok != (want != "") {
			t.Errorf("memberKey(%q) = %q, %v; want %q", line, got, ok, want)
		}
	}
}
