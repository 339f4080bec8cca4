// Package tools is the demo tool pack that codemode serves by default:
// deterministic, safe and small tools for arithmetic, echoing, sleeping,
// failing, images, a per-session key-value store and a per-session virtual
// file workspace. Every example script and many tests use it.
package tools

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/aymanbagabas/go-udiff"

	"github.com/codemode/codemode/registry"
	"github.com/codemode/codemode/registry/frozen"
	"github.com/codemode/codemode/registry/schema"
)

// Pack is one instance of the demo tools with its own state.
type Pack struct {
	state *state
}

// New returns a pack with empty state and the default quotas.
func New() *Pack { return NewWithQuotas(DefaultQuotas()) }

// NewWithQuotas returns a pack with empty state bounded by q; a field left
// at zero takes its default, except IdleTTL (zero: state never expires).
func NewWithQuotas(q Quotas) *Pack { return &Pack{state: newState(q.withDefaults())} }

// Usage reports how many sessions hold demo state and how many bytes it
// takes in all.
func (p *Pack) Usage() (sessions int, bytes int64) { return p.state.usage() }

// Register adds every tool of the pack to a registry layer and returns a
// function that removes them all.
func (p *Pack) Register(reg *registry.Registry, scope string) (unregister func(), err error) {
	var uns []func()
	undo := func() {
		for _, u := range uns {
			u()
		}
	}
	for _, t := range p.Tools() {
		un, err := reg.Register(scope, t)
		if err != nil {
			undo()
			return nil, err
		}
		uns = append(uns, un)
	}
	return undo, nil
}

// Tools returns the pack's tool definitions.
func (p *Pack) Tools() []*registry.Tool {
	return []*registry.Tool{
		mathAdd, p.utilEcho(), utilSleep, utilFail, utilSwatch,
		p.kvSet(), p.kvGet(), p.filesWrite(), p.filesRead(), p.filesEdit(), p.filesList(),
	}
}

func closed(props map[string]*schema.Node, required ...string) *schema.Node {
	f := false
	return &schema.Node{Type: "object", Properties: props, Required: required, AdditionalProperties: &f}
}

func params(props map[string]*schema.Node, required ...string) *schema.Node {
	f := false
	return &schema.Node{Type: "object", Properties: props, Required: required, AdditionalProperties: &f}
}

func str(desc string) *schema.Node  { return &schema.Node{Type: "string", Description: desc} }
func num(desc string) *schema.Node  { return &schema.Node{Type: "number", Description: desc} }
func anyv(desc string) *schema.Node { return &schema.Node{Type: "json", Description: desc} }
func integer(desc string) *schema.Node {
	return &schema.Node{Type: "integer", Description: desc}
}

func always(frozen.Value) bool { return true }

// typed is an Execute that decodes its arguments into T, an invalid
// argument's error, before it runs.
func typed[T any](run func(context.Context, registry.Exec, T) (any, error)) func(context.Context, registry.Exec, frozen.Value) (any, error) {
	return func(ctx context.Context, exec registry.Exec, args frozen.Value) (any, error) {
		in, err := decode[T](args)
		if err != nil {
			return nil, err
		}
		return run(ctx, exec, in)
	}
}

func decode[T any](args frozen.Value) (T, error) {
	var v T
	if err := args.Unmarshal(&v); err != nil {
		return v, &registry.Error{Code: registry.CodeInvalidArgs, Message: err.Error()}
	}
	return v, nil
}

var mathAdd = registry.MustDefine(registry.Definition{
	Name:        "math_add",
	Description: "Adds two numbers and returns their sum.",
	Parameters:  params(map[string]*schema.Node{"a": num("The first addend."), "b": num("The second addend.")}, "a", "b"),
	Output:      closed(map[string]*schema.Node{"sum": num("a + b")}, "sum"),
	Behavior: registry.Behavior{
		Hints:             readOnly,
		IsConcurrencySafe: always,
		Execute: typed(func(_ context.Context, _ registry.Exec, in struct{ A, B float64 }) (any, error) {
			return map[string]any{"sum": in.A + in.B}, nil
		}),
	},
})

