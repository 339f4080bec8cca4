package httpsource

import (
	"regexp"
	"slices"
	"strings"

	"github.com/codemode/codemode/openapi"
)

// selector is one include or exclude entry: an operationId glob (matched
// against the operationId and the tool name), tag:GLOB, path:GLOB or
// method:NAME. In a glob, * matches any run of characters, / included.
type selector struct {
	kind string // "", "tag", "path" or "method"
	re   *regexp.Regexp
	text string // the method, upper case
}

// parseSelector reads an entry config validated (an unknown kind reads as
// an operationId glob).
func parseSelector(s string) selector {
	kind, value, ok := strings.Cut(s, ":")
	switch {
	case ok && kind == "method":
		return selector{kind: kind, text: strings.ToUpper(value)}
	case ok && (kind == "tag" || kind == "path"):
	default:
		kind, value = "", s
	}
	return selector{kind: kind, re: glob(value)}
}

func glob(g string) *regexp.Regexp {
	parts := strings.Split(g, "*")
	for i, p := range parts {
		parts[i] = regexp.QuoteMeta(p)
	}
	return regexp.MustCompile("^" + strings.Join(parts, ".*") + "$")
}

func (s selector) match(op *openapi.Operation) bool {
	switch s.kind {
	case "method":
		return op.Method == s.text
	case "tag":
		return slices.ContainsFunc(op.Tags, s.re.MatchString)
	case "path":
		return s.re.MatchString(op.Path)
	}
	return s.re.MatchString(op.OperationID) || s.re.MatchString(op.Name)
}

// filter is a source's include and exclude lists.
type filter struct{ include, exclude []selector }

func newFilter(include, exclude []string) filter {
	var f filter
	for _, s := range include {
		f.include = append(f.include, parseSelector(s))
	}
	for _, s := range exclude {
		f.exclude = append(f.exclude, parseSelector(s))
	}
	return f
}

// selects reports whether op is included (no include list includes every
// operation) and not excluded.
func (f filter) selects(op *openapi.Operation) bool {
	match := func(s selector) bool { return s.match(op) }
	if len(f.include) > 0 && !slices.ContainsFunc(f.include, match) {
		return false
	}
	return !slices.ContainsFunc(f.exclude, match)
}
