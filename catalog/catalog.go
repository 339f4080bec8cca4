// Package catalog finds tools in a scope's tool set: the discovery behind `tools.$search` and
// `tools.$describe` inside programs and `GET /v1/tools/search`. An Index is built once per tool
// set (the bridge keeps it on the registry view, so it lives exactly as long as the set) and
// answers from that set alone: a program finds only tools its scope can call.
//
// Ranking is BM25F over five fields of each tool, weighted by how much a match there says:
// the name's words (split at "_", ".", "-" and camelCase), the summary (the description's first
// sentence), the rest of the description, the parameter names, and the parameter descriptions.
// Words are lower-cased and stemmed (Snowball English), function words dropped, and a query word
// also matches, at a lower weight, the few words API descriptions use for the same action or
// thing ("remove" for "delete", "repository" for "repo"), the longer index words it begins
// ("star": stargazers) and what a question word stands for ("who": user, "my": authenticated).
// Values in a query (paths, numbers, owner/repo, the name after "called") are not matched.
//
// Three things then scale a tool's sum, each general to any catalog of operations:
//   - coordination: the share of the query's words it matches, so that most of what was asked
//     beats one rare word;
//   - name cover: the share of its name's words the query matches, so that the operation the
//     query describes beats a longer-named neighbour that mentions the same words;
//   - intent: whether the action its name says (create, update, delete, get, list, search;
//     intent.go) is the one the query's verb or question word asks for: a bonus when it is,
//     half of it when both read or both write, a penalty when one reads and the other writes.
//
// A tool whose own description calls it deprecated keeps only part of its score: its successor
// is the one to call. The same operation under several prefixes takes one place in the results
// (Hit.Also).
package catalog

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"sync/atomic"
	"unicode/utf8"

	"github.com/codemode/codemode/sdkgen"
)

// Bounds of a search.
const (
	DefaultLimit  = 10   // results when Query.Limit is 0
	MaxLimit      = 50   // results at most; a larger Limit is lowered to it
	MaxQueryBytes = 1024 // query text beyond this is ignored
	maxQueryTerms = 32   // distinct words of a query that count
	MaxDescribe   = 50   // names one Describe takes
)

// Query is one search.
type Query struct {
	Text  string // plain words; empty lists the tools (of Group) in name order
	Limit int    // 0: DefaultLimit; above MaxLimit: MaxLimit; negative: an error
	Group string // a name prefix (sdkgen.Groups); empty: the whole set
}

// Result is what $search answers: Total is the size of the whole set (so a model knows what it
// has not seen), Matched how many tools (of Group) match at least one word of the query, and
// Tools the best of them, best first.
type Result struct {
	Total   int   `json:"total"`
	Matched int   `json:"matched"`
	Tools   []Hit `json:"tools"`
}

// Hit is one tool found: its name, its one-line summary (with a note when a policy denies it or
// asks before it runs) and its one-line signature (as Set.Signature renders it: the set's shared
// types by the names $describe declares them under). Also names the same operation under other
// prefixes (tools with the same name after their last "." and the same summary), which take no
// place of their own in the results.
type Hit struct {
	Name      string   `json:"name"`
	Summary   string   `json:"summary"`
	Signature string   `json:"signature"`
	Also      []string `json:"also,omitempty"`
}

// maxAlso bounds Hit.Also.
const maxAlso = 5

// ErrQuery marks a query the index refuses (a negative limit, an unknown group): a caller's
// mistake, reported as invalid arguments.
var ErrQuery = errors.New("invalid search")

// Index is a searchable tool set. It is immutable and safe for concurrent use.
type Index struct {
	set      *sdkgen.Set
	tools    []sdkgen.Tool // the set's tools' names and descriptions, in name order
	summary  []string
	postings map[string][]posting // by stemmed word, in tool order
	words    []string             // the keys of postings, sorted
	lengths  [][numFields]uint16  // per tool: its fields' lengths in words
	avgLen   [numFields]float64
	actions  []action                 // per tool: what it does (intent.go)
	retired  []bool                   // per tool: its description says it is deprecated
	lower    []string                 // per tool: its name, lower-cased
	sigs     []atomic.Pointer[string] // per tool: sdkgen.Signature, rendered at its first hit
	notes    func(name string) string
}

type field uint8