var utilSleep = registry.MustDefine(registry.Definition{
	Name:        "util_sleep",
	Description: "Waits for the given number of milliseconds (0 to 60000), then returns; stops at once when cancelled.",
	Parameters: params(map[string]*schema.Node{"ms": {Type: "integer", Description: "How long to wait, in milliseconds.",
		Minimum: ptr(0.0), Maximum: ptr(60000.0)}}, "ms"),
	Output: closed(map[string]*schema.Node{"slept_ms": integer("How long it waited.")}, "slept_ms"),
	Behavior: registry.Behavior{
		Hints:             readOnly,
		IsConcurrencySafe: always,
		Execute: typed(func(ctx context.Context, _ registry.Exec, in struct{ Ms int64 }) (any, error) {
			t := time.NewTimer(time.Duration(in.Ms) * time.Millisecond)
			defer t.Stop()
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-t.C:
				return map[string]any{"slept_ms": in.Ms}, nil
			}
		}),
	},
})

func ptr[T any](v T) *T { return &v }

// readOnly marks the tools that change nothing (their sub-calls need not
// wait for a durable dispatch-start before running).
var readOnly = registry.Hints{ReadOnly: true, OpenWorld: ptr(false)}

// overwrites marks kv_set and files_write (writing the same value again
// changes nothing more); edits marks files_edit.
var (
	overwrites = registry.Hints{Destructive: ptr(true), Idempotent: ptr(true), OpenWorld: ptr(false)}
	edits      = registry.Hints{Destructive: ptr(true), Idempotent: ptr(false), OpenWorld: ptr(false)}
)

var utilFail = registry.MustDefine(registry.Definition{
	Name:        "util_fail",
	Description: "Always fails with the given message (for trying out error handling).",
	Parameters:  params(map[string]*schema.Node{"message": str("The failure message.")}, "message"),
	Output:      closed(map[string]*schema.Node{}),
	Behavior: registry.Behavior{
		Hints: readOnly,
		Execute: typed(func(_ context.Context, _ registry.Exec, in struct{ Message string }) (any, error) {
			return nil, &registry.Error{Code: registry.CodeToolFailed, Message: in.Message}
		}),
	},
})

var utilSwatch = registry.MustDefine(registry.Definition{
	Name:        "util_swatch",
	Description: "Makes an 8x8 PNG swatch of a color; the image is in the content, the value describes it.",
	Parameters:  params(map[string]*schema.Node{"color": {Type: "string", Description: `A color as "#rrggbb".`, Pattern: `^#[0-9a-fA-F]{6}$`}}, "color"),
	Output: closed(map[string]*schema.Node{
		"mime":   {Type: "string", Enum: []any{"image/png"}},
		"width":  integer("Pixels."),
		"height": integer("Pixels."),
	}, "mime", "width", "height"),
	Behavior: registry.Behavior{
		Hints:             readOnly,
		IsConcurrencySafe: always,
		Execute: func(_ context.Context, _ registry.Exec, _ frozen.Value) (any, error) {
			return map[string]any{"mime": "image/png", "width": 8, "height": 8}, nil
		},
		Render: func(args, value frozen.Value) []registry.ContentBlock {
			in, _ := decode[struct{ Color string }](args)
			return []registry.ContentBlock{
				registry.Text(fmt.Sprintf("8x8 swatch of %s", in.Color)),
				registry.Image("image/png", swatchPNG(in.Color)),
			}
		},
	},
})

