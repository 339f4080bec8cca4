package schema_test

import (
	"strings"
	"testing"
	"time"

	"github.com/codemode/codemode/registry/schema"
)

type transfer struct {
	To       string    `json:"to" jsonschema:"account id" schema:"minLength=3,pattern=^acct_[a-z0-9]+$"`
	Amount   int       `json:"amount" jsonschema:"cents" schema:"minimum=1,maximum=100000"`
	Currency string    `json:"currency" schema:"enum=EUR|USD"`
	Memo     *string   `json:"memo,omitempty"`
	Tags     []string  `json:"tags,omitempty" schema:"maxItems=3,enum=rent|food"`
	When     time.Time `json:"when,omitzero"`
	Meta     struct {
		Urgent bool `json:"urgent"`
	} `json:"meta"`
	Extra  any    `json:"extra,omitempty"`
	hidden string //nolint:unused
	Skip   string `json:"-"`
}

type receipt struct {
	ID    string            `json:"id"`
	Fees  []int             `json:"fees"`
	Notes map[string]string `json:"notes,omitempty"`
	Prev  *receipt2         `json:"prev"`
}

type receipt2 struct {
	ID string `json:"id"`
}

func TestForInfersClosedSchemasWithTags(t *testing.T) {
	tests := []struct {
		name string
		got  func(schema.Kind) (*schema.Node, error)
		kind schema.Kind
		want string
	}{
		{"parameters", schema.For[transfer], schema.Parameters,
			`{"type":"object","properties":{"amount":{"type":"integer","description":"cents","minimum":1,"maximum":100000},"currency":{"type":"string","enum":["EUR","USD"]},"extra":{},"memo":{"type":"string"},"meta":{"type":"object","properties":{"urgent":{"type":"boolean"}},"required":["urgent"],"additionalProperties":false},"tags":{"type":"array","items":{"type":"string","enum":["rent","food"]},"maxItems":3},"to":{"type":"string","description":"account id","minLength":3,"pattern":"^acct_[a-z0-9]+$"},"when":{"type":"string"}},"required":["to","amount","currency","meta"],"additionalProperties":false}`},
		{"output", schema.For[receipt], schema.Value,
			`{"type":"object","properties":{"fees":{"oneOf":[{"type":"null"},{"type":"array","items":{"type":"integer"}}]},"id":{"type":"string"},"notes":{"oneOf":[{"type":"null"},{"type":"object","additionalProperties":true}]},"prev":{"oneOf":[{"type":"null"},{"type":"object","properties":{"id":{"type":"string"}},"required":["id"],"additionalProperties":false}]}},"required":["id","fees","prev"],"additionalProperties":false}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n, err := tc.got(tc.kind)
			if err != nil {
				t.Fatal(err)
			}
			s, err := schema.Compile(n, tc.kind)
			if err != nil {
				t.Fatal(err)
			}
			if got := string(s.JSON()); got != tc.want {
				t.Errorf("schema\n got %s\nwant %s", got, tc.want)
			}
		})
	}
}

func TestForRejects(t *testing.T) {
	type badKeyword struct {
		A int `json:"a" schema:"min=1"`
	}
	type badEnum struct {
		A int `json:"a" schema:"enum=1|two"`
	}
	type withFunc struct {
		F func() `json:"f"`
	}
	tests := []struct {
		name string
		got  func(schema.Kind) (*schema.Node, error)
		want string
	}{
		{"unknown keyword", schema.For[badKeyword], `properties.a: schema tag: unknown keyword "min"`},
		{"enum of the wrong type", schema.For[badEnum], `properties.a: schema tag: enum value "two": not a number`},
		{"parameters not an object", schema.For[[]string], "must be a struct or a map with string keys, not array"},
		{"unsupported Go type", schema.For[withFunc], "unsupported"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.got(schema.Parameters)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}
