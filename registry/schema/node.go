package schema

// The type names a Node may carry.
const (
	TypeString  = "string"
	TypeNumber  = "number"
	TypeInteger = "integer"
	TypeBoolean = "boolean"
	TypeNull    = "null"
	TypeArray   = "array"
	TypeObject  = "object"
	TypeJSON    = "json"  // any JSON value; rendered as a schema without "type"
	TypeOneOf   = "oneOf" // exactly one of OneOf; rendered as a schema with only "oneOf"
)

// Node is the DSL as Go data. Build it with the constructors below (String,
// Object, Params, ...) or from JSON with Parse. Compile never retains a Node:
// changing one after compiling it affects nothing compiled.
//
// Type "" is inferred: "oneOf" when OneOf is set, "object" when Properties is
// set, otherwise "json". A keyword counts as set when its field is non-nil
// (non-empty for Pattern); setting one that does not apply to the type is an
// error at Compile.
type Node struct {
	Type        string
	Description string

	// Object keywords. AdditionalProperties must be set on every object
	// except the parameter root, which is open when it is nil.
	Properties           map[string]*Node
	Required             []string
	AdditionalProperties *bool

	// Array keywords. Items nil leaves the elements unchecked.
	Items              *Node
	MinItems, MaxItems *int

	// OneOf lists the alternatives of a oneOf node (at least two).
	OneOf []*Node

	// Enum and Const restrict the value; their values must have the node's
	// type. HasConst distinguishes "const null" from "no const" (a non-nil
	// Const counts as set either way).
	Enum     []any
	Const    any
	HasConst bool

	// Number and integer keywords.
	Minimum, Maximum, ExclusiveMinimum, ExclusiveMaximum *float64

	// String keywords. Pattern is Go RE2 syntax (what jsonschema/v5 runs),
	// unanchored like every JSON Schema pattern.
	MinLength, MaxLength *int
	Pattern              string

	// Default is documentation for the model only: it is type-checked and
	// rendered, never applied. HasDefault distinguishes "default null".
	Default    any
	HasDefault bool
}

// String returns a string schema.
func String(desc string) *Node { return &Node{Type: TypeString, Description: desc} }

// Number returns a number schema (any JSON number).
func Number(desc string) *Node { return &Node{Type: TypeNumber, Description: desc} }

// Integer returns an integer schema: a number with no fractional part (3.0
// counts, as in JSON Schema; so do integers beyond float64 precision).
func Integer(desc string) *Node { return &Node{Type: TypeInteger, Description: desc} }

// Boolean returns a boolean schema.
func Boolean(desc string) *Node { return &Node{Type: TypeBoolean, Description: desc} }

// Null returns a schema accepting only null.
func Null(desc string) *Node { return &Node{Type: TypeNull, Description: desc} }

// JSON returns a schema accepting any JSON value.
func JSON(desc string) *Node { return &Node{Type: TypeJSON, Description: desc} }

// Array returns an array schema; items nil leaves the elements unchecked.
func Array(items *Node, desc string) *Node {
	return &Node{Type: TypeArray, Items: items, Description: desc}
}

// Object returns an object schema with explicit openness: closed objects
// reject keys not in props, open ones accept them unchecked.
func Object(props map[string]*Node, required []string, closed bool) *Node {
	open := !closed
	return &Node{Type: TypeObject, Properties: props, Required: required, AdditionalProperties: &open}
}

// Params returns a parameter root: an object that stays open to extra keys
// (set AdditionalProperties to close it).
func Params(props map[string]*Node, required ...string) *Node {
	return &Node{Type: TypeObject, Properties: props, Required: required}
}

// OneOf returns a schema matching values that match exactly one of branches.
func OneOf(branches ...*Node) *Node { return &Node{Type: TypeOneOf, OneOf: branches} }

// Enum returns a schema accepting exactly the given values. Its type is
// inferred: string, boolean, integer or number when every value is one,
// otherwise json.
func Enum(values ...any) *Node {
	return &Node{Type: enumType(values), Enum: values}
}

func enumType(values []any) string {
	if len(values) == 0 {
		return TypeJSON
	}
	t := ""
	for _, v := range values {
		vt := ""
		switch v.(type) {
		case string:
			vt = TypeString
		case bool:
			vt = TypeBoolean
		default:
			if !isNumber(v) || numberProblem(v) != "" {
				return TypeJSON
			}
			vt = TypeNumber
			if isIntegral(v) {
				vt = TypeInteger
			}
		}
		switch {
		case t == "" || t == vt:
			t = vt
		case t == TypeInteger && vt == TypeNumber, t == TypeNumber && vt == TypeInteger:
			t = TypeNumber
		default:
			return TypeJSON
		}
	}
	return t
}

// The setters below modify n and return it, for chaining at construction:
// schema.Integer("timeout in ms").Min(0).Max(60000).

// Describe sets the description.
func (n *Node) Describe(desc string) *Node { n.Description = desc; return n }

// Min sets the inclusive minimum of a number or integer.
func (n *Node) Min(v float64) *Node { n.Minimum = &v; return n }

// Max sets the inclusive maximum of a number or integer.
func (n *Node) Max(v float64) *Node { n.Maximum = &v; return n }

// MinLen sets the minimum length of a string, in Unicode code points.
func (n *Node) MinLen(v int) *Node { n.MinLength = &v; return n }

// MaxLen sets the maximum length of a string, in Unicode code points.
func (n *Node) MaxLen(v int) *Node { n.MaxLength = &v; return n }

// Match sets the pattern a string must contain a match of (RE2 syntax).
func (n *Node) Match(pattern string) *Node { n.Pattern = pattern; return n }

// MinCount sets the minimum number of items of an array.
func (n *Node) MinCount(v int) *Node { n.MinItems = &v; return n }

// MaxCount sets the maximum number of items of an array.
func (n *Node) MaxCount(v int) *Node { n.MaxItems = &v; return n }

// WithEnum sets the allowed values (none at all is an error at Compile).
func (n *Node) WithEnum(values ...any) *Node { n.Enum = append([]any{}, values...); return n }

// WithConst sets the only allowed value (nil means null).
func (n *Node) WithConst(v any) *Node { n.Const, n.HasConst = v, true; return n }

// WithDefault documents a default (nil means null); it is never applied.
func (n *Node) WithDefault(v any) *Node { n.Default, n.HasDefault = v, true; return n }

// effectiveType resolves an omitted Type as documented on Node.
func (n *Node) effectiveType() string {
	switch {
	case n.Type != "":
		return n.Type
	case n.OneOf != nil:
		return TypeOneOf
	case n.Properties != nil:
		return TypeObject
	default:
		return TypeJSON
	}
}
