package sdkgen

import (
	"bytes"
	"cmp"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/codemode/codemode/sdkgen/tokens"
)

// DefaultPromptBudget is the o200k token budget of the prompt when PromptOptions.Budget is
// zero: the 11 demo tools take about 1,000 tokens whole, and a catalog of any size fits with
// room for a handful of whole declarations. Two thousand tokens is 1.5% of a 128k window, at
// the low end of the 1–5% past which MCP's documentation advises progressive discovery.
const DefaultPromptBudget = 2000

// maxBytesPerToken bounds how many bytes of rendered SDK text one o200k token stands for in
// practice (identifiers, punctuation and prose run at 3–5): text longer than the budget times
// this cannot fit, so it is never rendered whole just to be counted.
const maxBytesPerToken = 16

// A catalog's parts are bounded so that no catalog, however large, costs more than the budget
// to render and count.
const (
	maxCatalogCandidates = 96   // tools tried for whole declarations
	maxCatalogLineBytes  = 1200 // a whole declaration longer than this is left to $describe
	catalogKeywords      = 5    // keywords on a group's line at the most detailed level
	minDeclarationTokens = 40   // declarations stop when less than this is left
	sharedInCatalog      = 500  // tools up to which a catalog's lines name shared types
)

// The discovery members of tools, as a catalog prompt and the TypeScript and JavaScript texts
// declare them. searchDoc states package catalog's bounds on limit (DefaultLimit, MaxLimit),
// which this package cannot import; catalog's TestSDKStatesTheSearchBounds pins them.
const (
	searchDecl = "$search(query: string, options?: { limit?: number; group?: string }): " +
		"Promise<{ total: number; matched: number; tools: { name: string; summary: string; signature: string; also?: string[] }[] }>"
	describeDecl = "$describe(names: string | string[]): Promise<string>"
	searchDoc    = "Finds tools: ranked by how well name, description and parameters match the query (plain words); `total` counts the whole catalog; limit 1–50, default 10; `group` keeps a name prefix; `also` names the same operation under other prefixes."
	describeDoc  = "The full TypeScript declarations, with descriptions, of the named tools."
)

// wholeWithin renders the whole prompt and reports whether it fits budget tokens. Text that
// cannot fit (longer than budget × maxBytesPerToken bytes) is not rendered to the end.
func wholeWithin(s *Set, contract []byte, budget int) ([]byte, bool) {
	limit := budget * maxBytesPerToken
	least := len(contract)
	for _, e := range s.entries() {
		least += len(e.name) + len(docSummary(e.description)) + len("(args): Promise<unknown>;\n")
		if least > limit {
			return nil, false // a set this large cannot fit, however much shared types save
		}
	}
	var decls bytes.Buffer
	st := s.shared()
	st.writeDeclarations(&decls, nil, layoutInline)
	decls.WriteString("declare const tools: {")
	entries := s.entries()
	if len(entries) > 0 {
		decls.WriteByte('\n')
	}
	for _, e := range entries {
		writeMember(&decls, e, layoutInline, docSummary(e.description), st)
		if len(contract)+decls.Len() > limit {
			return nil, false
		}
	}
	decls.WriteString("};\n")
	text := appendFenced(bytes.Clone(contract), decls.Bytes(), "ts")
	return text, tokens.Count(string(text)) <= budget
}

