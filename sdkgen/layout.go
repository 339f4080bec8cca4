package sdkgen

import (
	"slices"
	"strconv"
	"strings"
)

// A rendered type (tstype.go) spreads object types over lines: each member, and each member's
// JSDoc, on a line of its own, indented. Its only line breaks are that layout: string literals
// escape line terminators and JSDoc text has its white space collapsed (text.go). The functions
// here derive the other layouts from it by splitting on those breaks.

// inline joins a rendered type onto one line: `{ /** Doc. */ a: number; b: string }`. The ';'
// before each closing brace is dropped, everything else is kept.
func inline(typ string) string {
	if !strings.Contains(typ, "\n") {
		return typ
	}
	lines := strings.Split(typ, "\n")
	var b strings.Builder
	b.Grow(len(typ))
	for i, line := range lines {
		line = strings.TrimLeft(line, " ")
		if i > 0 {
			if strings.HasPrefix(line, "}") {
				trimmed := strings.TrimSuffix(b.String(), ";")
				b.Reset()
				b.WriteString(trimmed)
			}
			b.WriteByte(' ')
		}
		b.WriteString(line)
	}
	return b.String()
}

// stripDocs removes the JSDoc lines of a multi-line rendered type. Every member line starts with
// its key (an identifier or a quoted string) or a brace, so a line that starts with "/**" is a
// JSDoc line and nothing else.
func stripDocs(typ string) string {
	if !strings.Contains(typ, "/**") {
		return typ
	}
	lines := strings.Split(typ, "\n")
	kept := lines[:0]
	for _, line := range lines {
		body := strings.TrimLeft(line, " ")
		if strings.HasPrefix(body, "/**") && strings.HasSuffix(body, "*/") {
			continue // a member's JSDoc line (its text cannot contain "*/": text.go escapes it)
		}
		kept = append(kept, line)
	}
	return strings.Join(kept, "\n")
}

// dropDocTag removes a tag without value (such as "@integer") from the JSDoc lines of a
// multi-line rendered type, and the lines it leaves empty.
func dropDocTag(typ, tag string) string {
	if !strings.Contains(typ, tag) {
		return typ
	}
	return rewriteDocLines(typ, func(text, _ string) string {
		words := slices.DeleteFunc(strings.Fields(text), func(w string) bool { return w == tag })
		return strings.Join(words, " ")
	})
}

// dropRestatedDocs removes, from the JSDoc lines of a multi-line rendered type, a description
// that says nothing the property's name and the tool's name do not ("The file path." on the path
// of files_read, "The key." on key; see restatesName). The tags after it stay; a line left
// empty goes.
func dropRestatedDocs(typ, toolName string) string {
	if !strings.Contains(typ, "/**") {
		return typ
	}
	return rewriteDocLines(typ, func(text, next string) string {
		if key, ok := memberKey(next); ok {
			return trimRestated(text, key+" "+toolName)
		}
		return text
	})
}

// rewriteDocLines rewrites the text of each one-line JSDoc ("/** text */") of a multi-line
// rendered type, given the next line without its indent ("" after the last): a text rewritten
// to "" drops its line.
func rewriteDocLines(typ string, rewrite func(text, next string) string) string {
	lines := strings.Split(typ, "\n")
	kept := lines[:0]
	for i, line := range lines {
		body := strings.TrimLeft(line, " ")
		if strings.HasPrefix(body, "/** ") && strings.HasSuffix(body, " */") {
			next := ""
			if i+1 < len(lines) {
				next = strings.TrimLeft(lines[i+1], " ")
			}
			text := body[len("/** ") : len(body)-len(" */")]
			switch t := rewrite(text, next); {
			case t == "":
				continue
			case t != text:
				line = line[:len(line)-len(body)] + "/** " + t + " */"
			}
		}
		kept = append(kept, line)
	}
	return strings.Join(kept, "\n")
}

// trimRestated returns a property's doc text without its description when that restates names
// (the tags after it stay); "" when nothing is left.
func trimRestated(text, names string) string {
	desc, tags := text, ""
	if at := tagStart(text); at >= 0 {
		desc, tags = strings.TrimRight(text[:at], " "), text[at:]
	}
	if desc != "" && restatesName(desc, names) {
		return tags
	}
	return text
}

// tagStart returns the index of the first JSDoc tag in a doc text ("@" at the start or after a
// space), or -1.
func tagStart(text string) int {
	for i := 0; i < len(text); i++ {
		if text[i] == '@' && (i == 0 || text[i-1] == ' ') {
			return i
		}
	}
	return -1
}

// memberKey returns the property name a member line of a rendered object type starts with: an
// identifier, or a quoted string (as quoteJS writes it).
func memberKey(line string) (string, bool) {
	if strings.HasPrefix(line, `"`) {
		for i := 1; i < len(line); i++ {
			switch line[i] {
			case '\\':
				i++
			case '"':
				key, err := strconv.Unquote(line[:i+1])
				return key, err == nil
			}
		}
		return "", false
	}
	end := strings.IndexAny(line, "?:")
	if end <= 0 || !isIdentifierName(line[:end]) {
		return "", false
	}
	return line[:end], true
}

// isIdentifierName reports whether s is [A-Za-z_$][A-Za-z0-9_$]*, reserved words included.
func isIdentifierName(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || c == '$' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || i > 0 && '0' <= c && c <= '9') {
			return false
		}
	}
	return s != ""
}
