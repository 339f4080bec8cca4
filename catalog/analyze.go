package catalog

import (
	"slices"
	"strings"
	"unicode"

	"github.com/kljensen/snowball/english"
)

// analyze turns text into the words the index compares: split at anything that is not a
// letter or digit and at camelCase humps ("listForRepo", "HTTPServer" → list for repo, http
// server), lower-cased, function words dropped, stemmed ("starred", "stars" → star).
func analyze(text string) []string {
	var out []string
	for _, w := range split(text) {
		w = strings.ToLower(w)
		if stopWords[w] {
			continue
		}
		out = append(out, stem(w))
	}
	return out
}

// analyzeQuery is analyze for a query: the words that say who or what is asked about ("who",
// "my") are kept, for their synonyms.
func analyzeQuery(text string) []string {
	var out []string
	for _, w := range split(describing(text)) {
		w = strings.ToLower(w)
		if questionWords[w] {
			out = append(out, w)
			continue
		}
		if stopWords[w] {
			continue
		}
		out = append(out, stem(w))
	}
	return out
}

// describing drops the parts of a query that are values rather than words about the tool: a
// path, a version, a number, an owner/repo pair, an identifier with digits, a name being given
// ("src/main.go", "v1.0", "42", "kubernetes/kubernetes", "abc123", "called notes"). They are the arguments the program will
// pass, and matching them against descriptions only finds tools that mention them by chance.
func describing(text string) string {
	fields := strings.Fields(text)
	kept := fields[:0]
	naming := false
	for _, f := range fields {
		core := strings.Trim(f, ".,;:!?()[]{}'\"`")
		value := naming
		naming = namingWords[strings.ToLower(core)]
		if value || core == "" || strings.ContainsAny(core, "/.@#:=\\") || strings.ContainsFunc(core, unicode.IsDigit) {
			continue
		}
		kept = append(kept, core)
	}
	if len(kept) == 0 {
		return text // nothing but values: search for them after all
	}
	return strings.Join(kept, " ")
}

// namingWords introduce a value: the word after them is the name given, not a word about the
// tool ("a team called platform", "a label named bug").
var namingWords = toSet("called named titled")

// questionWords are function words that still say what is asked for: "who" asks for people,
// "me" and "my" for the caller's own (what APIs call the authenticated or current user).
var questionWords = toSet("who whom me my mine myself i")

// stem is the Snowball English stem of a lower-case word; words with digits or non-ASCII
// letters are kept as they are.
func stem(w string) string {
	for i := 0; i < len(w); i++ {
		if c := w[i]; c < 'a' || c > 'z' {
			return w
		}
	}
	if len(w) <= 2 {
		return w
	}
	return english.Stem(w, true)
}

// split cuts text into words at non-alphanumerics and camelCase boundaries.
func split(text string) []string {
	var out []string
	runes := []rune(text)
	start := -1
	flush := func(end int) {
		if start >= 0 && end > start {
			out = append(out, string(runes[start:end]))
		}
		start = -1
	}
	for i, r := range runes {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			flush(i)
			continue
		}
		if start < 0 {
			start = i
			continue
		}
		prev := runes[i-1]
		switch {
		case unicode.IsUpper(r) && (unicode.IsLower(prev) || unicode.IsDigit(prev)):
			flush(i) // fooBar, v2Beta
			start = i
		case unicode.IsLower(r) && unicode.IsUpper(prev) && i-1 > start && unicode.IsUpper(runes[i-2]) && plural(runes, i):
			flush(i) // PRs, IDs, URLs: an acronym's plural, the acronym
		case unicode.IsLower(r) && unicode.IsUpper(prev) && i-1 > start && unicode.IsUpper(runes[i-2]):
			flush(i - 1) // HTTPServer: HTTP | Server
			start = i - 1
		}
	}
	flush(len(runes))
	return out
}

// plural reports whether runes[i] is an "s" that ends the word: an acronym's plural.
func plural(runes []rune, i int) bool {
	return runes[i] == 's' && (i+1 == len(runes) || !unicode.IsLetter(runes[i+1]) && !unicode.IsDigit(runes[i+1]))
}

// stopWords carry no meaning of their own in a tool's text or a query.
var stopWords = toSet(`a an the of to for in on at by with and or is are be been being was were
it its this that these those from as into onto about i me my we our us you your he she they them
their what which who whom whose how do does did can could would should will shall may might must
please want wants need needs some any all each every there here then than so such via per if
whether not no`)

// synonyms maps a stemmed word to the stems of words API descriptions use for the same action
// or thing. The groups are the common vocabulary of HTTP and tool APIs, not any one catalog.
var synonyms = mergeSynonyms(synonymGroups(
	"create add new make insert post register open give grant save store",
	"delete remove destroy erase drop unset clear revoke kick expel",
	"list enumerate browse show see display",
	"get fetch read retrieve show view lookup describe inspect info detail see display",
	"update edit modify change patch rename replace",
	"search find query lookup filter",
	"user account member person people",
	"repo repository",
	"org organization organisation",
	"pr pull",
	"comment reply",
	"run execute trigger dispatch invoke launch start",
	"cancel stop abort halt terminate shut",
	"approve accept allow",
	"reject deny decline",
	"download export",
	"upload import",
	"config configuration setting preference",
	"auth authentication authorization login",
	"msg message",
	"doc document documentation",
	"env environment",
	"stat statistic metric",
	"latest newest recent last",
	"file content",
	"email mail",
	"image picture photo",
	"send publish notify",
	"subscribe watch follow",
	"unsubscribe unwatch unfollow",
	"permission access role privilege",
	"fail failure error",
	"invite invitation",
	"block ban",
	"left remaining remain",
	"call request",
	"count total number",
), map[string][]string{
	"who":    stems("user people member"),
	"whom":   stems("user people member"),
	"me":     stems("authenticated current self"),
	"my":     stems("authenticated current self"),
	"mine":   stems("authenticated current self"),
	"myself": stems("authenticated current self"),
	"i":      stems("authenticated current self"),
})

func stems(words string) []string {
	var out []string
	for _, w := range strings.Fields(words) {
		out = append(out, stem(w))
	}
	return out
}

func mergeSynonyms(a, b map[string][]string) map[string][]string {
	for k, v := range b {
		a[k] = append(a[k], v...)
	}
	return a
}

func synonymGroups(groups ...string) map[string][]string {
	out := map[string][]string{}
	for _, g := range groups {
		var stems []string
		for _, w := range strings.Fields(g) {
			stems = append(stems, stem(w))
		}
		for _, s := range stems {
			for _, o := range stems {
				if o != s && !slices.Contains(out[s], o) {
					out[s] = append(out[s], o)
				}
			}
		}
	}
	return out
}

func toSet(words string) map[string]bool {
	out := map[string]bool{}
	for _, w := range strings.Fields(words) {
		out[w] = true
	}
	return out
}
