package schema

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
)

func TestCompileEveryRootKind(t *testing.T) {
	tests := []struct {
		name        string
		node        *Node
		valid, bad  string
		wantMessage string
	}{
		{"string", String("s"), `"x"`, `1`, "at root: expected string, got number 1"},
		{"number", Number("n"), `1.5`, `"1"`, "at root: expected number, got string"},
		{"integer", Integer("i"), `3`, `3.5`, "at root: expected integer, got number 3.5"},
		{"boolean", Boolean("b"), `true`, `null`, "at root: expected boolean, got null"},
		{"null", Null("z"), `null`, `false`, "at root: expected null, got boolean"},
		{"array", Array(nil, "a"), `[1,"x"]`, `{}`, "at root: expected array, got object"},
		{"object", Object(nil, nil, false), `{"k":1}`, `[]`, "at root: expected object, got array"},
		{"json", JSON("any"), `{"k":[1]}`, ``, ""},
		{"oneOf", OneOf(String(""), Integer("")), `"x"`, `true`, "at root: matches none of the 2 oneOf alternatives (0: expected string, got boolean; 1: expected integer, got boolean)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := mustCompile(t, tt.node, Value)
			if vs := s.Validate(decode(t, tt.valid)); vs != nil {
				t.Errorf("Validate(%s) = %v, want valid", tt.valid, vs)
			}
			if tt.bad == "" {
				return
			}
			if got := Format(s.Validate(decode(t, tt.bad))); got != tt.wantMessage {
				t.Errorf("Validate(%s) = %q, want %q", tt.bad, got, tt.wantMessage)
			}
		})
	}
}

func TestParametersRootMustBeObject(t *testing.T) {
	for _, n := range []*Node{String(""), Array(nil, ""), JSON(""), OneOf(Object(nil, nil, true), Null(""))} {
		_, err := Compile(n, Parameters)
		var e *Error
		if !errors.As(err, &e) || e.Path != "" || !strings.Contains(e.Message, "parameters must be an object schema") {
			t.Errorf("Compile(%s root, Parameters) = %v, want root error", n.effectiveType(), err)
		}
	}
	// An omitted type with properties is an object.
	s := mustCompile(t, &Node{Properties: map[string]*Node{"a": String("")}}, Parameters)
	if got, want := string(s.JSON()), `{"type":"object","properties":{"a":{"type":"string"}}}`; got != want {
		t.Errorf("JSON() = %s, want %s", got, want)
	}
}

func TestParameterRootStaysOpen(t *testing.T) {
	s := mustCompile(t, Params(map[string]*Node{"a": String("")}, "a"), Parameters)
	if strings.Contains(string(s.JSON()), "additionalProperties") {
		t.Errorf("open root renders additionalProperties: %s", s.JSON())
	}
	if vs := s.Validate(decode(t, `{"a":"x","extra":[1,2],"more":{"deep":true}}`)); vs != nil {
		t.Errorf("extra keys on the open root: %v", vs)
	}
	closed := Params(map[string]*Node{"a": String("")}, "a")
	closed.AdditionalProperties = ptr(false)
	s = mustCompile(t, closed, Parameters)
	want := []string{`at /extra: unexpected property "extra" (allowed: "a")`}
	if got := messages(s.Validate(decode(t, `{"a":"x","extra":1}`))); !slices.Equal(got, want) {
		t.Errorf("closed root: got %q, want %q", got, want)
	}
}