// catalogPrompt is the prompt of a set too large to show whole: the contract, how to find
// tools, the groups of tools with their counts (as detailed as the budget allows), and a
// declarations block: whole declarations of the pinned tools and then of a few from each
// group, while the budget lasts, and the discovery members $search and $describe.
func catalogPrompt(s *Set, contract []byte, budget int, pinned []string) []byte {
	entries := s.entries()
	var b bytes.Buffer
	b.Write(contract)
	b.WriteString(formatCount(len(entries)))
	b.WriteString(catalogMarker + ": find the ones a task needs from a program with `tools.$search` " +
		"(say in plain words what the tool should do; `total` counts the whole catalog; `group` keeps one of the name prefixes below), " +
		"read them whole with `tools.$describe`, and call them like any other. Print what you find and use it in the next run, " +
		"or at once when a signature says enough.\n\n" +
		"```js\n" +
		"const { tools: found } = await tools.$search(\"list open pull requests\", { limit: 5 })\n" +
		"console.log(found.map(t => t.signature).join(\"\\n\"), await tools.$describe(found[0].name))\n" +
		"```\n\n")
	discovery := "  /** " + searchDoc + " */ " + searchDecl + ";\n" +
		"  /** " + describeDoc + " */ " + describeDecl + ";\n"
	used := tokens.Count(b.String()) + tokens.Count("```ts\ndeclare const tools: {\n"+discovery+"};\n```\n")

	groups := groupsOf(entries)
	section := groupSection(entries, groups, budget-used-minDeclarationTokens)
	b.WriteString(section)
	used += tokens.Count(section)

	// Shared types are found over the whole set; past sharedInCatalog tools the prompt does not
	// wait for that (it shows few lines) and its lines write their types out.
	var st *sharedTypes
	if len(entries) <= sharedInCatalog {
		st = s.shared()
	}
	lines := declarationLines(entries, groups, pinned, budget-used, st)
	for {
		var block bytes.Buffer
		need := map[*declType]bool{}
		for _, l := range lines {
			closure(need, l.uses)
		}
		st.writeDeclarations(&block, need, layoutInline)
		block.WriteString("declare const tools: {\n")
		for _, l := range lines {
			block.WriteString(l.text)
		}
		block.WriteString(discovery)
		block.WriteString("};\n")
		text := appendFenced(bytes.Clone(b.Bytes()), block.Bytes(), "ts")
		if len(lines) == 0 || tokens.Count(string(text)) <= budget {
			return text
		}
		lines = lines[:len(lines)-1] // the parts' counts can undercount the whole's
	}
}

// appendFenced appends body in a fenced block of language lang, the fence longer than any
// backtick run inside.
func appendFenced(b, body []byte, lang string) []byte {
	fence := bytes.Repeat([]byte("`"), max(3, longestBacktickRun(body)+1))
	b = append(b, fence...)
	b = append(b, lang...)
	b = append(b, '\n')
	b = append(b, body...)
	b = append(b, fence...)
	return append(b, '\n')
}

// declLine is one tool's line in a catalog and the shared types it refers to directly.
type declLine struct {
	text string
	uses []*declType
}

// declarationLines picks whole declarations for a catalog within budget tokens: the pinned
// tools in the order given, then, group by group (largest first) and round after round, each
// group's shortest definition not yet shown. A definition whose line is longer than
// maxCatalogLineBytes is never shown whole. A line's cost includes the declarations of the
// shared types it needs that no earlier line did.
func declarationLines(entries []entry, groups []group, pinned []string, budget int, st *sharedTypes) (lines []declLine) {
	if budget < minDeclarationTokens {
		return nil
	}
	var order []int
	seen := map[int]bool{}
	for _, name := range pinned {
		if i, ok := slices.BinarySearchFunc(entries, name, func(e entry, n string) int { return cmp.Compare(e.name, n) }); ok && !seen[i] {
			seen[i] = true
			order = append(order, i)
		}
	}
	queues := make([][]int, len(groups))
	for gi, g := range groups {
		q := slices.Clone(g.tools)
		slices.SortStableFunc(q, func(a, b int) int { return cmp.Compare(entries[a].size(), entries[b].size()) })
		queues[gi] = q
	}
	for len(order) < maxCatalogCandidates {
		progressed := false
		for gi := range queues {
			for len(queues[gi]) > 0 {
				i := queues[gi][0]
				queues[gi] = queues[gi][1:]
				if !seen[i] {
					seen[i] = true
					order = append(order, i)
					progressed = true
					break
				}
			}
		}
		if !progressed {
			break
		}
	}
	if len(order) > maxCatalogCandidates {
		order = order[:maxCatalogCandidates]
	}
	have := map[*declType]bool{} // shared types the lines so far declare
	for _, i := range order {
		if budget < minDeclarationTokens/2 {
			break
		}
		e := entries[i]
		if e.size() > 64*maxCatalogLineBytes {
			continue // its schemas alone are far too long to show whole
		}
		var line bytes.Buffer
		uses := writeMember(&line, e, layoutInline, docSummary(e.description), st)
		if line.Len() > maxCatalogLineBytes {
			continue
		}
		n := tokens.Count(line.String())
		added := map[*declType]bool{}
		closure(added, uses)
		for t := range added {
			if have[t] {
				delete(added, t)
			}
		}
		var decls strings.Builder
		st.writeDeclarations(&decls, added, layoutInline)
		if decls.Len() > maxCatalogLineBytes {
			continue
		}
		n += tokens.Count(decls.String())
		if n > budget {
			continue
		}
		budget -= n
		for t := range added {
			have[t] = true
		}
		lines = append(lines, declLine{line.String(), uses})
	}
	return lines
}

