package httpapi

import (
	"unicode"
	"unicode/utf8"
)

// checkID refuses an identifier a client sent (a session, approval or tool
// call id, a tool's name) that is not valid UTF-8 or holds a control
// character: such a value has no use as a name, breaks logs, and a NUL is
// refused by PostgreSQL. field names it in the 400.
func checkID(field, v string) *apiError {
	if !utf8.ValidString(v) {
		return badRequest("%s is not valid UTF-8", field)
	}
	for i, r := range v {
		if unicode.IsControl(r) {
			return badRequest("%s has a control character (U+%04X at byte %d)", field, r, i)
		}
	}
	return nil
}
