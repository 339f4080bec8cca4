// Package tokens counts the tokens of the SDK texts sdkgen renders, with a
// real BPE tokenizer (OpenAI's o200k_base, embedded: no network), and
// splits them per tool, for tool authors who need to know what each tool
// costs the model that reads it.
package tokens

import (
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/tiktoken-go/tokenizer/codec"
)

// Encoding names the tokenizer every count uses.
const Encoding = "o200k_base"

// o200k is built once: its vocabulary is a large map built on first use.
var o200k = sync.OnceValue(codec.NewO200kBase)

// Count is the number of o200k_base tokens of text; invalid UTF-8 is
// counted as it is, not refused.
func Count(text string) int {
	n, err := o200k().Count(text)
	if err != nil {
		// Only the strict error mode fails, and it is not used; count
		// bytes as a last resort rather than report zero.
		return len(text)
	}
	return n
}

// Split is one text's token count and its share per tool.
type Split struct {
	// Total is the count of the whole text.
	Total int `json:"total"`
	// Tools is the count of each tool's part: its member of
	// `declare const tools` with the doc comment above it.
	Tools map[string]int `json:"tools"`
	// Shared is the rest: Total minus the tools' parts (never negative;
	// a part counted alone can take a token more than inside the text).
	Shared int `json:"shared"`
}

// memberRe matches the first line of a tool's member of `declare const
// tools`: "  name(args…" in the declarations (their doc comment on the line
// above), or "/** … */ name(args…" on one line in the prompt. Names that
// are not identifiers are quoted.
var memberRe = regexp.MustCompile(`^(?: {2})?(?:/\*\*(?:[^*]|\*[^/])*\*/ )?("(?:[^"\\]|\\.)*"|[A-Za-z_$][\w$]*)\??\(`)

var (
	docLineRe   = regexp.MustCompile(`^ {2}/\*\*.*\*/$`)
	memberEndRe = regexp.MustCompile(`^ {2}\S.*;$`)
)

// PerTool counts text (the TypeScript declarations, or the prompt, which
// embeds them) and attributes its lines to tools as sdkgen lays them out:
// a member runs from its first line (after its doc comment) to the line
// "  …;" that closes it at the member's indentation.
func PerTool(text string) Split {
	parts := map[string]*strings.Builder{}
	part := func(name string) *strings.Builder {
		b := parts[name]
		if b == nil {
			b = &strings.Builder{}
			parts[name] = b
		}
		return b
	}
	lines := strings.SplitAfter(text, "\n")
	inSection := false // inside `declare const tools`
	entry := ""        // the tool whose multi-line member is open
	doc := ""          // a doc comment line waiting for its member
	for _, line := range lines {
		bare := strings.TrimSuffix(line, "\n")
		if !inSection {
			if strings.HasPrefix(bare, "declare const tools") && !strings.HasSuffix(bare, "};") {
				inSection = true
			}
			continue
		}
		if strings.HasPrefix(bare, "}") {
			inSection, entry, doc = false, "", ""
			continue
		}
		if entry != "" {
			part(entry).WriteString(line)
			if memberEndRe.MatchString(bare) {
				entry = ""
			}
			continue
		}
		if docLineRe.MatchString(bare) {
			doc += line
			continue
		}
		m := memberRe.FindStringSubmatch(bare)
		if m == nil {
			doc = ""
			continue
		}
		name := m[1]
		if name[0] == '"' {
			if s, err := strconv.Unquote(name); err == nil {
				name = s
			}
		}
		if name[0] == '$' {
			doc = "" // $search and $describe: the SDK's own members, shared by every tool
			continue
		}
		b := part(name)
		b.WriteString(doc)
		b.WriteString(line)
		doc = ""
		if !strings.HasSuffix(bare, ";") {
			entry = name
		}
	}
	s := Split{Total: Count(text), Tools: make(map[string]int, len(parts))}
	sum := 0
	for name, b := range parts {
		n := Count(b.String())
		s.Tools[name] = n
		sum += n
	}
	s.Shared = max(0, s.Total-sum)
	return s
}
