package schema

import (
	"encoding/json"
	"unicode/utf8"

	"github.com/codemode/codemode/internal/jsontext"
)

// The fast path over JSON text. Arguments and values reach validation as
// frozen JSON text; decoding them only to find them valid costs more than
// the check itself. ValidText runs the fast path's judgement over the text:
// it answers true only where check would answer valid for the decoded tree
// (encoding/json with UseNumber), so it too can only make valid input
// cheaper. Anything it does not follow exactly (duplicate keys included:
// every occurrence must pass, where the decoded tree keeps the last) is
// "unsure".

// ValidText reports whether text, one JSON value, certainly satisfies the
// schema. False means "decode and Validate", never "invalid".
func (s *Schema) ValidText(text string) bool {
	if s == nil || s.fast == nil {
		return false
	}
	end, ok := s.fast.scan(text, jsontext.SkipSpace(text, 0), 0)
	return ok && jsontext.SkipSpace(text, end) == len(text)
}

// scan judges the value starting at text[i] and returns where it ends; ok
// means valid (check would say valid for its decoded form).
func (f *fastNode) scan(text string, i, depth int) (end int, ok bool) {
	if f.opaque || depth > maxFastDepth || i >= len(text) {
		return 0, false
	}
	if f.enum != nil || f.hasConst {
		v, ok := literalAt(text, i)
		if !ok || !f.literalOK(v) {
			return 0, false
		}
	}
	switch f.typ {
	case TypeJSON:
		return anyText(text, i, depth)
	case TypeNull:
		return word(text, i, "null")
	case TypeBoolean:
		if end, ok := word(text, i, "true"); ok {
			return end, true
		}
		return word(text, i, "false")
	case TypeString:
		s, end, ok := stringAt(text, i)
		if !ok || !utf8.ValidString(s) {
			return 0, false
		}
		if f.minLen >= 0 || f.maxLen >= 0 {
			n := utf8.RuneCountInString(s)
			if (f.minLen >= 0 && n < f.minLen) || (f.maxLen >= 0 && n > f.maxLen) {
				return 0, false
			}
		}
		return end, f.pattern == nil || f.pattern.MatchString(s)
	case TypeNumber, TypeInteger:
		lit, end := numberAt(text, i)
		x, ok := number(json.Number(lit), f.typ == TypeInteger)
		if !ok {
			return 0, false
		}
		switch {
		case f.min != nil && !(x >= *f.min), f.max != nil && !(x <= *f.max),
			f.xmin != nil && !(x > *f.xmin), f.xmx != nil && !(x < *f.xmx):
			return 0, false
		}
		return end, true
	case TypeArray:
		n := 0
		end, ok := elements(text, i, func(j int) (int, bool) {
			n++
			if f.items == nil {
				return anyText(text, j, depth+1)
			}
			return f.items.scan(text, j, depth+1)
		})
		if !ok || (f.minItems >= 0 && n < f.minItems) || (f.maxItems >= 0 && n > f.maxItems) {
			return 0, false
		}
		return end, true
	case TypeObject:
		if len(f.required) > 64 {
			return 0, false
		}
		var seen uint64 // bit k: required[k] is present
		end, ok := members(text, i, func(key string, j int) (int, bool) {
			for k, r := range f.required {
				if r == key {
					seen |= 1 << k
				}
			}
			if p, declared := f.props[key]; declared {
				return p.scan(text, j, depth+1)
			}
			if !f.open || !utf8.ValidString(key) {
				return 0, false
			}
			return anyText(text, j, depth+1)
		})
		if !ok || seen != 1<<len(f.required)-1 {
			return 0, false
		}
		return end, true
	case TypeOneOf:
		// check is decisive only for a single branch that matches.
		if len(f.oneOf) != 1 {
			return 0, false
		}
		return f.oneOf[0].scan(text, i, depth+1)
	}
	return 0, false
}

// anyText is anyJSON over text: decoded strings are always valid UTF-8
// (encoding/json replaces what is not), so only numbers and depth matter.
func anyText(text string, i, depth int) (int, bool) {
	if depth > maxFastDepth || i >= len(text) {
		return 0, false
	}
	switch c := text[i]; {
	case c == 'n':
		return word(text, i, "null")
	case c == 't':
		return word(text, i, "true")
	case c == 'f':
		return word(text, i, "false")
	case c == '"':
		_, end, ok := skipString(text, i)
		return end, ok
	case c == '-' || c >= '0' && c <= '9':
		lit, end := numberAt(text, i)
		_, ok := number(json.Number(lit), false)
		return end, ok
	case c == '[':
		return elements(text, i, func(j int) (int, bool) { return anyText(text, j, depth+1) })
	case c == '{':
		return members(text, i, func(_ string, j int) (int, bool) { return anyText(text, j, depth+1) })
	}
	return 0, false
}

