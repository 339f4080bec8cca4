package config

import (
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// EnvPrefix starts the name of every configuration variable.
const EnvPrefix = "CODEMODE_"

// Key is one configuration key: its dotted path in the file, the
// environment variable that sets it, and its Go type. A list or a map
// (scopes, policies, server.allowed_origins…) is one key whose variable
// holds a YAML value.
type Key struct {
	Path string
	Env  string
	Type reflect.Type
	// Index locates the field in Config (reflect.Value.FieldByIndex).
	Index []int
}

var (
	durationType = reflect.TypeOf(Duration(0))
	sizeType     = reflect.TypeOf(Size(0))
)

// Keys lists every key of Config in declaration order, walking the struct
// by its yaml tags: a nested struct (limits, server…) contributes its
// fields, every other field is a key.
func Keys() []Key {
	var keys []Key
	var walk func(t reflect.Type, prefix string, index []int)
	walk = func(t reflect.Type, prefix string, index []int) {
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			if name == "" || name == "-" {
				continue
			}
			path := prefix + name
			idx := append(append([]int(nil), index...), i)
			if f.Type.Kind() == reflect.Struct {
				walk(f.Type, path+".", idx)
				continue
			}
			keys = append(keys, Key{Path: path, Env: EnvName(path), Type: f.Type, Index: idx})
		}
	}
	walk(reflect.TypeOf(Config{}), "", nil)
	return keys
}

// EnvName is the environment variable of a key path: CODEMODE_ and the
// path upper-cased with "_" for ".", e.g. CODEMODE_LIMITS_TIMEOUT.
func EnvName(path string) string {
	return EnvPrefix + strings.ToUpper(strings.ReplaceAll(path, ".", "_"))
}

// sectionPrefixes are the variable prefixes of the nested sections
// (CODEMODE_LIMITS_, CODEMODE_SESSIONS_RETENTION_…): a variable under one
// that names no key is a misspelling, not someone else's variable.
func sectionPrefixes() []string {
	var out []string
	var walk func(t reflect.Type, prefix string)
	walk = func(t reflect.Type, prefix string) {
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			if f.Type.Kind() == reflect.Struct && name != "" {
				out = append(out, EnvName(prefix+name)+"_")
				walk(f.Type, prefix+name+".")
			}
		}
	}
	walk(reflect.TypeOf(Config{}), "")
	return out
}

// ApplyEnv sets every key whose variable lookup finds (os.LookupEnv in
// Load) over c. Scalars are written as in the file (30s, 1MiB, true, 8);
// a list or map is a YAML value ([a, b], {agent: {mode: code}}), and a
// list of strings may also be comma-separated. Other CODEMODE_ variables
// are left alone, except one under a section's prefix that names no key.
// The error names the variable.
func (c *Config) ApplyEnv(lookup func(string) (string, bool), environ ...string) error {
	v := reflect.ValueOf(c).Elem()
	known := map[string]bool{}
	for _, k := range Keys() {
		known[k.Env] = true
		s, ok := lookup(k.Env)
		if !ok {
			continue
		}
		if err := setValue(v.FieldByIndex(k.Index), s); err != nil {
			return errorf("%s: %v", k.Env, err)
		}
	}
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if known[name] {
			continue
		}
		for _, p := range sectionPrefixes() {
			if strings.HasPrefix(name, p) {
				return errorf("%s: names no configuration key (the %s* keys: %s)", name, p, strings.Join(envUnder(p), ", "))
			}
		}
	}
	return nil
}

func envUnder(prefix string) []string {
	var out []string
	for _, k := range Keys() {
		if strings.HasPrefix(k.Env, prefix) {
			out = append(out, k.Env)
		}
	}
	return out
}

// setValue parses s into the field v.
func setValue(v reflect.Value, s string) error {
	switch v.Type() {
	case durationType:
		d, err := time.ParseDuration(strings.TrimSpace(s))
		if err != nil || d < 0 {
			return fmt.Errorf("invalid duration %q (want e.g. 30s, 5m)", s)
		}
		v.SetInt(int64(d))
		return nil
	case sizeType:
		n, err := ParseSize(s)
		if err != nil {
			return err
		}
		v.SetInt(int64(n))
		return nil
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(s)
		return nil
	case reflect.Bool:
		b, err := strconv.ParseBool(strings.TrimSpace(s))
		if err != nil {
			return fmt.Errorf("want true or false, got %q", s)
		}
		v.SetBool(b)
		return nil
	case reflect.Int, reflect.Int64, reflect.Int32:
		n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		if err != nil || v.OverflowInt(n) {
			return fmt.Errorf("want an integer, got %q", s)
		}
		v.SetInt(n)
		return nil
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		if err := setValue(p.Elem(), s); err != nil {
			return err
		}
		v.Set(p)
		return nil
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.String && !strings.HasPrefix(strings.TrimSpace(s), "[") {
			var items []string
			for _, it := range strings.Split(s, ",") {
				if it = strings.TrimSpace(it); it != "" {
					items = append(items, it)
				}
			}
			v.Set(reflect.ValueOf(items))
			return nil
		}
	}
	return setYAML(v, s)
}