const (
	fName field = iota
	fSummary
	fDescription
	fParams
	fParamDocs
	numFields
)

// weights says how much a match in each field counts; lengthNorm how much a long field's
// matches are discounted (BM25's b).
var (
	weights    = [numFields]float64{fName: 3, fSummary: 3, fDescription: 0.15, fParams: 0.5, fParamDocs: 0.1}
	lengthNorm = [numFields]float64{fName: 0.5, fSummary: 0.5, fDescription: 0.75, fParams: 0.5, fParamDocs: 0.75}
)

const (
	k1               = 1.2
	synonymWeight    = 0.4 // a word found through a synonym counts this much of the word itself
	prefixWeight     = 0.5 // and one found as a longer word it begins ("star" in "stargazers")
	longPrefix       = 7   // a begun word this long shares its root with the longer one
	longPrefixWeight = 0.8 // and then counts this much
	questionWeight   = 0.8 // and what a question word stands for ("who": user, people, member)
	maxPrefixed      = 4   // longer words one query word stands for at the most
	coordination     = 1.0 // how strongly the share of the query's words matched scales a score
	deprecatedWeight = 0.6 // what a tool its description calls deprecated keeps of its score
	nameCover        = 0.5 // how much more a tool scores whose name the query's words cover whole
	intentWeight     = 0.3 // how much more a tool scores that does what the query asks (intent.go)
)

type posting struct {
	tool int32
	tf   [numFields]uint16
}

// New indexes set. notes, when not nil, gives a tool's policy note ("denied: …"), added to its
// summary in results; it is asked once per hit.
func New(set *sdkgen.Set, notes func(name string) string) *Index {
	tools := set.Tools()
	ix := &Index{set: set, tools: tools, summary: make([]string, len(tools)), postings: map[string][]posting{}, notes: notes, sigs: make([]atomic.Pointer[string], len(tools))}
	var total [numFields]int
	for i, t := range tools {
		ix.summary[i] = sdkgen.Summary(t.Description)
		var fields [numFields][]string
		fields[fName] = analyze(t.Name)
		fields[fSummary] = analyze(ix.summary[i])
		fields[fDescription] = analyze(strings.TrimPrefix(collapse(t.Description), ix.summary[i]))
		fields[fParams], fields[fParamDocs] = paramWords(t.Parameters)
		ix.actions = append(ix.actions, toolAction(fields[fName], fields[fSummary]))
		ix.retired = append(ix.retired, deprecated(ix.summary[i]))
		ix.lower = append(ix.lower, strings.ToLower(t.Name))
		tf := map[string]*posting{}
		var order []string
		for f, words := range fields {
			total[f] += len(words)
			for _, w := range words {
				p := tf[w]
				if p == nil {
					p = &posting{tool: int32(i)}
					tf[w] = p
					order = append(order, w)
				}
				if p.tf[f] < math.MaxUint16 {
					p.tf[f]++
				}
			}
		}
		for _, w := range order {
			ix.postings[w] = append(ix.postings[w], *tf[w])
		}
		ix.lengths = append(ix.lengths, lengthsOf(fields))
		ix.tools[i].Parameters, ix.tools[i].Output = nil, nil // the set has them; hit asks it
	}
	for w := range ix.postings {
		ix.words = append(ix.words, w)
	}
	slices.Sort(ix.words)
	for f := range total {
		if len(tools) > 0 {
			ix.avgLen[f] = max(float64(total[f])/float64(len(tools)), 1)
		}
	}
	return ix
}

func lengthsOf(fields [numFields][]string) [numFields]uint16 {
	var out [numFields]uint16
	for f, w := range fields {
		out[f] = uint16(min(len(w), math.MaxUint16))
	}
	return out
}

// Len is the number of tools indexed.
func (ix *Index) Len() int { return len(ix.tools) }

