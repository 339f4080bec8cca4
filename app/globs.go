package app

import (
	"fmt"
	"slices"
	"strings"

	"github.com/codemode/codemode/config"
	"github.com/codemode/codemode/internal/editdist"
)

// checkGlobs rejects a policy or guard whose tool glob matches no tool its
// rule can see: a tool of its scope or of a descendant (every scope when
// the rule names none). A glob that may name a tool of a configured
// mcp_server ("notes.*" for the server notes) passes, since those tools
// arrive once the upstream connects. The error names the rule, the glob,
// the scope and the nearest tool names.
func (a *App) checkGlobs() error {
	type rule struct{ key, scope, glob string }
	var rules []rule
	for i, p := range a.Config.Policies {
		rules = append(rules, rule{fmt.Sprintf("policies[%d].tool", i), p.Scope, p.Tool})
	}
	for i, g := range a.Config.Guards {
		rules = append(rules, rule{fmt.Sprintf("guards[%d].tool", i), g.Scope, g.Tool})
	}
	for _, r := range rules {
		names := a.toolsUnder(r.scope)
		if slices.ContainsFunc(names, func(n string) bool { return config.MatchTool(r.glob, n) }) || a.upstreamMayMatch(r.glob) {
			continue
		}
		scope := r.scope
		if scope == "" {
			scope = "any scope"
		} else {
			scope = "scope " + scope + " (and its descendants)"
		}
		msg := fmt.Sprintf("%q matches no tool in %s", r.glob, scope)
		if near := nearestTools(r.glob, names, 3); len(near) > 0 {
			msg += "; nearest: " + strings.Join(near, ", ")
		}
		return config.Errorf("%s: %s", r.key, msg)
	}
	return nil
}

// toolsUnder lists the tools of scope and its descendants ("" means every
// scope), sorted and without repeats.
func (a *App) toolsUnder(scope string) []string {
	seen := map[string]bool{}
	for _, s := range a.Registry.Scopes() {
		if scope != "" && !slices.Contains(a.Registry.Ancestry(s), scope) {
			continue
		}
		v, err := a.Registry.View(s)
		if err != nil {
			continue
		}
		for _, n := range v.Names() {
			seen[n] = true
		}
	}
	names := make([]string, 0, len(seen))
	for n := range seen {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// upstreamMayMatch reports whether glob may name a tool of a configured
// mcp_server or openapi_source (registered after New): its literal prefix
// and "<name>." agree as far as both go.
func (a *App) upstreamMayMatch(glob string) bool {
	lit := literalPrefix(glob)
	var names []string
	for _, m := range a.Config.MCPServers {
		names = append(names, m.Name)
	}
	for _, o := range a.Config.OpenAPISources {
		names = append(names, o.Name)
	}
	for _, n := range names {
		p := n + "."
		if strings.HasPrefix(lit, p) || strings.HasPrefix(p, lit) {
			return true
		}
	}
	return false
}

// literalPrefix is glob up to its first metacharacter.
func literalPrefix(glob string) string {
	if i := strings.IndexAny(glob, `*?[\`); i >= 0 {
		return glob[:i]
	}
	return glob
}

// nearestTools returns up to n names closest to glob's literal text (the
// same length of each name when the glob continues with a wildcard).
func nearestTools(glob string, names []string, n int) []string {
	lit := literalPrefix(glob)
	if lit == "" {
		return nil
	}
	prefixOnly := lit != glob
	type cand struct {
		name string
		d    int
	}
	var cands []cand
	for _, name := range names {
		cmp := name
		if prefixOnly && len(cmp) > len(lit) {
			cmp = cmp[:len(lit)]
		}
		limit := max(2, len(lit)/2)
		if d := editdist.Distance(strings.ToLower(lit), strings.ToLower(cmp), limit); d <= limit {
			cands = append(cands, cand{name, d})
		}
	}
	slices.SortStableFunc(cands, func(a, b cand) int { return a.d - b.d })
	var out []string
	for i := 0; i < len(cands) && i < n; i++ {
		out = append(out, cands[i].name)
	}
	return out
}
