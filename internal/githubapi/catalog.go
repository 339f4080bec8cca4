package githubapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/codemode/codemode/openapi"
)

// Tool is one operation of a GitHub description as a tool definition.
type Tool struct {
	Name        string
	Description string
	Parameters  json.RawMessage // the input JSON Schema
	Output      json.RawMessage // the 2xx JSON result's schema; nil when none
}

// ErrMissing is wrapped by the loaders' error when a file they need is not
// there: the npm peer is not installed, or the module root cannot be found.
var ErrMissing = errors.New("GitHub's REST description is not installed (run .ci/node-deps)")

// The descriptions, relative to the module root.
const (
	generated = "catalog/testdata/github/node_modules/@octokit/openapi/generated"
	dotcom    = generated + "/api.github.com.json"
	ghes      = generated + "/ghes-3.19.json" // the newest GHES the peer ships
	ghec      = generated + "/ghec.json"
)

// Tools returns api.github.com's operations as tools, sorted by name, the
// first n of them (all when n <= 0). Names are the operation names of
// package openapi (pulls/list is pulls_list).
func Tools(n int) ([]Tool, error) {
	tools, err := load(dotcom)
	if err != nil {
		return nil, err
	}
	return first(tools, n), nil
}

// ToolsN returns a catalog of n tools (all when n <= 0). Up to the number of
// api.github.com operations it is Tools(n). Beyond that it is the catalog a
// client that connects to several GitHub servers sees, names qualified by
// server: every api.github.com tool as "github.<name>", then every GitHub
// Enterprise Server 3.19 tool as "ghes.<name>" (mostly the same operations
// again, the near-duplicates a large catalog has), then the GitHub
// Enterprise Cloud operations that api.github.com lacks as "ghec.<name>";
// each group sorted by name, the first n in all. It fails when n exceeds
// what the three hold.
func ToolsN(n int) ([]Tool, error) {
	com, err := load(dotcom)
	if err != nil {
		return nil, err
	}
	if n > 0 && n <= len(com) {
		return first(com, n), nil
	}
	server, err := load(ghes)
	if err != nil {
		return nil, err
	}
	cloud, err := load(ghec)
	if err != nil {
		return nil, err
	}
	onCom := make(map[string]bool, len(com))
	for _, t := range com {
		onCom[t.Name] = true
	}
	cloud = slices.DeleteFunc(slices.Clone(cloud), func(t Tool) bool { return onCom[t.Name] })
	all := slices.Concat(qualify("github.", com), qualify("ghes.", server), qualify("ghec.", cloud))
	if n > len(all) {
		return nil, fmt.Errorf("githubapi: %d tools asked, the descriptions hold %d", n, len(all))
	}
	return first(all, n), nil
}

func first(tools []Tool, n int) []Tool {
	if n <= 0 || n > len(tools) {
		n = len(tools)
	}
	return slices.Clone(tools[:n])
}

func qualify(prefix string, tools []Tool) []Tool {
	out := make([]Tool, len(tools))
	for i, t := range tools {
		t.Name = prefix + t.Name
		out[i] = t
	}
	return out
}

// cache holds each converted description: converting api.github.com takes
// a noticeable fraction of a second, and tests ask for it many times.
var cache sync.Map // file -> func() ([]Tool, error)

func load(file string) ([]Tool, error) {
	once, _ := cache.LoadOrStore(file, sync.OnceValues(func() ([]Tool, error) { return convert(file) }))
	return once.(func() ([]Tool, error))()
}

func convert(file string) ([]Tool, error) {
	path, err := fromRoot(file)
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("githubapi: %s: %w", file, ErrMissing)
	}
	if err != nil {
		return nil, fmt.Errorf("githubapi: %w", err)
	}
	doc, err := openapi.Parse(b)
	if err != nil {
		return nil, fmt.Errorf("githubapi: %s: %w", file, err)
	}
	ops, err := doc.Operations()
	if err != nil {
		return nil, fmt.Errorf("githubapi: %s: %w", file, err)
	}
	tools := make([]Tool, len(ops))
	for i, op := range ops {
		desc := op.Description
		if op.Deprecated {
			desc = "Deprecated: " + desc // as a server that knows it says it to its clients
		}
		tools[i] = Tool{Name: op.Name, Description: desc, Parameters: op.InputSchema, Output: op.OutputSchema}
	}
	slices.SortFunc(tools, func(a, b Tool) int { return strings.Compare(a.Name, b.Name) })
	return tools, nil
}

// fromRoot joins rel to the module root: the nearest directory, from the
// working directory up, that holds go.mod.
func fromRoot(rel string) (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("githubapi: %w", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, filepath.FromSlash(rel)), nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("githubapi: no go.mod above the working directory: %w", ErrMissing)
		}
		dir = parent
	}
}
