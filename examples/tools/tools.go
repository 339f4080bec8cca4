// Package tools is the demo tool pack that codemode serves by default:
// deterministic, safe and small tools for arithmetic, echoing, sleeping,
// failing, images, a per-session key-value store and a per-session virtual
// file workspace. Every example script and many tests use it.
package tools

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aymanbagabas/go-udiff"

	"github.com/codemode/codemode/registry"
	"github.com/codemode/codemode/registry/frozen"
	"github.com/codemode/codemode/registry/schema"
)

// Limits of the per-session state, so that no client can grow the process
// without bound.
const (
	MaxWorkspaces     = 10_000  // sessions with state; least recently used are dropped
	MaxEntries        = 1_000   // keys, and files, per session
	MaxValueBytes     = 1 << 20 // one kv value or file
	MaxWorkspaceBytes = 8 << 20 // all kv values and files of one session
)

// Pack is one instance of the demo tools with its own state.
type Pack struct {
	mu         sync.Mutex
	workspaces map[string]*workspace // by session id; guarded by mu
	clock      uint64                // guarded by mu
}

type workspace struct {
	kv    map[string]string // key -> compact JSON
	files map[string]string
	bytes int
	used  uint64
}

// New returns a pack with empty state.
func New() *Pack { return &Pack{workspaces: map[string]*workspace{}} }

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
		mathAdd, utilEcho, utilSleep, utilFail, utilSwatch,
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
		Execute: func(_ context.Context, _ registry.Exec, args frozen.Value) (any, error) {
			in, err := decode[struct{ A, B float64 }](args)
			if err != nil {
				return nil, err
			}
			return map[string]any{"sum": in.A + in.B}, nil
		},
	},
})

var utilEcho = registry.MustDefine(registry.Definition{
	Name:        "util_echo",
	Description: "Returns the value it is given, unchanged.",
	Parameters:  params(map[string]*schema.Node{"value": anyv("Any JSON value.")}, "value"),
	Output:      closed(map[string]*schema.Node{"value": anyv("The same value.")}, "value"),
	Behavior: registry.Behavior{
		Hints:             readOnly,
		IsConcurrencySafe: always,
		Execute: func(_ context.Context, _ registry.Exec, args frozen.Value) (any, error) {
			tree, err := args.Decode()
			if err != nil {
				return nil, err
			}
			return map[string]any{"value": tree.(map[string]any)["value"]}, nil
		},
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
		Execute: func(ctx context.Context, _ registry.Exec, args frozen.Value) (any, error) {
			in, err := decode[struct{ Ms int64 }](args)
			if err != nil {
				return nil, err
			}
			t := time.NewTimer(time.Duration(in.Ms) * time.Millisecond)
			defer t.Stop()
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-t.C:
				return map[string]any{"slept_ms": in.Ms}, nil
			}
		},
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
		Execute: func(_ context.Context, _ registry.Exec, args frozen.Value) (any, error) {
			in, err := decode[struct{ Message string }](args)
			if err != nil {
				return nil, err
			}
			return nil, &registry.Error{Code: registry.CodeToolFailed, Message: in.Message}
		},
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

// workspace returns the state of one session, creating it (and evicting the
// least recently used beyond MaxWorkspaces). Callers hold p.mu.
func (p *Pack) workspaceLocked(session string) *workspace {
	p.clock++
	w := p.workspaces[session]
	if w == nil {
		if len(p.workspaces) >= MaxWorkspaces {
			var oldest string
			var oldestUse uint64 = ^uint64(0)
			for id, w := range p.workspaces {
				if w.used < oldestUse {
					oldest, oldestUse = id, w.used
				}
			}
			delete(p.workspaces, oldest)
		}
		w = &workspace{kv: map[string]string{}, files: map[string]string{}}
		p.workspaces[session] = w
	}
	w.used = p.clock
	return w
}

// put stores into m under the workspace's limits.
func (w *workspace) put(m map[string]string, key, value, what string) error {
	if len(value) > MaxValueBytes {
		return &registry.Error{Code: registry.CodeToolFailed, Message: fmt.Sprintf("%s is %d bytes; the limit is %d", what, len(value), MaxValueBytes)}
	}
	old, exists := m[key]
	if !exists && len(m) >= MaxEntries {
		return &registry.Error{Code: registry.CodeToolFailed, Message: fmt.Sprintf("this session already holds %d entries; the limit is %d", len(m), MaxEntries)}
	}
	grow := len(value) + len(key) - len(old)
	if exists {
		grow -= len(key)
	}
	if w.bytes+grow > MaxWorkspaceBytes {
		return &registry.Error{Code: registry.CodeToolFailed, Message: fmt.Sprintf("this session's storage is full (%d bytes)", MaxWorkspaceBytes)}
	}
	m[key] = value
	w.bytes += grow
	return nil
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
				tree, err := args.Decode()
				if err != nil {
					return nil, err
				}
				m := tree.(map[string]any)
				value, err := frozen.Snapshot(m["value"])
				if err != nil {
					return nil, err
				}
				p.mu.Lock()
				defer p.mu.Unlock()
				w := p.workspaceLocked(exec.SessionID())
				if err := w.put(w.kv, m["key"].(string), value.String(), "the value"); err != nil {
					return nil, err
				}
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
			Execute: func(_ context.Context, exec registry.Exec, args frozen.Value) (any, error) {
				in, err := decode[struct{ Key string }](args)
				if err != nil {
					return nil, err
				}
				p.mu.Lock()
				raw, ok := p.workspaceLocked(exec.SessionID()).kv[in.Key]
				p.mu.Unlock()
				if !ok {
					return map[string]any{"found": false}, nil
				}
				v, err := frozen.ParseString(raw)
				if err != nil {
					return nil, err
				}
				return map[string]any{"found": true, "value": v}, nil
			},
		},
	})
}

