package session

import (
	"bytes"
	"encoding/json"
	"errors"

	"github.com/codemode/codemode/internal/jsontext"
)

// errNotObject reports JSON that is valid but not an object.
var errNotObject = errors.New("not a JSON object")

// objectMembers calls fn for each top-level member of the JSON object in data,
// in order, with the raw key (quotes and escapes as written) and the raw value
// (without the whitespace around it). data must already be valid JSON
// (json.Valid); anything else is reported as an error, never a panic.
func objectMembers(data []byte, fn func(key, value []byte) error) error {
	i := jsontext.SkipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return errNotObject
	}
	i = jsontext.SkipSpace(data, i+1)
	if i < len(data) && data[i] == '}' {
		return nil
	}
	for {
		if i >= len(data) || data[i] != '"' {
			return errMalformed
		}
		end, err := skipString(data, i)
		if err != nil {
			return err
		}
		key := data[i:end]
		i = jsontext.SkipSpace(data, end)
		if i >= len(data) || data[i] != ':' {
			return errMalformed
		}
		i = jsontext.SkipSpace(data, i+1)
		vend, err := skipValue(data, i)
		if err != nil {
			return err
		}
		if err := fn(key, data[i:vend]); err != nil {
			return err
		}
		i = jsontext.SkipSpace(data, vend)
		if i >= len(data) {
			return errMalformed
		}
		switch data[i] {
		case ',':
			i = jsontext.SkipSpace(data, i+1)
		case '}':
			return nil
		default:
			return errMalformed
		}
	}
}

var errMalformed = errors.New("malformed JSON")

// skipString returns the index just past the string starting at data[i]. It
// jumps from quote to quote (bytes.IndexByte): a quote ends the string unless
// an odd number of backslashes precedes it. Reading a long log, the byte
// loop this replaced was a tenth of the time.
func skipString(data []byte, i int) (int, error) {
	for i++; i < len(data); {
		q := bytes.IndexByte(data[i:], '"')
		if q < 0 {
			break
		}
		q += i
		escapes := 0
		for j := q - 1; j >= i && data[j] == '\\'; j-- {
			escapes++
		}
		if escapes%2 == 0 {
			return q + 1, nil
		}
		i = q + 1
	}
	return 0, errMalformed
}

// skipValue returns the index just past the value starting at data[i].
func skipValue(data []byte, i int) (int, error) {
	if i >= len(data) {
		return 0, errMalformed
	}
	switch data[i] {
	case '"':
		return skipString(data, i)
	case '{', '[':
		depth := 0
		for i < len(data) {
			switch data[i] {
			case '"':
				end, err := skipString(data, i)
				if err != nil {
					return 0, err
				}
				i = end
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1, nil
				}
			}
			i++
		}
		return 0, errMalformed
	default:
		for i < len(data) {
			switch data[i] {
			case ',', '}', ']', ' ', '\t', '\r', '\n':
				return i, nil
			}
			i++
		}
		return i, nil
	}
}

// keyIs reports whether the raw JSON key (quotes included) names want,
// resolving escapes such as "s\u0065q".
func keyIs(raw []byte, want string) bool {
	if bytes.IndexByte(raw, '\\') < 0 {
		return len(raw) == len(want)+2 && string(raw[1:len(raw)-1]) == want
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return false
	}
	return s == want
}
