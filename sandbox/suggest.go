package sandbox

import (
	"fmt"
	"slices"
	"strings"

	"github.com/codemode/codemode/internal/editdist"
)

// maxSuggestions bounds the tool names an unknown-tool message proposes.
const maxSuggestions = 3

// maxToolNameBytes is the longest a tool name can be: 128 characters
// (registry's rule) of at most 4 bytes. A longer name is meant as no tool:
// it gets no suggestions, whose cost grows with its length.
const maxToolNameBytes = 4 * 128

// unknownToolMessage says that name is not a tool, proposes the nearest tool names and says
// how to list them all.
func (r *run) unknownToolMessage(name string) string {
	msg := fmt.Sprintf("unknown tool %q", name)
	if len(name) > maxToolNameBytes {
		// No tool has such a name: say so without quoting all of it.
		msg = fmt.Sprintf("unknown tool %q… (%d bytes; tool names have at most 128 characters)", truncateUTF8(name, 64), len(name))
	}
	if near := nearestNames(name, r.host.Names(), maxSuggestions); len(near) > 0 {
		msg += ": did you mean " + orList(near) + "?"
	} else {
		msg += "."
	}
	return msg + ` tools.$search("what it should do") finds tools by what they do.`
}

func orList(names []string) string {
	quoted := make([]string, len(names))
	for i, n := range names {
		quoted[i] = "tools." + n
		if !isIdentifier(n) {
			quoted[i] = fmt.Sprintf("tools[%q]", n)
		}
	}
	if len(quoted) == 1 {
		return quoted[0]
	}
	return strings.Join(quoted[:len(quoted)-1], ", ") + " or " + quoted[len(quoted)-1]
}

// nearestNames returns up to n names close to name, closest first: those within a small edit
// distance (case-insensitively, at most a third of the name's length and at least 2), or, when
// there are none, those sharing the most words with it (math_multiply → math_add, list_files →
// files_list).
func nearestNames(name string, names []string, n int) []string {
	if len(name) > maxToolNameBytes {
		return nil
	}
	type cand struct {
		name  string
		score int
	}
	lower := strings.ToLower(name)
	limit := max(2, len([]rune(name))/3)
	words := splitWords(lower)
	var close, sharing []cand
	best := 0
	for _, c := range names {
		if len(c) > 4*len(name)+16 {
			continue // far too long to be meant
		}
		lc := strings.ToLower(c)
		if d := editdist.Distance(lower, lc, limit); d <= limit {
			close = append(close, cand{c, d})
			continue
		}
		shared := 0
		for _, w := range splitWords(lc) {
			if len(w) > 2 && slices.Contains(words, w) {
				shared++
			}
		}
		if shared > 0 && shared >= best {
			if shared > best {
				best, sharing = shared, sharing[:0]
			}
			sharing = append(sharing, cand{c, 0})
		}
	}
	cands := close
	if len(cands) == 0 {
		cands = sharing
	}
	slices.SortStableFunc(cands, func(a, b cand) int {
		if a.score != b.score {
			return a.score - b.score
		}
		return strings.Compare(a.name, b.name)
	})
	var out []string
	for i := 0; i < len(cands) && i < n; i++ {
		out = append(out, cands[i].name)
	}
	return out
}

func splitWords(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == '_' || r == '-' || r == '.' || r == '/' || r == ' ' })
}