func TestExplicitObjectsKeepTheirOpenness(t *testing.T) {
	s := mustCompile(t, Params(map[string]*Node{
		"open":   Object(map[string]*Node{"x": Integer("")}, nil, false),
		"closed": Object(map[string]*Node{"x": Integer("")}, nil, true),
		"empty":  Object(nil, nil, true),
	}), Parameters)
	tests := []struct {
		value string
		want  []string
	}{
		{`{"open":{"x":1,"y":"anything"}}`, nil},
		{`{"closed":{"x":1}}`, nil},
		{`{"closed":{"x":1,"y":2,"a/b":3}}`, []string{
			`at /closed/a~1b: unexpected property "a/b" (allowed: "x")`,
			`at /closed/y: unexpected property "y" (allowed: "x")`,
		}},
		{`{"empty":{}}`, nil},
		{`{"empty":{"k":null}}`, []string{`at /empty/k: unexpected property "k" (the object allows no properties)`}},
		{`{"empty":[]}`, []string{`at /empty: expected object, got array`}},
	}
	for _, tt := range tests {
		if got := messages(s.Validate(decode(t, tt.value))); !slices.Equal(got, tt.want) {
			t.Errorf("Validate(%s) = %q, want %q", tt.value, got, tt.want)
		}
	}
	json := string(s.JSON())
	for _, frag := range []string{
		`"open":{"type":"object","properties":{"x":{"type":"integer"}},"additionalProperties":true}`,
		`"closed":{"type":"object","properties":{"x":{"type":"integer"}},"additionalProperties":false}`,
		`"empty":{"type":"object","additionalProperties":false}`,
	} {
		if !strings.Contains(json, frag) {
			t.Errorf("JSON() = %s, missing %s", json, frag)
		}
	}
}

func TestValueRootObjectMustStateOpenness(t *testing.T) {
	_, err := Compile(&Node{Type: TypeObject}, Value)
	if err == nil || err.Error() != "(root): object must set additionalProperties to true or false" {
		t.Errorf("err = %v", err)
	}
	mustCompile(t, Object(nil, nil, false), Value)
}