// Search ranks the set for q.
func (ix *Index) Search(q Query) (Result, error) {
	limit := q.Limit
	switch {
	case limit < 0:
		return Result{}, fmt.Errorf("%w: limit must be 1 to %d, got %d", ErrQuery, MaxLimit, limit)
	case limit == 0:
		limit = DefaultLimit
	case limit > MaxLimit:
		limit = MaxLimit
	}
	in := func(int) bool { return true }
	if q.Group != "" {
		if !ix.hasGroup(q.Group) {
			return Result{}, fmt.Errorf("%w: no tool name has the prefix %q; groups: %s", ErrQuery, q.Group, ix.groupList())
		}
		in = func(i int) bool { return sdkgen.InGroup(ix.tools[i].Name, q.Group) }
	}
	res := Result{Total: len(ix.tools), Tools: []Hit{}}
	words := ix.queryWords(q.Text)
	if len(words) == 0 {
		// No words: the tools (of the group) in name order.
		for i := range ix.tools {
			if !in(i) {
				continue
			}
			res.Matched++
			if len(res.Tools) < limit {
				res.Tools = append(res.Tools, ix.hit(i))
			}
		}
		return res, nil
	}
	scores := ix.score(words, strings.ToLower(strings.TrimSpace(q.Text)))
	type ranked struct {
		tool  int
		score float64
	}
	var list []ranked
	for i, s := range scores {
		if s > 0 && in(i) {
			list = append(list, ranked{i, s})
		}
	}
	res.Matched = len(list)
	slices.SortFunc(list, func(a, b ranked) int {
		return cmp.Or(cmp.Compare(b.score, a.score), cmp.Compare(ix.tools[a.tool].Name, ix.tools[b.tool].Name))
	})
	// The same operation under several prefixes (one API behind two servers) takes one place:
	// the best-ranked copy, naming the others (Hit.Also).
	first := map[string]int{}
	for _, r := range list {
		key := ix.sameAs(r.tool)
		if at, ok := first[key]; ok {
			if len(res.Tools[at].Also) < maxAlso {
				res.Tools[at].Also = append(res.Tools[at].Also, ix.tools[r.tool].Name)
			}
			continue
		}
		if len(res.Tools) == limit {
			break
		}
		first[key] = len(res.Tools)
		res.Tools = append(res.Tools, ix.hit(r.tool))
	}
	return res, nil
}

// word is one word of a query: the word itself (alts[0], weight 1) and the words that also
// stand for it in a tool's text (its synonyms, and longer index words it begins), each
// weighted by how much a match through it counts.
type word struct{ alts []term }

type term struct {
	word   string
	weight float64
}

// queryWords analyzes a query's text (its first MaxQueryBytes) into at most maxQueryTerms
// distinct words, each with its alternatives.
func (ix *Index) queryWords(text string) []word {
	if len(text) > MaxQueryBytes {
		cut := MaxQueryBytes
		for cut > 0 && !utf8.RuneStart(text[cut]) {
			cut--
		}
		text = text[:cut]
	}
	var out []word
	seen := map[string]bool{}
	for _, w := range analyzeQuery(text) {
		if seen[w] || len(out) >= maxQueryTerms {
			continue
		}
		seen[w] = true
		// A word that means what an earlier one means ("create a new …") says it once more,
		// not something else the tool must also match.
		if slices.ContainsFunc(out, func(o word) bool { return slices.Contains(synonyms[o.alts[0].word], w) }) {
			continue
		}
		out = append(out, word{alts: []term{{w, 1}}})
	}
	for i := range out {
		w := out[i].alts[0].word
		if !questionWords[w] && len(ix.postings[w]) > 0 {
			for _, p := range ix.prefixed(w) {
				weight := prefixWeight
				if len(w) >= longPrefix {
					weight = longPrefixWeight // "contribut" in "contributors": the same word family
				}
				out[i].alts = append(out[i].alts, term{p, weight})
			}
		}
		weight := synonymWeight
		if questionWords[w] {
			weight = questionWeight // the word itself says nothing a tool's text would
		}
		for _, s := range synonyms[w] {
			if !seen[s] {
				out[i].alts = append(out[i].alts, term{s, weight})
			}
		}
	}
	return out
}

// prefixed returns up to maxPrefixed index words that begin with w and are longer (so that
// "star" also finds "stargazers"), shortest first; none for words shorter than four letters.
func (ix *Index) prefixed(w string) []string {
	if len(w) < 4 {
		return nil
	}
	i, _ := slices.BinarySearch(ix.words, w)
	var out []string
	for ; i < len(ix.words) && strings.HasPrefix(ix.words[i], w); i++ {
		if ix.words[i] != w {
			out = append(out, ix.words[i])
		}
	}
	slices.SortStableFunc(out, func(a, b string) int { return cmp.Compare(len(a), len(b)) })
	return out[:min(len(out), maxPrefixed)]
}

