package config

import (
	"reflect"
	"strings"
)

// checkSigns applies the `check` tags of the fields of v, a struct, and of
// the structs it holds by value, naming a field by prefix, its yaml key and
// theirs ("server.max_streams"). A tag is "positive" (above zero) or
// "nonnegative" (zero or above), optionally followed by "; NOTE", which the
// message repeats in parentheses. The first field, in declaration order,
// that breaks its rule is the error; a rule is written once, on its field.
func checkSigns(prefix string, v any) error {
	return checkValue(prefix, reflect.ValueOf(v))
}

func checkValue(prefix string, v reflect.Value) error {
	t := v.Type()
	for i := range t.NumField() {
		f, fv := t.Field(i), v.Field(i)
		key := prefix + "." + strings.Split(f.Tag.Get("yaml"), ",")[0]
		if fv.Kind() == reflect.Struct {
			if err := checkValue(key, fv); err != nil {
				return err
			}
			continue
		}
		rule, note, _ := strings.Cut(f.Tag.Get("check"), ";")
		if rule == "" {
			continue
		}
		msg, ok := "", true
		switch n := fv.Int(); rule {
		case "positive":
			msg, ok = "must be positive", n > 0
		case "nonnegative":
			msg, ok = "must not be negative", n >= 0
		default:
			panic("config: unknown check " + rule + " on " + t.Name() + "." + f.Name)
		}
		if !ok {
			if note = strings.TrimSpace(note); note != "" {
				msg += " (" + note + ")"
			}
			return bad(key, "%s", msg)
		}
	}
	return nil
}