func TestCompileRejects(t *testing.T) {
	self := Object(map[string]*Node{}, nil, true)
	self.Properties["self"] = self
	loopA := Array(nil, "")
	loopB := OneOf(loopA, Null(""))
	loopA.Items = loopB
	nested := func(n *Node) *Node { return Params(map[string]*Node{"a": n}) }

	tests := []struct {
		name string
		node *Node
		kind Kind
		want string // the whole error text
	}{
		{"nested object without additionalProperties", nested(&Node{Type: TypeObject}), Parameters,
			"properties.a: object must set additionalProperties to true or false"},
		{"object in oneOf without additionalProperties", nested(OneOf(Null(""), &Node{Properties: map[string]*Node{}})), Parameters,
			"properties.a.oneOf.1: object must set additionalProperties to true or false"},
		{"unknown type", nested(&Node{Type: "map"}), Parameters, `properties.a: unknown type "map"`},
		{"items on a string", nested(&Node{Type: TypeString, Items: String("")}), Parameters,
			`properties.a: keyword "items" does not apply to type "string"`},
		{"properties on an array", nested(&Node{Type: TypeArray, Properties: map[string]*Node{}}), Parameters,
			`properties.a: keyword "properties" does not apply to type "array"`},
		{"minLength on json", nested(JSON("").MinLen(1)), Parameters,
			`properties.a: keyword "minLength" does not apply to type "json"`},
		{"items without a type", nested(&Node{Items: String("")}), Parameters,
			`properties.a: keyword "items" requires "type": "array"`},
		{"enum on oneOf", nested(OneOf(String(""), Null("")).WithEnum("a")), Parameters,
			`properties.a: keyword "enum" cannot be combined with oneOf`},
		{"oneOf with one branch", nested(OneOf(String(""))), Parameters,
			"properties.a.oneOf: oneOf needs at least two alternatives, got 1"},
		{"oneOf with none", nested(&Node{Type: TypeOneOf}), Parameters,
			"properties.a.oneOf: oneOf needs at least two alternatives, got 0"},
		{"oneOf with a nil branch", nested(OneOf(String(""), nil)), Parameters, "properties.a.oneOf.1: schema is nil"},
		{"nil property", nested(nil), Parameters, "properties.a: schema is nil"},
		{"nil required property", Params(map[string]*Node{"a": nil}, "a"), Parameters, "properties.a: schema is nil"},
		{"nil root", nil, Value, "(root): schema is nil"},
		{"integer enum with 1.5", nested(Integer("").WithEnum(1, 1.5)), Parameters,
			"properties.a.enum.1: 1.5 is not of type integer"},
		{"string enum with a number", nested(String("").WithEnum("a", 2)), Parameters,
			"properties.a.enum.1: 2 is not of type string"},
		{"empty enum", nested(String("").WithEnum()), Parameters, "properties.a.enum: enum must list at least one value"},
		{"const null on a string", nested(String("").WithConst(nil)), Parameters, "properties.a.const: null is not of type string"},
		{"default of the wrong type", nested(Boolean("").WithDefault("yes")), Parameters,
			`properties.a.default: "yes" is not of type boolean`},
		{"enum value that is not JSON", nested(JSON("").WithEnum(map[string]any{"k": struct{}{}})), Parameters,
			"properties.a.enum.0.k: Go type struct {} is not a JSON value"},
		{"NaN const", nested(Number("").WithConst(math.NaN())), Parameters, "properties.a.const: NaN is not a JSON number"},
		{"required not declared on a closed object", nested(Object(map[string]*Node{"x": String("")}, []string{"x", "zz"}, true)), Parameters,
			`properties.a.required.1: required property "zz" is not declared in properties`},
		{"required not declared on an open object", nested(Object(nil, []string{"zz"}, false)), Parameters,
			`properties.a.required.0: required property "zz" is not declared in properties`},
		{"required not declared on the root", Params(nil, "q"), Parameters,
			`required.0: required property "q" is not declared in properties`},
		{"required twice", Params(map[string]*Node{"x": String("")}, "x", "x"), Parameters,
			`required.1: property "x" is listed twice`},
		{"cyclic properties", self, Value, "properties.self: schema contains itself (cyclic Node graph)"},
		{"cycle through items and oneOf", loopA, Value, "items.oneOf.0: schema contains itself (cyclic Node graph)"},
		{"invalid pattern", nested(String("").Match("a(")), Parameters,
			"properties.a.pattern: invalid pattern (Go RE2 syntax): error parsing regexp: missing closing ): `a(`"},
		{"lookahead pattern", nested(String("").Match("(?=a)")), Parameters,
			"properties.a.pattern: invalid pattern (Go RE2 syntax): error parsing regexp: invalid or unsupported Perl syntax: `(?=`"},
		{"negative minLength", nested(String("").MinLen(-1)), Parameters,
			"properties.a.minLength: minLength must be between 0 and 2147483647, got -1"},
		{"minItems above maxItems", nested(Array(nil, "").MinCount(3).MaxCount(2)), Parameters,
			"properties.a: minItems (3) is greater than maxItems (2)"},
		{"minimum above maximum", nested(Number("").Min(2).Max(1)), Parameters,
			"properties.a: minimum (2) and maximum (1) leave no allowed number"},
		{"equal exclusive bounds", nested(&Node{Type: TypeInteger, Minimum: ptr(1.0), ExclusiveMaximum: ptr(1.0)}), Parameters,
			"properties.a: minimum (1) and exclusiveMaximum (1) leave no allowed number"},
		{"infinite bound", nested(Number("").Max(math.Inf(1))), Parameters, "properties.a.maximum: maximum must be a finite number"},
		{"property name not UTF-8", Params(map[string]*Node{"\xff": String("")}), Parameters,
			`properties: property name "\ufffd" is not valid UTF-8`},
		{"empty property name", Params(map[string]*Node{"": String("")}), Parameters,
			`properties: property names must not be empty`},
		{"description not UTF-8", nested(String("\xff")), Parameters, "properties.a.description: description is not valid UTF-8"},
		{"odd property names are quoted", Params(map[string]*Node{"a.b c": &Node{Type: "x"}}), Parameters,
			`properties."a.b c": unknown type "x"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Compile(tt.node, tt.kind)
			if err == nil {
				t.Fatalf("Compile succeeded: %s", s.JSON())
			}
			if err.Error() != tt.want {
				t.Errorf("error = %q\nwant    %q", err.Error(), tt.want)
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Errorf("error %T is not *Error", err)
			}
		})
	}
}

func TestCompileRejectsUnknownKind(t *testing.T) {
	if _, err := Compile(String(""), Kind(7)); err == nil {
		t.Error("Compile with Kind(7) succeeded")
	}
}

func TestSharedSubschemasAreNotCycles(t *testing.T) {
	addr := Object(map[string]*Node{"city": String("")}, []string{"city"}, true)
	s := mustCompile(t, Params(map[string]*Node{"home": addr, "work": addr, "past": Array(addr, "")}), Parameters)
	want := []string{`at /past/0: missing required property "city"`, `at /work/city: expected string, got number 1`}
	if got := messages(s.Validate(decode(t, `{"home":{"city":"x"},"work":{"city":1},"past":[{}]}`))); !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestNodeExpansionIsBounded(t *testing.T) {
	// 2^40 nodes when expanded: must fail fast, not hang.
	n := String("")
	for i := 0; i < 40; i++ {
		n = Object(map[string]*Node{"l": n, "r": n}, nil, true)
	}
	_, err := Compile(n, Value)
	if err == nil || !strings.Contains(err.Error(), "more than 100000 nodes") {
		t.Errorf("err = %v", err)
	}
}

func TestProtoAndConstructorAreOrdinaryNames(t *testing.T) {
	s := mustCompile(t, Params(map[string]*Node{
		"__proto__":   Object(map[string]*Node{"polluted": Boolean("")}, nil, true),
		"constructor": Integer(""),
		"prototype":   String(""),
	}, "__proto__"), Parameters)
	json := string(s.JSON())
	for _, name := range []string{`"__proto__":{`, `"constructor":{"type":"integer"}`, `"required":["__proto__"]`} {
		if !strings.Contains(json, name) {
			t.Errorf("JSON() = %s, missing %s", json, name)
		}
	}
	if vs := s.Validate(decode(t, `{"__proto__":{"polluted":true},"constructor":1,"prototype":"p"}`)); vs != nil {
		t.Errorf("valid value: %v", vs)
	}
	want := []string{
		`at /__proto__/x: unexpected property "x" (allowed: "polluted")`,
		`at /constructor: expected integer, got string`,
	}
	if got := messages(s.Validate(decode(t, `{"__proto__":{"x":1},"constructor":"c"}`))); !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	want = []string{`at root: missing required property "__proto__"`}
	if got := messages(s.Validate(decode(t, `{}`))); !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestCompileDoesNotRetainTheNode(t *testing.T) {
	props := map[string]*Node{"a": String("")}
	n := Params(props, "a")
	s := mustCompile(t, n, Parameters)
	before := string(s.JSON())
	props["a"].Type = TypeInteger
	props["b"] = Integer("")
	n.Required = append(n.Required, "b")
	if after := string(s.JSON()); after != before {
		t.Errorf("JSON changed after mutating the Node: %s", after)
	}
	if vs := s.Validate(decode(t, `{"a":"x"}`)); vs != nil {
		t.Errorf("validation changed after mutating the Node: %v", vs)
	}
}

func TestJSONIsAFreshCopy(t *testing.T) {
	s := mustCompile(t, Params(map[string]*Node{"a": String("")}), Parameters)
	b := s.JSON()
	want := string(b)
	for i := range b {
		b[i] = 'x'
	}
	if got := string(s.JSON()); got != want {
		t.Errorf("JSON() after mutating a copy = %s", got)
	}
}

func TestEnumTypeInference(t *testing.T) {
	tests := []struct {
		values []any
		want   string
	}{
		{[]any{"a", "b"}, TypeString},
		{[]any{1, 2.0}, TypeInteger},
		{[]any{1, 2.5}, TypeNumber},
		{[]any{true}, TypeBoolean},
		{[]any{"a", 1}, TypeJSON},
		{[]any{nil}, TypeJSON},
		{nil, TypeJSON},
	}
	for _, tt := range tests {
		if got := Enum(tt.values...).Type; got != tt.want {
			t.Errorf("Enum(%v).Type = %q, want %q", tt.values, got, tt.want)
		}
	}
	s := mustCompile(t, Enum("red", "green"), Value)
	if got, want := Format(s.Validate("blue")), `at root: must be one of "red", "green"`; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