// swatchPNG renders an 8x8 PNG of a "#rrggbb" color as base64.
func swatchPNG(hex string) string {
	var c color.RGBA
	if v, err := strconv.ParseUint(strings.TrimPrefix(hex, "#"), 16, 32); err == nil {
		c = color.RGBA{R: uint8(v >> 16), G: uint8(v >> 8), B: uint8(v), A: 255}
	}
	img := image.NewRGBA(image.Rect(0, 0, 8, 8))
	for y := 0; y < 8; y++ {
		for x := 0; x < 8; x++ {
			img.Set(x, y, c)
		}
	}
	var buf bytes.Buffer
	_ = png.Encode(&buf, img)
	return base64.StdEncoding.EncodeToString(buf.Bytes())
}

// valueMember is the compact JSON of the "value" member of arguments
// already validated as an object with one, without decoding the rest.
func valueMember(args frozen.Value) (frozen.Value, error) {
	var in struct {
		Value json.RawMessage `json:"value"`
	}
	if err := args.Unmarshal(&in); err != nil {
		return frozen.Value{}, &registry.Error{Code: registry.CodeInvalidArgs, Message: err.Error()}
	}
	return frozen.Parse(in.Value)
}

func (p *Pack) utilEcho() *registry.Tool {
	return registry.MustDefine(registry.Definition{
		Name:        "util_echo",
		Description: "Returns the value it is given, unchanged.",
		Parameters:  params(map[string]*schema.Node{"value": anyv("Any JSON value.")}, "value"),
		Output:      closed(map[string]*schema.Node{"value": anyv("The same value.")}, "value"),
		Behavior: registry.Behavior{
			Hints:             readOnly,
			IsConcurrencySafe: always,
			Execute: func(_ context.Context, _ registry.Exec, args frozen.Value) (any, error) {
				// The arguments are compact {"value":…}: size the value before copying it.
				if err := p.state.checkValue("the echoed value", int64(args.Len()-len(`{"value":}`))); err != nil {
					return nil, err
				}
				v, err := valueMember(args)
				if err != nil {
					return nil, err
				}
				return map[string]any{"value": v}, nil
			},
		},
	})
}

func (p *Pack) kvSet() *registry.Tool {
	return registry.MustDefine(registry.Definition{
		Name:        "kv_set",
		Description: "Stores a JSON value under a key in this session's key-value store.",
		Parameters:  params(map[string]*schema.Node{"key": str("The key."), "value": anyv("Any JSON value.")}, "key", "value"),
		Output:      closed(map[string]*schema.Node{"ok": {Type: "boolean", Const: true, HasConst: true}}, "ok"),
		Behavior: registry.Behavior{
			Hints: overwrites,
			Execute: func(_ context.Context, exec registry.Exec, args frozen.Value) (any, error) {
				var in struct {
					Key   string          `json:"key"`
					Value json.RawMessage `json:"value"`
				}
				if err := args.Unmarshal(&in); err != nil {
					return nil, &registry.Error{Code: registry.CodeInvalidArgs, Message: err.Error()}
				}
				if err := checkKey("key", in.Key); err != nil {
					return nil, err
				}
				value, err := frozen.Parse(in.Value)
				if err != nil {
					return nil, err
				}
				s := p.state
				s.mu.Lock()
				defer s.mu.Unlock()
				w, err := s.reserveLocked(exec.SessionID(), false, in.Key, int64(value.Len()), "the value")
				if err != nil {
					return nil, err
				}
				s.commitLocked(w, false, in.Key, value.String())
				return map[string]any{"ok": true}, nil
			},
		},
	})
}

func (p *Pack) kvGet() *registry.Tool {
	return registry.MustDefine(registry.Definition{
		Name:        "kv_get",
		Description: "Reads the value stored under a key in this session's key-value store.",
		Parameters:  params(map[string]*schema.Node{"key": str("The key.")}, "key"),
		Output: closed(map[string]*schema.Node{
			"found": {Type: "boolean", Description: "Whether the key exists."},
			"value": anyv("The stored value, when found."),
		}, "found"),
		Behavior: registry.Behavior{
			Hints:             readOnly,
			IsConcurrencySafe: always,
			Execute: typed(func(_ context.Context, exec registry.Exec, in struct{ Key string }) (any, error) {
				raw, ok := p.entry(exec.SessionID(), false, in.Key)
				if !ok {
					return map[string]any{"found": false}, nil
				}
				v, err := frozen.ParseString(raw)
				if err != nil {
					return nil, err
				}
				return map[string]any{"found": true, "value": v}, nil
			}),
		},
	})
}

