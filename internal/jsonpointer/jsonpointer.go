// Package jsonpointer resolves JSON Pointers (RFC 6901) inside decoded JSON
// values: the lookup a schema's $ref, an OpenAPI document's references and
// the SDK generator's refs share.
package jsonpointer

import (
	"strconv"
	"strings"
)

// Lookup returns the value at ptr inside v, a tree of map[string]any and
// []any: v itself for "", else the member or element each "/"-separated
// token names, its ~1 and ~0 escapes decoded. It is false for a pointer
// that does not start with "/" or names nothing.
func Lookup(v any, ptr string) (any, bool) {
	if ptr == "" {
		return v, true
	}
	if ptr[0] != '/' {
		return nil, false
	}
	for _, tok := range strings.Split(ptr[1:], "/") {
		tok = Unescape(tok)
		switch x := v.(type) {
		case map[string]any:
			e, ok := x[tok]
			if !ok {
				return nil, false
			}
			v = e
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(x) {
				return nil, false
			}
			v = x[i]
		default:
			return nil, false
		}
	}
	return v, true
}

// Unescape decodes a reference token's escapes: ~1 is "/", ~0 is "~".
func Unescape(tok string) string {
	if !strings.Contains(tok, "~") {
		return tok
	}
	return strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
}
