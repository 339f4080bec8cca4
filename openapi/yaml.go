package openapi

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strconv"

	"go.yaml.in/yaml/v3"

	"github.com/codemode/codemode/internal/jsontext"
)

// isJSON reports whether doc looks like JSON (its first non-space byte
// opens an object or array); anything else is read as YAML.
func isJSON(doc []byte) bool {
	t := bytes.TrimLeft(doc, " \t\r\n\ufeff")
	return len(t) > 0 && (t[0] == '{' || t[0] == '[')
}

// maxYAMLGrowth bounds the JSON a YAML document may become, as a multiple
// of its own size: aliases can repeat a node many times ("billion laughs").
const maxYAMLGrowth = 8

// yamlToJSON converts a YAML document to JSON, keeping the order of mapping
// keys (the order of paths names operations). Mapping keys must be strings
// (YAML's integer-looking keys such as response codes are written as the
// text they were); anchors and aliases are expanded, the output bounded
// by maxYAMLGrowth times the input.
func yamlToJSON(doc []byte) ([]byte, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(doc, &root); err != nil {
		return nil, fmt.Errorf("openapi: decode YAML document: %w", err)
	}
	if root.Kind != yaml.DocumentNode || len(root.Content) != 1 {
		return nil, errorAt("", "document is empty")
	}
	c := converter{limit: max(len(doc)*maxYAMLGrowth, 1<<20)}
	if err := c.node(root.Content[0], 0); err != nil {
		return nil, err
	}
	return c.out.Bytes(), nil
}

type converter struct {
	out   bytes.Buffer
	limit int
}

var errYAMLTooLarge = errors.New("openapi: the YAML document expands (through aliases) past its bound")

// maxYAMLDepth bounds nesting, aliases included.
const maxYAMLDepth = 512

func (c *converter) node(n *yaml.Node, depth int) error {
	if depth > maxYAMLDepth {
		return fmt.Errorf("openapi: YAML nested deeper than %d (line %d)", maxYAMLDepth, n.Line)
	}
	if c.out.Len() > c.limit {
		return errYAMLTooLarge
	}
	switch n.Kind {
	case yaml.AliasNode:
		return c.node(n.Alias, depth+1)
	case yaml.MappingNode:
		c.out.WriteByte('{')
		seen := map[string]bool{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Kind == yaml.AliasNode {
				k = k.Alias
			}
			if k.Kind != yaml.ScalarNode {
				return fmt.Errorf("openapi: YAML line %d: a mapping key is not a scalar", k.Line)
			}
			if k.Tag == "!!merge" { // "<<: *base" merges are not OpenAPI
				return fmt.Errorf("openapi: YAML line %d: merge keys (<<) are not supported", k.Line)
			}
			if seen[k.Value] {
				return fmt.Errorf("openapi: YAML line %d: duplicate key %q", k.Line, k.Value)
			}
			seen[k.Value] = true
			if i > 0 {
				c.out.WriteByte(',')
			}
			c.string(k.Value)
			c.out.WriteByte(':')
			if err := c.node(v, depth+1); err != nil {
				return err
			}
		}
		c.out.WriteByte('}')
	case yaml.SequenceNode:
		c.out.WriteByte('[')
		for i, v := range n.Content {
			if i > 0 {
				c.out.WriteByte(',')
			}
			if err := c.node(v, depth+1); err != nil {
				return err
			}
		}
		c.out.WriteByte(']')
	case yaml.ScalarNode:
		return c.scalar(n)
	default:
		return fmt.Errorf("openapi: YAML line %d: unexpected node", n.Line)
	}
	return nil
}

func (c *converter) scalar(n *yaml.Node) error {
	switch n.ShortTag() {
	case "!!null":
		c.out.WriteString("null")
	case "!!bool":
		var b bool
		if err := n.Decode(&b); err != nil {
			return fmt.Errorf("openapi: YAML line %d: %w", n.Line, err)
		}
		c.out.WriteString(strconv.FormatBool(b))
	case "!!int", "!!float":
		var f float64
		if err := n.Decode(&f); err != nil {
			return fmt.Errorf("openapi: YAML line %d: %w", n.Line, err)
		}
		if math.IsInf(f, 0) || math.IsNaN(f) {
			return fmt.Errorf("openapi: YAML line %d: %s is not a JSON number", n.Line, n.Value)
		}
		if i, err := strconv.ParseInt(n.Value, 10, 64); err == nil {
			c.out.WriteString(strconv.FormatInt(i, 10))
		} else {
			c.out.WriteString(strconv.FormatFloat(f, 'g', -1, 64))
		}
	default: // strings, timestamps and binary stay the text written
		c.string(n.Value)
	}
	return nil
}

func (c *converter) string(s string) {
	b, _ := jsontext.Marshal(s)
	c.out.Write(b)
}