// elements walks the array at text[i], calling elem at each element's start.
func elements(text string, i int, elem func(j int) (int, bool)) (int, bool) {
	return items(text, i, '[', ']', elem)
}

// members walks the object at text[i], calling member with each decoded key
// and the start of its value.
func members(text string, i int, member func(key string, j int) (int, bool)) (int, bool) {
	return items(text, i, '{', '}', func(j int) (int, bool) {
		key, end, ok := stringAt(text, j)
		if !ok {
			return 0, false
		}
		j = jsontext.SkipSpace(text, end)
		if j >= len(text) || text[j] != ':' {
			return 0, false
		}
		return member(key, jsontext.SkipSpace(text, j+1))
	})
}

// items walks the container that open and close delimit at text[i],
// calling item at each item's start; item returns the item's end. It
// returns the end of the container.
func items(text string, i int, open, close byte, item func(j int) (int, bool)) (int, bool) {
	if text[i] != open {
		return 0, false
	}
	i = jsontext.SkipSpace(text, i+1)
	if i < len(text) && text[i] == close {
		return i + 1, true
	}
	for {
		end, ok := item(i)
		if !ok {
			return 0, false
		}
		var done bool
		if i, done, ok = afterElement(text, end, close); !ok || done {
			return i, ok
		}
	}
}

// afterElement reads what follows an element of a container that ends at
// text[end]: the container's close (done, i past it), or a comma (i at the
// next element); anything else is not ok.
func afterElement(text string, end int, close byte) (i int, done, ok bool) {
	i = jsontext.SkipSpace(text, end)
	if i >= len(text) {
		return 0, false, false
	}
	switch text[i] {
	case close:
		return i + 1, true, true
	case ',':
		return jsontext.SkipSpace(text, i+1), false, true
	}
	return 0, false, false
}

// skipString finds the end of the string literal at text[i]; plain means it
// has no escapes and is valid UTF-8, so its content is its decoded value.
func skipString(text string, i int) (plain bool, end int, ok bool) {
	if i >= len(text) || text[i] != '"' {
		return false, 0, false
	}
	plain = true
	ascii := true
	for j := i + 1; j < len(text); j++ {
		switch c := text[j]; {
		case c == '"':
			return plain && (ascii || utf8.ValidString(text[i+1:j])), j + 1, true
		case c == '\\':
			plain = false
			if j+1 >= len(text) || !validEscape(text[j+1:]) {
				return false, 0, false
			}
			j++
		case c < 0x20:
			return false, 0, false
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	return false, 0, false
}

// validEscape reports whether rest, what follows a backslash in a string
// literal, starts with a JSON escape.
func validEscape(rest string) bool {
	switch rest[0] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return true
	case 'u':
		if len(rest) < 5 {
			return false
		}
		for _, c := range []byte(rest[1:5]) {
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
				return false
			}
		}
		return true
	}
	return false
}

// stringAt decodes the string literal at text[i] as encoding/json would.
func stringAt(text string, i int) (s string, end int, ok bool) {
	plain, end, ok := skipString(text, i)
	if !ok {
		return "", 0, false
	}
	if plain {
		return text[i+1 : end-1], end, true
	}
	var decoded string
	if json.Unmarshal([]byte(text[i:end]), &decoded) != nil {
		return "", 0, false
	}
	return decoded, end, true
}

// literalAt decodes a string, boolean or null at text[i] (ok false for any
// other value).
func literalAt(text string, i int) (any, bool) {
	switch text[i] {
	case '"':
		s, _, ok := stringAt(text, i)
		return s, ok
	case 't':
		_, ok := word(text, i, "true")
		return true, ok
	case 'f':
		_, ok := word(text, i, "false")
		return false, ok
	case 'n':
		_, ok := word(text, i, "null")
		return nil, ok
	}
	return nil, false
}

// numberAt returns the number literal at text[i]; number judges its grammar.
func numberAt(text string, i int) (lit string, end int) {
	end = i
	for end < len(text) {
		switch c := text[end]; {
		case c >= '0' && c <= '9', c == '-', c == '+', c == '.', c == 'e', c == 'E':
			end++
			continue
		}
		break
	}
	return text[i:end], end
}

func word(text string, i int, w string) (int, bool) {
	if len(text)-i >= len(w) && text[i:i+len(w)] == w {
		return i + len(w), true
	}
	return 0, false
}