// entry reads one kv value or file of a session; reading creates no state.
func (p *Pack) entry(session string, files bool, key string) (string, bool) {
	s := p.state
	s.mu.Lock()
	defer s.mu.Unlock()
	w := s.lookupLocked(session)
	if w == nil {
		return "", false
	}
	v, ok := w.entries(files)[key]
	return v, ok
}

func (p *Pack) filesWrite() *registry.Tool {
	return registry.MustDefine(registry.Definition{
		Name:        "files_write",
		Description: "Writes a text file in this session's virtual workspace, replacing any file at that path.",
		Parameters:  params(map[string]*schema.Node{"path": str("The file path."), "content": str("The whole file content.")}, "path", "content"),
		Output:      closed(map[string]*schema.Node{"path": str(""), "bytes": integer("Bytes written.")}, "path", "bytes"),
		Behavior: registry.Behavior{
			Hints: overwrites,
			Execute: typed(func(_ context.Context, exec registry.Exec, in struct{ Path, Content string }) (any, error) {
				if err := checkKey("path", in.Path); err != nil {
					return nil, err
				}
				s := p.state
				s.mu.Lock()
				defer s.mu.Unlock()
				w, err := s.reserveLocked(exec.SessionID(), true, in.Path, int64(len(in.Content)), "the file")
				if err != nil {
					return nil, err
				}
				s.commitLocked(w, true, in.Path, in.Content)
				return map[string]any{"path": in.Path, "bytes": len(in.Content)}, nil
			}),
		},
	})
}

func (p *Pack) readFile(session, path string) (string, error) {
	content, ok := p.entry(session, true, path)
	if !ok {
		return "", &registry.Error{Code: registry.CodeToolFailed, Message: fmt.Sprintf("no such file: %s", path)}
	}
	return content, nil
}

func countLines(s string) int {
	if s == "" {
		return 0
	}
	n := strings.Count(s, "\n")
	if !strings.HasSuffix(s, "\n") {
		n++
	}
	return n
}

func (p *Pack) filesRead() *registry.Tool {
	return registry.MustDefine(registry.Definition{
		Name:        "files_read",
		Description: "Reads a text file from this session's virtual workspace.",
		Parameters:  params(map[string]*schema.Node{"path": str("The file path.")}, "path"),
		Output:      closed(map[string]*schema.Node{"path": str(""), "content": str(""), "lines": integer("Number of lines.")}, "path", "content", "lines"),
		Behavior: registry.Behavior{
			Hints:             readOnly,
			IsConcurrencySafe: always,
			Execute: typed(func(_ context.Context, exec registry.Exec, in struct{ Path string }) (any, error) {
				content, err := p.readFile(exec.SessionID(), in.Path)
				if err != nil {
					return nil, err
				}
				return map[string]any{"path": in.Path, "content": content, "lines": countLines(content)}, nil
			}),
		},
	})
}

// editedSize is the length of strings.ReplaceAll(content, old, new) when old
// occurs n times, computed without building it.
func editedSize(content, old, new string, n int) int64 {
	return int64(len(content)) + int64(n)*(int64(len(new))-int64(len(old)))
}