func (p *Pack) filesWrite() *registry.Tool {
	return registry.MustDefine(registry.Definition{
		Name:        "files_write",
		Description: "Writes a text file in this session's virtual workspace, replacing any file at that path.",
		Parameters:  params(map[string]*schema.Node{"path": str("The file path."), "content": str("The whole file content.")}, "path", "content"),
		Output:      closed(map[string]*schema.Node{"path": str(""), "bytes": integer("Bytes written.")}, "path", "bytes"),
		Behavior: registry.Behavior{
			Hints: overwrites,
			Execute: func(_ context.Context, exec registry.Exec, args frozen.Value) (any, error) {
				in, err := decode[struct{ Path, Content string }](args)
				if err != nil {
					return nil, err
				}
				if in.Path == "" {
					return nil, &registry.Error{Code: registry.CodeInvalidArgs, Message: "path must not be empty"}
				}
				p.mu.Lock()
				defer p.mu.Unlock()
				w := p.workspaceLocked(exec.SessionID())
				if err := w.put(w.files, in.Path, in.Content, "the file"); err != nil {
					return nil, err
				}
				return map[string]any{"path": in.Path, "bytes": len(in.Content)}, nil
			},
		},
	})
}

func (p *Pack) readFile(session, path string) (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	content, ok := p.workspaceLocked(session).files[path]
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
			Execute: func(_ context.Context, exec registry.Exec, args frozen.Value) (any, error) {
				in, err := decode[struct{ Path string }](args)
				if err != nil {
					return nil, err
				}
				content, err := p.readFile(exec.SessionID(), in.Path)
				if err != nil {
					return nil, err
				}
				return map[string]any{"path": in.Path, "content": content, "lines": countLines(content)}, nil
			},
		},
	})
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
			Execute: func(_ context.Context, exec registry.Exec, args frozen.Value) (any, error) {
				in, err := decode[editArgs](args)
				if err != nil {
					return nil, err
				}
				if in.Old == "" {
					return nil, &registry.Error{Code: registry.CodeInvalidArgs, Message: "old must not be empty"}
				}
				p.mu.Lock()
				defer p.mu.Unlock()
				w := p.workspaceLocked(exec.SessionID())
				content, ok := w.files[in.Path]
				if !ok {
					return nil, &registry.Error{Code: registry.CodeToolFailed, Message: fmt.Sprintf("no such file: %s", in.Path)}
				}
				n := strings.Count(content, in.Old)
				if n == 0 {
					return nil, &registry.Error{Code: registry.CodeToolFailed, Message: fmt.Sprintf("%q does not occur in %s", in.Old, in.Path)}
				}
				updated := strings.ReplaceAll(content, in.Old, in.New)
				if err := w.put(w.files, in.Path, updated, "the edited file"); err != nil {
					return nil, err
				}
				return map[string]any{"path": in.Path, "replaced": n}, nil
			},
			PresentationMeta: func(args, _ frozen.Value) (any, error) {
				in, err := decode[editArgs](args)
				if err != nil {
					return nil, err
				}
				return map[string]any{"kind": "diff", "path": in.Path, "diff": EditDiff(in.Path, in.Old, in.New)}, nil
			},
		},
	})
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
			Execute: func(_ context.Context, exec registry.Exec, args frozen.Value) (any, error) {
				in, err := decode[struct{ Prefix string }](args)
				if err != nil {
					return nil, err
				}
				p.mu.Lock()
				paths := []string{}
				for path := range p.workspaceLocked(exec.SessionID()).files {
					if strings.HasPrefix(path, in.Prefix) {
						paths = append(paths, path)
					}
				}
				p.mu.Unlock()
				sort.Strings(paths)
				return map[string]any{"paths": paths}, nil
			},
		},
	})
}