// size estimates how long an entry's declaration is, from what it is rendered from.
func (e entry) size() int {
	return len(e.name) + min(len(e.description), maxDocRunes) + len(e.params.canon) + len(e.output.canon)
}

// writeMember writes one member of `declare const tools` with doc as its JSDoc.
// With st, the shared types stand in for their occurrences; used lists those it refers to.
func writeMember(b *bytes.Buffer, e entry, lay layout, doc string, st *sharedTypes) (used []*declType) {
	if lay == layoutLines {
		b.WriteString("  ")
	}
	if doc != "" {
		b.WriteString("/** ")
		b.WriteString(doc)
		if lay == layoutLines {
			b.WriteString(" */\n  ")
		} else {
			b.WriteString(" */ ")
		}
	}
	sig, used := signature(e, lay, st)
	b.WriteString(sig)
	b.WriteString(";\n")
	return used
}

// A group is the tools sharing a name prefix: the part before the first "." (an upstream
// server's tools, "github.pulls_list"), then the first word of the rest, up to "_" or "-"
// ("github.pulls"). A name without "." has one level ("pulls_list" is in "pulls").
type group struct {
	prefix string
	tools  []int   // indices into the set's entries, in name order
	subs   []group // by the next word; nil when the group has one level
}

// Groups lists the set's groups as "$search({group})" takes them, largest first: each
// top-level name prefix, and under a prefix with "." its second-level prefixes.
func Groups(s *Set) []Group {
	entries := s.entries()
	var out []Group
	for _, g := range groupsOf(entries) {
		pg := Group{Prefix: g.prefix, Tools: len(g.tools)}
		for _, sub := range g.subs {
			pg.Groups = append(pg.Groups, Group{Prefix: sub.prefix, Tools: len(sub.tools)})
		}
		out = append(out, pg)
	}
	return out
}

// Group is a name prefix and how many tools have it.
type Group struct {
	Prefix string  `json:"prefix"`
	Tools  int     `json:"tools"`
	Groups []Group `json:"groups,omitempty"`
}

// InGroup reports whether a tool name has the group prefix: the prefix followed by the end of
// the name or a separator ("." "_" "-").
func InGroup(name, prefix string) bool {
	if !strings.HasPrefix(name, prefix) {
		return false
	}
	return len(name) == len(prefix) || isGroupSep(name[len(prefix)])
}

func isGroupSep(c byte) bool { return c == '.' || c == '_' || c == '-' }

// groupsOf groups entries (sorted by name) by prefix, largest group first (then by prefix).
func groupsOf(entries []entry) []group {
	top := map[string]*group{}
	var order []string
	for i, e := range entries {
		p, rest := topPrefix(e.name)
		g := top[p]
		if g == nil {
			g = &group{prefix: p}
			top[p] = g
			order = append(order, p)
		}
		g.tools = append(g.tools, i)
		if rest != "" {
			sub := p + "." + firstWord(rest)
			if n := len(g.subs); n == 0 || g.subs[n-1].prefix != sub {
				g.subs = append(g.subs, group{prefix: sub})
			}
			g.subs[len(g.subs)-1].tools = append(g.subs[len(g.subs)-1].tools, i)
		}
	}
	out := make([]group, 0, len(order))
	for _, p := range order {
		g := *top[p]
		if len(g.subs) < 2 || len(g.tools) <= 12 {
			g.subs = nil // one sub-group, or few tools: one level says as much
		} else {
			slices.SortStableFunc(g.subs, func(a, b group) int { return cmp.Compare(len(b.tools), len(a.tools)) })
		}
		out = append(out, g)
	}
	slices.SortStableFunc(out, func(a, b group) int { return cmp.Compare(len(b.tools), len(a.tools)) })
	return out
}