func (p *Pack) filesEdit() *registry.Tool {
	type editArgs struct{ Path, Old, New string }
	return registry.MustDefine(registry.Definition{
		Name:        "files_edit",
		Description: "Replaces every occurrence of old with new in a file of this session's workspace; fails when old does not occur.",
		Parameters: params(map[string]*schema.Node{
			"path": str("The file path."), "old": str("The exact text to replace (non-empty)."), "new": str("The replacement text."),
		}, "path", "old", "new"),
		Output: closed(map[string]*schema.Node{"path": str(""), "replaced": integer("How many occurrences were replaced.")}, "path", "replaced"),
		Behavior: registry.Behavior{
			Hints: edits,
			Execute: typed(func(_ context.Context, exec registry.Exec, in editArgs) (any, error) {
				if in.Old == "" {
					return nil, &registry.Error{Code: registry.CodeInvalidArgs, Message: "old must not be empty"}
				}
				s := p.state
				s.mu.Lock()
				defer s.mu.Unlock()
				var content string
				ok := false
				if w := s.lookupLocked(exec.SessionID()); w != nil {
					content, ok = w.files[in.Path]
				}
				if !ok {
					return nil, &registry.Error{Code: registry.CodeToolFailed, Message: fmt.Sprintf("no such file: %s", in.Path)}
				}
				n := strings.Count(content, in.Old)
				if n == 0 {
					return nil, &registry.Error{Code: registry.CodeToolFailed, Message: fmt.Sprintf("%s does not occur in %s", quoteShort(in.Old), in.Path)}
				}
				// Size the result before building it: ReplaceAll of a large file
				// with a large new text would ask for n times its length.
				w, err := s.reserveLocked(exec.SessionID(), true, in.Path, editedSize(content, in.Old, in.New, n), "the edited file")
				if err != nil {
					return nil, err
				}
				s.commitLocked(w, true, in.Path, strings.ReplaceAll(content, in.Old, in.New))
				return map[string]any{"path": in.Path, "replaced": n}, nil
			}),
			PresentationMeta: func(args, _ frozen.Value) (any, error) {
				in, err := decode[editArgs](args)
				if err != nil {
					return nil, err
				}
				if size := len(in.Old) + len(in.New); size > maxDiffBytes {
					return map[string]any{"kind": "diff", "path": in.Path,
						"diff_omitted": fmt.Sprintf("old and new are %d bytes together; diffs are shown up to %d", size, maxDiffBytes)}, nil
				}
				return map[string]any{"kind": "diff", "path": in.Path, "diff": EditDiff(in.Path, in.Old, in.New)}, nil
			},
		},
	})
}

// quoteShort quotes s for an error message, cut to a few hundred bytes.
func quoteShort(s string) string {
	const max = 200
	if len(s) <= max {
		return strconv.Quote(s)
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return strconv.Quote(s[:cut]) + fmt.Sprintf("… (%d bytes)", len(s))
}

// EditDiff is the unified diff that files_edit's presentationMeta carries:
// the change from old to new, computed from the arguments alone so that it
// can be rendered again from the log.
func EditDiff(path, old, new string) string {
	return udiff.Unified("a/"+path, "b/"+path, withNewline(old), withNewline(new))
}

func withNewline(s string) string {
	if s != "" && !strings.HasSuffix(s, "\n") {
		return s + "\n"
	}
	return s
}

func (p *Pack) filesList() *registry.Tool {
	return registry.MustDefine(registry.Definition{
		Name:        "files_list",
		Description: "Lists the paths in this session's virtual workspace, optionally only those starting with a prefix.",
		Parameters:  params(map[string]*schema.Node{"prefix": str("Only paths starting with this.")}),
		Output:      closed(map[string]*schema.Node{"paths": {Type: "array", Items: str("")}}, "paths"),
		Behavior: registry.Behavior{
			Hints:             readOnly,
			IsConcurrencySafe: always,
			Execute: typed(func(_ context.Context, exec registry.Exec, in struct{ Prefix string }) (any, error) {
				// At most max_entries paths of at most MaxKeyBytes each.
				paths := []string{}
				s := p.state
				s.mu.Lock()
				if w := s.lookupLocked(exec.SessionID()); w != nil {
					for path := range w.files {
						if strings.HasPrefix(path, in.Prefix) {
							paths = append(paths, path)
						}
					}
				}
				s.mu.Unlock()
				sort.Strings(paths)
				return map[string]any{"paths": paths}, nil
			}),
		},
	})
}