// setYAML decodes a YAML value into v, with the file's checks.
func setYAML(v reflect.Value, s string) error {
	var node yaml.Node
	if err := yaml.Unmarshal([]byte(s), &node); err != nil {
		return fmt.Errorf("want a YAML value: %v", strings.TrimPrefix(err.Error(), "yaml: "))
	}
	if err := checkKnown(&node, v.Type(), ""); err != nil {
		return err
	}
	if err := checkIntegers(&node, v.Type(), ""); err != nil {
		return err
	}
	p := reflect.New(v.Type())
	if err := decodeStrict(s, p.Interface()); err != nil {
		return err
	}
	v.Set(p.Elem())
	return nil
}

func decodeStrict(s string, out any) error {
	dec := yaml.NewDecoder(strings.NewReader(s))
	dec.KnownFields(true)
	if err := dec.Decode(out); err != nil {
		return fmt.Errorf("%s", yamlError([]byte(s), err))
	}
	return nil
}

// checkIntegers walks a YAML document beside the type it decodes into and
// rejects a value that is not an integer where an integer is wanted (yaml
// would truncate 1.5 to 1). Other mismatches are left to the decoder.
func checkIntegers(n *yaml.Node, t reflect.Type, path string) error {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if n.Kind == yaml.DocumentNode {
		for _, c := range n.Content {
			if err := checkIntegers(c, t, path); err != nil {
				return err
			}
		}
		return nil
	}
	if t == durationType || t == sizeType {
		return nil
	}
	join := func(k string) string {
		if path == "" {
			return k
		}
		return path + "." + k
	}
	switch {
	case t.Kind() == reflect.Struct && n.Kind == yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i].Value
			if f, ok := fieldByTag(t, k); ok {
				if err := checkIntegers(n.Content[i+1], f.Type, join(k)); err != nil {
					return err
				}
			}
		}
	case t.Kind() == reflect.Map && n.Kind == yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			if err := checkIntegers(n.Content[i+1], t.Elem(), join(n.Content[i].Value)); err != nil {
				return err
			}
		}
	case t.Kind() == reflect.Slice && n.Kind == yaml.SequenceNode:
		for i, c := range n.Content {
			if err := checkIntegers(c, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	case isInt(t.Kind()) && n.Kind == yaml.ScalarNode && n.ShortTag() != "!!int":
		if path == "" {
			return fmt.Errorf("want an integer, got %q", n.Value)
		}
		return fmt.Errorf("%s: want an integer, got %q", path, n.Value)
	}
	return nil
}

// checkKnown walks a YAML document beside the type it decodes into and
// names every key that no struct field has, by its dotted path from the
// document's root. yaml's own message carries only the line and the
// field's name, which is ambiguous on a line holding a flow map
// ({hold: 1s, timeout: 10m}) or the same name at two depths.
func checkKnown(n *yaml.Node, t reflect.Type, path string) error {
	var unknown []string
	var walk func(n *yaml.Node, t reflect.Type, path string)
	walk = func(n *yaml.Node, t reflect.Type, path string) {
		for n.Kind == yaml.AliasNode && n.Alias != nil {
			n = n.Alias
		}
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if t == durationType || t == sizeType {
			return
		}
		join := func(k string) string {
			if path == "" {
				return k
			}
			return path + "." + k
		}
		switch {
		case n.Kind == yaml.DocumentNode:
			for _, c := range n.Content {
				walk(c, t, path)
			}
		case t.Kind() == reflect.Struct && n.Kind == yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				k := n.Content[i].Value
				f, ok := fieldByTag(t, k)
				if !ok {
					if n.Content[i].ShortTag() != "!!merge" {
						unknown = append(unknown, fmt.Sprintf("unknown key %q", join(k)))
					}
					continue
				}
				walk(n.Content[i+1], f.Type, join(k))
			}
		case t.Kind() == reflect.Map && n.Kind == yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				walk(n.Content[i+1], t.Elem(), join(n.Content[i].Value))
			}
		case t.Kind() == reflect.Slice && n.Kind == yaml.SequenceNode:
			for i, c := range n.Content {
				walk(c, t.Elem(), fmt.Sprintf("%s[%d]", path, i))
			}
		}
	}
	walk(n, t, path)
	if len(unknown) > 0 {
		return errors.New(strings.Join(unknown, "; "))
	}
	return nil
}

func isInt(k reflect.Kind) bool {
	return k == reflect.Int || k == reflect.Int64 || k == reflect.Int32 || k == reflect.Int16 || k == reflect.Int8
}

func fieldByTag(t reflect.Type, name string) (reflect.StructField, bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		if n, _, _ := strings.Cut(f.Tag.Get("yaml"), ","); n == name {
			return f, true
		}
	}
	return reflect.StructField{}, false
}