// score is BM25F: per word, its weighted, length-normalized frequency over the fields,
// saturated and multiplied by the word's rarity, summed over the query's words (through the
// best of each word's alternatives), then scaled by the share of the query's words the tool
// matches (coordination), so that a tool matching most of what was asked beats one matching
// a single rare word. A name the query spells out whole scores above any other.
func (ix *Index) score(words []word, raw string) []float64 {
	scores := make([]float64, len(ix.tools))
	matched := make([]uint8, len(ix.tools))
	inName := make([]uint8, len(ix.tools)) // query words found in the name
	best := make([]float64, len(ix.tools))
	named := make([]bool, len(ix.tools))
	n := float64(len(ix.tools))
	for _, w := range words {
		clear(best)
		clear(named)
		for _, t := range w.alts {
			list := ix.postings[t.word]
			if len(list) == 0 {
				continue
			}
			df := float64(len(list))
			idf := math.Log(1 + (n-df+0.5)/(df+0.5))
			for _, p := range list {
				var tf float64
				for f := range numFields {
					if p.tf[f] == 0 {
						continue
					}
					norm := 1 - lengthNorm[f] + lengthNorm[f]*float64(ix.lengths[p.tool][f])/ix.avgLen[f]
					tf += weights[f] * float64(p.tf[f]) / norm
				}
				best[p.tool] = max(best[p.tool], t.weight*idf*tf/(k1+tf))
				if p.tf[fName] > 0 {
					named[p.tool] = true
				}
			}
		}
		for i, b := range best {
			if b > 0 {
				scores[i] += b
				matched[i]++
			}
			if named[i] {
				inName[i]++
			}
		}
	}
	want := queryAction(raw)
	for i := range scores {
		if scores[i] == 0 {
			continue
		}
		scores[i] *= math.Pow(float64(matched[i])/float64(len(words)), coordination)
		// A name mostly made of the query's words is the operation asked for, not a
		// neighbour that also mentions them (teams_create over
		// teams_add-or-update-repo-permissions for "create a team").
		cover := float64(inName[i]) / float64(max(ix.lengths[i][fName], 1))
		scores[i] *= 1 + nameCover*min(cover, 1)
		scores[i] *= 1 + intentWeight*agreement(want, ix.actions[i])
		if ix.retired[i] {
			scores[i] *= deprecatedWeight // its successor does the same, and is the one to call
		}
	}
	if raw != "" {
		for i := range ix.tools {
			if scores[i] > 0 && strings.Contains(raw, ix.lower[i]) {
				scores[i] += 100
			}
		}
	}
	return scores
}

// sameAs is what near-duplicates share: the name after its last "." (the prefixes before it
// say which server or source) and the summary.
func (ix *Index) sameAs(i int) string {
	name := ix.tools[i].Name
	if at := strings.LastIndexByte(name, '.'); at >= 0 {
		name = name[at+1:]
	}
	return name + "\x00" + ix.summary[i]
}

// hit is the result entry of tool i.
func (ix *Index) hit(i int) Hit {
	t := ix.tools[i]
	summary := ix.summary[i]
	if ix.notes != nil {
		if note := ix.notes(t.Name); note != "" {
			summary = strings.TrimSpace(summary + " [" + note + "]")
		}
	}
	// Rendering a signature decodes the tool's schemas, most of a search's time were it
	// done for every hit of every search.
	sig := ix.sigs[i].Load()
	if sig == nil {
		s, _ := ix.set.Signature(t.Name)
		sig = &s
		ix.sigs[i].Store(sig)
	}
	return Hit{Name: t.Name, Summary: summary, Signature: *sig}
}

// hasGroup reports whether some tool name has the prefix.
func (ix *Index) hasGroup(prefix string) bool {
	i, _ := slices.BinarySearchFunc(ix.tools, prefix, func(t sdkgen.Tool, p string) int { return cmp.Compare(t.Name, p) })
	for ; i < len(ix.tools) && strings.HasPrefix(ix.tools[i].Name, prefix); i++ {
		if sdkgen.InGroup(ix.tools[i].Name, prefix) {
			return true
		}
	}
	return false
}