// topPrefix splits a name into its top-level group and, when the name has a ".", the rest
// after it. A name without separators is its own group.
func topPrefix(name string) (prefix, rest string) {
	if i := strings.IndexByte(name, '.'); i > 0 && i < len(name)-1 {
		return name[:i], name[i+1:]
	}
	return firstWord(name), ""
}

// firstWord is s up to its first "_", "-" or "." (all of s when it has none, or starts with one).
func firstWord(s string) string {
	if i := strings.IndexAny(s, "_-."); i > 0 {
		return s[:i]
	}
	return s
}

// groupSection renders the groups within budget tokens, at the most detailed level that fits:
// a line per sub-group with keywords, then fewer keywords, then a line per group listing its
// sub-groups, then group counts only; past that the largest groups and a count of the rest.
func groupSection(entries []entry, groups []group, budget int) string {
	kw := newKeywords(entries, groups)
	for _, level := range []int{0, 1, 2, 3} {
		text := renderGroups(entries, groups, kw, level, len(groups))
		if tokens.Count(text) <= budget {
			return text
		}
	}
	// Even the counts do not fit: as many groups as do, largest first.
	lo, hi := 0, len(groups)
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if tokens.Count(renderGroups(entries, groups, kw, 3, mid)) <= budget {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return renderGroups(entries, groups, kw, 3, lo)
}

// renderGroups renders the first n groups at a level of detail (0: sub-groups with
// catalogKeywords keywords each; 1: with two; 2: a group per line with its sub-groups'
// counts; 3: a group per line, counts only).
func renderGroups(entries []entry, groups []group, kw *keywords, level, n int) string {
	var b strings.Builder
	b.WriteString("Groups (name prefix, tools")
	if level < 3 {
		b.WriteString(": what they are about")
	}
	b.WriteString("):\n")
	line := func(g group, words int) {
		b.WriteString("- ")
		b.WriteString(g.prefix)
		b.WriteString(" (")
		b.WriteString(strconv.Itoa(len(g.tools)))
		b.WriteString(")")
		if words > 0 {
			if few := len(g.tools) <= 3; few {
				b.WriteString(": ")
				for i, t := range g.tools {
					if i > 0 {
						b.WriteString(", ")
					}
					b.WriteString(entries[t].name)
				}
			} else if ws := kw.of(g, words); len(ws) > 0 {
				b.WriteString(": ")
				b.WriteString(strings.Join(ws, ", "))
			}
		}
		b.WriteByte('\n')
	}
	for _, g := range groups[:n] {
		switch {
		case level <= 1 && len(g.subs) > 0:
			line(g, 0)
			for _, sub := range g.subs {
				b.WriteString("  ")
				line(sub, [...]int{catalogKeywords, 2}[level])
			}
		case level <= 1:
			line(g, [...]int{catalogKeywords, 2}[level])
		case level == 2 && len(g.subs) > 0:
			b.WriteString("- ")
			b.WriteString(g.prefix)
			b.WriteString(" (")
			b.WriteString(strconv.Itoa(len(g.tools)))
			b.WriteString("): ")
			for i, sub := range g.subs {
				if i > 0 {
					b.WriteString(", ")
				}
				b.WriteString(strings.TrimPrefix(sub.prefix, g.prefix+"."))
				b.WriteString(" ")
				b.WriteString(strconv.Itoa(len(sub.tools)))
			}
			b.WriteByte('\n')
		case level == 2:
			line(g, 2)
		default:
			line(g, 0)
		}
	}
	if rest := len(groups) - n; rest > 0 {
		tools := 0
		for _, g := range groups[n:] {
			tools += len(g.tools)
		}
		b.WriteString("- … ")
		b.WriteString(formatCount(rest))
		b.WriteString(" more groups of ")
		b.WriteString(formatCount(tools))
		b.WriteString(" tools (`$search` finds them)\n")
	}
	b.WriteByte('\n')
	return b.String()
}

// keywords picks the words that tell a group apart: frequent in its tools' names and
// summaries, rare in the rest of the set (tf-idf over tools).
type keywords struct {
	entries []entry
	words   [][]string     // per entry: its distinct words
	df      map[string]int // in how many tools of the set each word occurs
}

func newKeywords(entries []entry, groups []group) *keywords {
	k := &keywords{entries: entries, words: make([][]string, len(entries)), df: map[string]int{}}
	for i, e := range entries {
		seen := map[string]bool{}
		for _, w := range words(e.name + " " + docSummary(e.description)) {
			if len(w) < 3 || stopWords[w] || isNumber(w) || seen[w] {
				continue
			}
			seen[w] = true
			k.words[i] = append(k.words[i], w)
			k.df[w]++
		}
	}
	return k
}

// of returns up to n keywords of group g, best first (ties by word), leaving out the words
// of the group's own prefix.
func (k *keywords) of(g group, n int) []string {
	own := map[string]bool{}
	for _, w := range words(g.prefix) {
		own[w] = true
	}
	tf := map[string]int{}
	for _, t := range g.tools {
		for _, w := range k.words[t] {
			if !own[w] {
				tf[w]++
			}
		}
	}
	type scored struct {
		w string
		s float64
	}
	var list []scored
	total := float64(len(k.entries))
	for w, c := range tf {
		if c < 2 && len(g.tools) > 1 {
			continue
		}
		list = append(list, scored{w, float64(c) / float64(len(g.tools)) * math.Log(1+total/float64(k.df[w]))})
	}
	slices.SortFunc(list, func(a, b scored) int {
		return cmp.Or(cmp.Compare(b.s, a.s), cmp.Compare(a.w, b.w))
	})
	out := make([]string, 0, n)
	for _, s := range list[:min(n, len(list))] {
		out = append(out, s.w)
	}
	return out
}

// stopWords are left out of group keywords: function words and the verbs every API has.
var stopWords = map[string]bool{
	"the": true, "and": true, "for": true, "with": true, "from": true, "that": true, "this": true,
	"are": true, "can": true, "you": true, "your": true, "its": true, "into": true, "all": true,
	"get": true, "list": true, "set": true, "create": true, "delete": true, "update": true,
	"remove": true, "add": true, "use": true, "using": true, "which": true, "will": true,
	"one": true, "not": true, "have": true, "has": true, "given": true, "specified": true,
	"about": true, "also": true, "may": true, "more": true, "when": true, "only": true,
}

func isNumber(w string) bool {
	for i := 0; i < len(w); i++ {
		if w[i] < '0' || w[i] > '9' {
			return false
		}
	}
	return w != ""
}

// formatCount writes n with thousands separators ("2,500").
func formatCount(n int) string {
	s := strconv.Itoa(n)
	if n < 1000 {
		return s
	}
	var b strings.Builder
	pre := len(s) % 3
	if pre > 0 {
		b.WriteString(s[:pre])
	}
	for i := pre; i < len(s); i += 3 {
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(s[i : i+3])
	}
	return b.String()
}

// maxDescribeRunes bounds the description Describe shows of one tool.
const maxDescribeRunes = 2000

// Describe renders the declarations of the named tools as TypeScript lays them out (each
// property's JSDoc on its own line), each with its whole description (white space collapsed,
// at most 2,000 characters) instead of the one-sentence summary: `declare const tools: {…};`
// with the known names in the order given, duplicates once, after the declarations of the
// set's shared types those tools use (directly or through one another), by name. missing lists the names the set
// does not have, in the order given.
func Describe(s *Set, names []string) (text string, missing []string) {
	var members bytes.Buffer
	members.WriteString("declare const tools: {\n")
	seen := map[string]bool{}
	st := s.shared()
	need := map[*declType]bool{}
	for _, name := range names {
		if seen[name] {
			continue
		}
		seen[name] = true
		e, ok := s.find(name)
		if !ok {
			missing = append(missing, name)
			continue
		}
		closure(need, writeMember(&members, e, layoutLines, escapeCommentEnd(truncateRunes(collapseSpace(e.description), maxDescribeRunes)), st))
	}
	members.WriteString("};\n")
	var b strings.Builder
	st.writeDeclarations(&b, need, layoutLines)
	b.Write(members.Bytes())
	return b.String(), missing
}

// Summary is a tool's one-line summary as the SDK shows it (the first sentence of its
// description, at most 160 characters).
func Summary(description string) string { return docSummary(description) }
