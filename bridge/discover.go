package bridge

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/codemode/codemode/catalog"
	"github.com/codemode/codemode/internal/bytesize"
	"github.com/codemode/codemode/registry"
	"github.com/codemode/codemode/sandbox"
)

type catalogKey struct{}

// Catalog is the searchable catalog of view v's SDK tools (what tools.$search and
// tools.$describe answer from), built once per view. A tool the scope's policies deny, or ask
// about, says so in its search summary.
func Catalog(v *registry.View) *catalog.Index {
	return v.Memo(catalogKey{}, func() any {
		return catalog.New(SDK(v), func(name string) string { return v.Note(name) })
	}).(*catalog.Index)
}

// discover answers a discovery call of the program (tools.$search, tools.$describe) from the
// run's view. It runs no tool and writes nothing to the log: the catalog is the view the
// program was shown.
func (r *run) discover(c sandbox.Call) sandbox.Settlement {
	value, err := discover(Catalog(r.view), c.Name, c.Args)
	if err != nil {
		code := string(registry.CodeInvalidArgs)
		if errors.Is(err, catalog.ErrUnknown) {
			code = string(registry.CodeUnknownTool)
		}
		return sandbox.Settlement{Err: &sandbox.CallError{ToolName: c.Name, Code: code, Message: err.Error()}}
	}
	if len(value) > r.maxValueBytes {
		return sandbox.Settlement{Err: &sandbox.CallError{ToolName: c.Name, Code: "LIMIT", Message: fmt.Sprintf(
			"the answer is %s, over the %s a program may receive from one call: ask for fewer tools at a time", bytesize.Approx(int64(len(value))), bytesize.Approx(int64(r.maxValueBytes)))}}
	}
	return sandbox.Settlement{Value: value}
}

// discover decodes a discovery call's arguments (a JSON array of the program's arguments) and
// answers it as JSON.
func discover(ix *catalog.Index, name string, args []byte) ([]byte, error) {
	var list []json.RawMessage
	if err := json.Unmarshal(args, &list); err != nil {
		return nil, fmt.Errorf("%s: the arguments are not a list: %w", name, err)
	}
	arg := func(i int) json.RawMessage {
		if i < len(list) && !bytes.Equal(list[i], []byte("null")) {
			return list[i]
		}
		return nil
	}
	switch name {
	case sandbox.SearchName:
		q, err := searchQuery(arg(0), arg(1))
		if err != nil {
			return nil, err
		}
		return marshalled(ix.Search(q))
	case sandbox.DescribeName:
		if len(list) > 1 {
			return nil, fmt.Errorf("%w: $describe takes one argument, a name or a list of names", catalog.ErrQuery)
		}
		names, err := describeNames(arg(0))
		if err != nil {
			return nil, err
		}
		return marshalled(ix.Describe(names))
	}
	return nil, fmt.Errorf("%w: %s is not a discovery call", catalog.ErrQuery, name)
}

// marshalled is a discovery call's answer as JSON, or its error.
func marshalled[T any](v T, err error) ([]byte, error) {
	if err != nil {
		return nil, err
	}
	return json.Marshal(v)
}

// searchQuery reads $search(query, {limit?, group?}).
func searchQuery(query, options json.RawMessage) (catalog.Query, error) {
	var q catalog.Query
	if query != nil {
		if err := json.Unmarshal(query, &q.Text); err != nil {
			return q, fmt.Errorf("%w: the query must be a string of plain words, like $search(\"list open pull requests\")", catalog.ErrQuery)
		}
	}
	if options == nil {
		return q, nil
	}
	var o map[string]json.RawMessage
	if err := json.Unmarshal(options, &o); err != nil || o == nil {
		return q, fmt.Errorf("%w: the options must be an object {limit?, group?}", catalog.ErrQuery)
	}
	for k, v := range o {
		switch k {
		case "limit":
			var f float64
			if err := json.Unmarshal(v, &f); err != nil || f != float64(int64(f)) || f < 1 {
				return q, fmt.Errorf("%w: limit must be a whole number from 1 to %d, got %s", catalog.ErrQuery, catalog.MaxLimit, clipJSON(v))
			}
			q.Limit = int(min(f, catalog.MaxLimit))
		case "group":
			if err := json.Unmarshal(v, &q.Group); err != nil {
				return q, fmt.Errorf("%w: group must be a string (a name prefix), got %s", catalog.ErrQuery, clipJSON(v))
			}
		default:
			return q, fmt.Errorf("%w: unknown option %q: $search takes {limit?, group?}", catalog.ErrQuery, k)
		}
	}
	return q, nil
}

// describeNames reads $describe(name | names[]).
func describeNames(arg json.RawMessage) ([]string, error) {
	var one string
	if json.Unmarshal(arg, &one) == nil {
		return []string{one}, nil
	}
	var many []string
	if err := json.Unmarshal(arg, &many); err != nil || arg == nil {
		return nil, fmt.Errorf("%w: $describe takes a tool name or a list of names, like $describe(\"math_add\")", catalog.ErrQuery)
	}
	return many, nil
}

func clipJSON(v json.RawMessage) string {
	if len(v) > 64 {
		return string(v[:64]) + "…"
	}
	return string(v)
}