// groupList names the set's largest groups for an error message.
func (ix *Index) groupList() string {
	groups := sdkgen.Groups(ix.set)
	var names []string
	for _, g := range groups[:min(len(groups), 12)] {
		names = append(names, g.Prefix)
	}
	if len(groups) > 12 {
		names = append(names, fmt.Sprintf("… (%d in all)", len(groups)))
	}
	if len(names) == 0 {
		return "none (the scope has no tools)"
	}
	return strings.Join(names, ", ")
}

// Describe returns the declarations of the named tools (sdkgen.Describe): at most MaxDescribe
// names, every one a tool of the set; otherwise an error wrapping ErrUnknown (naming the
// unknown names and, for each, the nearest tools) or ErrQuery.
func (ix *Index) Describe(names []string) (string, error) {
	if len(names) == 0 {
		return "", fmt.Errorf("%w: name a tool (or a list of tools) to describe", ErrQuery)
	}
	if len(names) > MaxDescribe {
		return "", fmt.Errorf("%w: %d names; describe at most %d at a time", ErrQuery, len(names), MaxDescribe)
	}
	text, missing := sdkgen.Describe(ix.set, names)
	if len(missing) > 0 {
		var parts []string
		for _, m := range missing[:min(len(missing), 5)] {
			part := fmt.Sprintf("%q", clip(m, 128))
			if near := ix.nearest(m); len(near) > 0 {
				part += " (did you mean " + strings.Join(near, ", ") + "?)"
			}
			parts = append(parts, part)
		}
		if len(missing) > 5 {
			parts = append(parts, fmt.Sprintf("and %d more", len(missing)-5))
		}
		return "", fmt.Errorf("%w: no tool named %s; $search finds tools by what they do", ErrUnknown, strings.Join(parts, ", "))
	}
	return text, nil
}

// ErrUnknown marks a name the set does not have.
var ErrUnknown = errors.New("unknown tool")

// nearest returns up to three tools the name most likely meant: the best matches of its words.
func (ix *Index) nearest(name string) []string {
	res, err := ix.Search(Query{Text: clip(name, 256), Limit: 3})
	if err != nil {
		return nil
	}
	return res.Names()
}

// Names lists the names of the tools found, best first.
func (r Result) Names() []string {
	out := make([]string, len(r.Tools))
	for i, h := range r.Tools {
		out[i] = h.Name
	}
	return out
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// paramWords returns the words of a parameter schema's property names (and of their short
// enums' values) and of their descriptions, at the top level and one level down (an object
// body's fields).
func paramWords(raw json.RawMessage) (names, docs []string) {
	var root struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if json.Unmarshal(raw, &root) != nil {
		return nil, nil
	}
	for _, k := range slices.Sorted(maps.Keys(root.Properties)) {
		names = append(names, analyze(k)...)
		var prop struct {
			Description string                     `json:"description"`
			Properties  map[string]json.RawMessage `json:"properties"`
			Enum        []any                      `json:"enum"`
		}
		if json.Unmarshal(root.Properties[k], &prop) != nil {
			continue
		}
		docs = append(docs, analyze(sdkgen.Summary(prop.Description))...)
		// An enum's values name what a call can do ("APPROVE" among a review's events, "success"
		// among a status's states) as a parameter's name does; a long enum is data, not
		// vocabulary.
		if len(prop.Enum) <= maxEnumWords {
			for _, v := range prop.Enum {
				if s, ok := v.(string); ok {
					names = append(names, analyze(s)...)
				}
			}
		}
		for _, nk := range slices.Sorted(maps.Keys(prop.Properties)) {
			names = append(names, analyze(nk)...)
		}
	}
	return names, docs
}

// deprecated reports whether a tool's summary says it is deprecated ("Deprecated: …",
// "[DEPRECATED] …", "… (deprecated)"): servers say so in the description, MCP has no field for it.
// A summary that merely mentions the word ("Lists deprecated packages") is not one.
func deprecated(summary string) bool {
	s := strings.ToLower(strings.TrimLeft(summary, " *_[("))
	return strings.HasPrefix(s, "deprecated") || strings.Contains(s, "(deprecated") || strings.Contains(s, "[deprecated")
}

// maxEnumWords bounds the enum a parameter's values are indexed from.
const maxEnumWords = 16

func collapse(s string) string { return strings.Join(strings.Fields(s), " ") }
