package mcp

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	goruntime "runtime"
	"runtime/debug"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/codemode/codemode/registry"
	"github.com/codemode/codemode/registry/frozen"
)

// This file turns an upstream's tools, resources and prompts into registry
// tools.
//
// Names. An upstream tool is registered as "<server>.<tool>". MCP tool
// names are 1-128 characters of A-Z a-z 0-9 _ - . and codemode's names
// follow the same rule, so that re-exported tools (native and both modes)
// are valid for every client: each run of other characters (a space, a
// slash, non-ASCII) becomes one "_", and a name over 128 characters is cut
// and ends in "_" and 8 hex digits of the SHA-256 of the upstream name.
// When two upstream tools map to one name, the one whose name needed no
// change (else the first in byte order) keeps it and each other ends in
// "_<8 hex digits>" likewise. Every change is listed in the upstream's state
// (renamed) and logged; calls use the upstream's own name.
//
// Resources and prompts. A server that declares resources contributes
// "<server>.resources_list", "<server>.resources_templates_list" and
// "<server>.resources_read"; one that declares prompts, "<server>.prompts_list"
// and "<server>.prompts_get". They are typed like any tool, read-only, and
// answer from the server at the time of the call.
//
// A tool that requires task-augmented calls (execution.taskSupport
// "required") is registered too, and called as a task (upstream_tasks.go).
//
// What is not registered is reported, never dropped silently (state
// rejected, and a log line): a tool listed twice, one the go-sdk excluded as
// invalid, one whose schema does not compile, one whose name the registry
// refuses.

// maxToolName is MCP's (and codemode's) longest tool name.
const maxToolName = 128

// The registry names of the resource and prompt tools, after "<server>.".
const (
	resourcesListTool     = "resources_list"
	resourceTemplatesTool = "resources_templates_list"
	resourcesReadTool     = "resources_read"
	promptsListTool       = "prompts_list"
	promptsGetTool        = "prompts_get"
)

func validToolRune(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.'
}

// toolName is the registry name of an upstream tool before collisions are
// resolved, and whether the upstream name had to change.
func toolName(server, tool string) (name string, changed bool) {
	var b strings.Builder
	lastBad := false
	for _, r := range tool {
		if validToolRune(r) {
			b.WriteRune(r)
			lastBad = false
			continue
		}
		changed = true
		if !lastBad {
			b.WriteByte('_')
		}
		lastBad = true
	}
	clean := b.String()
	if clean == "" {
		clean, changed = "tool", true
	}
	name = server + "." + clean
	if len(name) > maxToolName {
		name, changed = withSuffix(name, tool), true
	}
	return name, changed
}

// withSuffix makes name unique for the upstream tool original: it ends in
// "_" and 8 hex digits of original's SHA-256, cut to fit maxToolName.
func withSuffix(name, original string) string {
	sum := sha256.Sum256([]byte(original))
	suffix := "_" + hex.EncodeToString(sum[:4])
	if len(name)+len(suffix) > maxToolName {
		name = name[:maxToolName-len(suffix)]
	}
	return name + suffix
}

// plannedTool is an upstream tool and the name it is registered under.
type plannedTool struct {
	tool *sdk.Tool
	name string
}

// planNames names the listed tools, resolving collisions with each other
// and with reserved names (the resource and prompt tools).
func planNames(server string, tools []*sdk.Tool, reserved map[string]bool) (out []plannedTool, renamed []RenamedTool) {
	type cand struct {
		tool    *sdk.Tool
		name    string
		changed bool
	}
	byName := map[string][]cand{}
	for _, t := range tools {
		name, changed := toolName(server, t.Name)
		byName[name] = append(byName[name], cand{t, name, changed})
	}
	names := make([]string, 0, len(byName))
	for n := range byName {
		names = append(names, n)
	}
	sort.Strings(names)
	taken := map[string]bool{}
	for n := range reserved {
		taken[n] = true
	}
	for _, n := range names {
		cs := byName[n]
		sort.Slice(cs, func(i, j int) bool {
			if cs[i].changed != cs[j].changed {
				return !cs[i].changed
			}
			return cs[i].tool.Name < cs[j].tool.Name
		})
		for i, c := range cs {
			name, why := c.name, ""
			if c.changed {
				why = "not a valid MCP tool name"
			}
			if i > 0 || taken[name] {
				why = fmt.Sprintf("its name collides with another tool of the server (both map to %s)", c.name)
				if i == 0 {
					why = "its name collides with a tool codemode adds for the server's resources or prompts (" + c.name + ")"
				}
				name = withSuffix(c.name, c.tool.Name)
			}
			taken[name] = true
			out = append(out, plannedTool{tool: c.tool, name: name})
			if name != server+"."+c.tool.Name {
				renamed = append(renamed, RenamedTool{Tool: c.tool.Name, As: name, Why: why})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	sort.Slice(renamed, func(i, j int) bool { return renamed[i].Tool < renamed[j].Tool })
	return out, renamed
}

// fingerprint hashes what a definition is built from: equal fingerprints, equal definitions.
// A hash, not the text: kept for every registered tool, the text would double its memory.
func fingerprint(parts ...any) (string, error) {
	b, err := json.Marshal(parts)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return string(sum[:]), nil
}

// compileAll runs compile on every item, spread over the processors.
func compileAll[T any](items []T, compile func(T)) {
	workers := min(goruntime.GOMAXPROCS(0), len(items)/32+1)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w; i < len(items); i += workers {
				compile(items[i])
			}
		})
	}
	wg.Wait()
}

// isJSONObject reports whether b is a JSON object (as a raw listing's schema must be).
func isJSONObject(b []byte) bool {
	b = bytes.TrimSpace(b)
	return len(b) > 1 && b[0] == '{' && json.Valid(b)
}

// largeCatalog is the size of a tool list after whose registration the memory its decoding
// took is returned to the system at once.
const largeCatalog = 500

// refreshTools lists the server's tools and brings the registrations in
// line: new and changed tools are (re)registered, vanished ones removed,
// unchanged ones left alone. It returns how many tools the upstream now
// contributes. Tools it cannot register are reported in the state.
func (u *upstream) refreshTools(ctx context.Context, c *connection) (int, error) {
	u.takeRaw()
	var tools []*sdk.Tool
	var leftOut int
	var cut string
	if c.caps.Tools != nil {
		var err error
		if tools, leftOut, cut, err = u.listTools(ctx, c); err != nil {
			return 0, err
		}
	}
	raw := u.takeRaw()
	var rejected []RejectedTool
	seen := map[string]bool{}
	tasks := map[string]bool{}
	keep := tools[:0]
	for _, t := range tools {
		if seen[t.Name] {
			rejected = append(rejected, RejectedTool{Tool: t.Name, Reason: "listed more than once; the first listing is used"})
			continue
		}
		if r := raw[t.Name]; r.Execution != nil && r.Execution.TaskSupport == "required" {
			tasks[t.Name] = true
		}
		seen[t.Name] = true
		keep = append(keep, t)
	}
	tools = keep
	u.setTaskTools(tasks)
	for name, r := range raw {
		if r.duplicate && !seen[name] {
			rejected = append(rejected, RejectedTool{Tool: name, Reason: "listed more than once"})
		}
		// (Past max_tools the raw names and the kept tools need not match.)
		if !seen[name] && !r.duplicate && leftOut == 0 {
			rejected = append(rejected, RejectedTool{Tool: name, Reason: "the go-sdk client excluded it as invalid (see the log)"})
		}
	}

	helpers := u.helperTools(c)
	reserved := map[string]bool{}
	for _, h := range helpers {
		reserved[h.Name] = true
	}
	planned, renamed := planNames(u.cfg.Name, tools, reserved)

	want := map[string]bool{}
	// Each new or changed definition is compiled first, on every processor (compiling schemas
	// is most of a large list's cost), then registered in order.
	type pending struct {
		def          registry.RawDefinition
		fp, upstream string
		tool         *registry.Tool
		err          error
	}
	var todo []*pending
	add := func(def registry.RawDefinition, fp, upstreamName string) {
		want[def.Name] = true
		if r, ok := u.tools[def.Name]; ok && r.fingerprint == fp {
			return
		}
		todo = append(todo, &pending{def: def, fp: fp, upstream: upstreamName})
	}
	for _, p := range planned {
		def, fp, err := u.definition(p.name, p.tool, raw[p.tool.Name])
		if err != nil {
			rejected = append(rejected, RejectedTool{Tool: p.tool.Name, Reason: err.Error()})
			continue
		}
		add(def, fp, p.tool.Name)
	}
	for _, h := range helpers {
		add(h, "helper:"+h.Name, h.Name)
	}
	compileAll(todo, func(p *pending) { p.tool, p.err = registry.Raw(p.def) })

	// One registry change for the whole list: listeners (the MCP tool list, the SDK and its
	// catalog) rebuild once, not once per tool.
	u.reg.Batch(func() {
		for _, p := range todo {
			u.unregister(p.def.Name)
			if p.err != nil {
				rejected = append(rejected, RejectedTool{Tool: p.upstream, Reason: p.err.Error()})
				delete(want, p.def.Name)
				continue
			}
			remove, err := u.reg.Register(u.scope, p.tool)
			if err != nil {
				rejected = append(rejected, RejectedTool{Tool: p.upstream, Reason: "the registry refused it: " + err.Error()})
				delete(want, p.def.Name)
				continue
			}
			u.tools[p.def.Name] = &registration{fingerprint: p.fp, unregister: remove}
		}
		for name := range u.tools {
			if !want[name] {
				u.unregister(name)
			}
		}
	})
	sort.Slice(rejected, func(i, j int) bool { return rejected[i].Tool < rejected[j].Tool })
	u.reportTools(renamed, rejected)
	u.reportBounds(leftOut, cut)
	if len(tools) >= largeCatalog {
		// Decoding a large list takes several times what its tools keep (the go-sdk decodes
		// every schema into maps): hand that back to the system now, not minutes later.
		debug.FreeOSMemory()
	}
	return len(u.tools), nil
}

// listTools lists the server's tools a page at a time within the
// upstream's bounds: the first max_tools in the server's order are kept and
// the rest counted (leftOut); no cursor is followed past max_list_pages
// pages or max_list_bytes bytes (cut says which stopped it).
func (u *upstream) listTools(ctx context.Context, c *connection) (tools []*sdk.Tool, leftOut int, cut string, err error) {
	maxTools, maxPages, maxBytes := u.cfg.ToolBounds()
	p := &sdk.ListToolsParams{}
	for pages := 1; ; pages++ {
		res, err := c.cs.ListTools(ctx, p)
		if err != nil {
			return nil, 0, "", err
		}
		for _, t := range res.Tools {
			switch {
			case t == nil:
			case len(tools) < maxTools:
				tools = append(tools, t)
			default:
				leftOut++
			}
		}
		switch {
		case res.NextCursor == "":
			return tools, leftOut, "", nil
		case pages >= maxPages:
			return tools, leftOut, fmt.Sprintf("max_list_pages (%d): the listing was not followed past page %d", maxPages, pages), nil
		case u.rawBytes() >= maxBytes:
			return tools, leftOut, fmt.Sprintf("max_list_bytes (%d): the listing was not followed past %d bytes", maxBytes, u.rawBytes()), nil
		}
		p.Cursor = res.NextCursor
	}
}

// reportBounds records the catalog bounds the last listing reached, logging
// a bound when it is newly reached (once, not at every reconnection).
func (u *upstream) reportBounds(leftOut int, cut string) {
	old := u.state()
	if leftOut > 0 && old.ToolsLeftOut == 0 {
		maxTools, _, _ := u.cfg.ToolBounds()
		u.log.Warn("upstream lists more tools than max_tools; the first are registered", "max_tools", maxTools, "left_out", leftOut)
	}
	if cut != "" && !sameBound(cut, old.ListingCut) {
		u.log.Warn("upstream tool listing cut short", "bound", cut)
	}
	u.update(func(st *UpstreamState) { st.ToolsLeftOut, st.ListingCut = leftOut, cut })
}

// sameBound reports whether two ListingCut texts name the same bound.
func sameBound(a, b string) bool {
	ka, _, _ := strings.Cut(a, " ")
	kb, _, _ := strings.Cut(b, " ")
	return ka == kb
}

// reportTools records renamed and rejected tools, logging what is new.
func (u *upstream) reportTools(renamed []RenamedTool, rejected []RejectedTool) {
	old := u.state()
	seenRen := map[RenamedTool]bool{}
	for _, r := range old.Renamed {
		seenRen[r] = true
	}
	for _, r := range renamed {
		if !seenRen[r] {
			u.log.Info("upstream tool registered under another name", "tool", r.Tool, "as", r.As, "why", r.Why)
		}
	}
	seenRej := map[RejectedTool]bool{}
	for _, r := range old.Rejected {
		seenRej[r] = true
	}
	for _, r := range rejected {
		if !seenRej[r] {
			u.log.Warn("upstream tool not registered", "tool", r.Tool, "reason", r.Reason)
		}
	}
	u.update(func(st *UpstreamState) { st.Renamed, st.Rejected = renamed, rejected })
}

// definition is the registry definition of an upstream tool and a
// fingerprint of everything it is built from.
func (u *upstream) definition(name string, t *sdk.Tool, raw rawTool) (registry.RawDefinition, string, error) {
	params, err := []byte(raw.InputSchema), error(nil)
	if !isJSONObject(params) {
		params, err = json.Marshal(t.InputSchema)
	}
	if err != nil || t.InputSchema == nil || string(params) == "null" {
		params = []byte(`{"type":"object"}`)
	}
	structured := t.OutputSchema != nil
	output := []byte(contentArraySchema)
	if structured {
		if output = raw.OutputSchema; !isJSONObject(output) {
			if output, err = json.Marshal(t.OutputSchema); err != nil {
				return registry.RawDefinition{}, "", fmt.Errorf("output schema: %w", err)
			}
		}
	}
	desc := t.Description
	if desc == "" {
		desc = t.Title
	}
	if name != u.cfg.Name+"."+t.Name {
		desc = strings.TrimSpace(desc + fmt.Sprintf("\n\n(The server's name for this tool is %q.)", t.Name))
	}
	hints := hintsOf(t)
	fp, err := fingerprint(desc, json.RawMessage(params), json.RawMessage(output), structured, hints, t.Name, u.callTimeout)
	if err != nil {
		return registry.RawDefinition{}, "", err
	}
	def := registry.RawDefinition{
		Name:              name,
		Description:       desc,
		Parameters:        params,
		EnforceParameters: true,
		Output:            output,
		Behavior: registry.Behavior{
			Execute: u.execute(name, t.Name, structured),
			Timeout: u.callTimeout,
			Hints:   hints,
		},
	}
	if structured {
		def.Render = u.renderStructured(name)
	} else {
		def.Render = renderContentValue
	}
	if hints.ReadOnly {
		// A read-only tool has no effects to order, so its calls may overlap.
		def.IsConcurrencySafe = func(frozen.Value) bool { return true }
	}
	return def, fp, nil
}

// hintsOf reads MCP's tool annotations (and the tool's title) as registry
// hints.
func hintsOf(t *sdk.Tool) registry.Hints {
	h := registry.Hints{Title: t.Title}
	if a := t.Annotations; a != nil {
		if h.Title == "" {
			h.Title = a.Title
		}
		h.ReadOnly = a.ReadOnlyHint
		h.Destructive = a.DestructiveHint
		if a.IdempotentHint {
			yes := true
			h.Idempotent = &yes
		}
		h.OpenWorld = a.OpenWorldHint
	}
	return h
}

// IdempotencyKeyMeta is the _meta key of a tools/call that carries the
// call's registry.Exec.IdempotencyKey: the same on every attempt of one
// call, so a server can make its effect happen once.
const IdempotencyKeyMeta = "io.codemode/idempotency-key"

// execute is the body of an upstream tool: one tools/call on the current
// session, under the caller's context, with a progress token that routes
// the server's progress to the caller's notifiers.
func (u *upstream) execute(name, tool string, structured bool) registry.ExecuteFunc {
	return func(ctx context.Context, exec registry.Exec, args frozen.Value) (any, error) {
		if args.Kind() != "object" {
			return nil, registry.Errorf(registry.CodeInvalidArgs, "%s takes a JSON object of arguments, got %s", name, args.Kind())
		}
		res, err := u.callUpstream(ctx, name, exec.CallID(), func(ctx context.Context, c *connection, token string) (*sdk.CallToolResult, error) {
			p := &sdk.CallToolParams{Name: tool, Arguments: json.RawMessage(args.Bytes())}
			p.SetProgressToken(token)
			if key := exec.IdempotencyKey(); key != "" {
				if p.Meta == nil {
					p.Meta = sdk.Meta{}
				}
				p.Meta[IdempotencyKeyMeta] = key
			}
			return c.cs.CallTool(ctx, p)
		})
		if err != nil {
			return nil, err
		}
		if res.IsError {
			return nil, &registry.Error{Code: registry.CodeToolFailed, Message: errorText(res.Content, name)}
		}
		if !structured {
			return contentValue(res.Content), nil
		}
		if res.StructuredContent == nil {
			return nil, registry.Errorf(registry.CodeInvalidToolOutput, "%s declares an output schema but returned no structuredContent", name)
		}
		v, err := frozen.Snapshot(res.StructuredContent)
		if err != nil {
			return nil, registry.Errorf(registry.CodeInvalidToolOutput, "%s: structuredContent: %v", name, err)
		}
		u.stash.put(stashKey(name, args, v), contentValue(res.Content))
		return v, nil
	}
}

// callUpstream runs one request on the current connection. A request that
// never reached the server (the session is gone, the connection refused) is
// retried once on the next session.
func callUpstream[R any](ctx context.Context, u *upstream, name, callID string, do func(context.Context, *connection, string) (R, error)) (R, error) {
	var zero R
	for retried := false; ; retried = true {
		c, err := u.current(ctx)
		if err != nil {
			return zero, err
		}
		// The liveness check may end the call (failCalls) with the cause
		// that names the silent upstream.
		cctx, cancel := context.WithCancelCause(ctx)
		token, end := u.begin(cctx, cancel, c, name, callID)
		res, err := do(cctx, c, token)
		end()
		cancel(nil)
		if err == nil {
			return res, nil
		}
		if ctx.Err() != nil {
			return zero, fmt.Errorf("%s: %w", name, context.Cause(ctx))
		}
		if cause := context.Cause(cctx); errors.Is(cause, errNotAnswering) {
			return zero, registry.Errorf(registry.CodeToolFailed, "%s: %v", name, cause)
		}
		switch {
		case notDelivered(err):
			u.lost(c, err)
			if !retried {
				continue
			}
			return zero, u.unavailable(err.Error())
		case connectionBroken(err):
			u.lost(c, err)
			return zero, u.unavailable(err.Error())
		}
		var rpcErr *jsonrpc.Error
		if errors.As(err, &rpcErr) {
			return zero, registry.Errorf(registry.CodeToolFailed, "%s: %s", name, rpcErr.Message)
		}
		return zero, registry.Errorf(registry.CodeToolFailed, "%s: %v", name, err)
	}
}

func (u *upstream) callUpstream(ctx context.Context, name, callID string, do func(context.Context, *connection, string) (*sdk.CallToolResult, error)) (*sdk.CallToolResult, error) {
	return callUpstream(ctx, u, name, callID, do)
}

// notDelivered reports whether a request failed before the server could
// act on it: the server no longer knows the session (it restarted), the
// connection was refused, or a stdio server had already exited.
func notDelivered(err error) bool {
	return sessionGone(err) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, errExited)
}

// connectionBroken reports whether a request failed because the connection
// did (as opposed to a reply that does not decode, or a server error).
func connectionBroken(err error) bool {
	var netErr *net.OpError
	return errors.Is(err, sdk.ErrConnectionClosed) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, io.ErrClosedPipe) || errors.Is(err, os.ErrClosed) || errors.Is(err, net.ErrClosed) ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNRESET) || errors.As(err, &netErr)
}

// contentStash hands an upstream result's content from the body of a tool
// with an output schema (whose value is the structuredContent) to its
// render, so that the content reaches the model and MCP clients whole.
type contentStash struct {
	mu sync.Mutex
	m  map[string][]stashed
}

type stashed struct {
	at      time.Time
	content []registry.ContentBlock
}

// stashTTL bounds how long content waits for a render that never comes (a
// value that failed validation).
const stashTTL = time.Minute

func stashKey(name string, args, value frozen.Value) string {
	return name + "\x00" + string(args.Bytes()) + "\x00" + string(value.Bytes())
}

func (s *contentStash) put(key string, content []registry.ContentBlock) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[string][]stashed{}
	}
	now := time.Now()
	for k, list := range s.m {
		for len(list) > 0 && now.Sub(list[0].at) > stashTTL {
			list = list[1:]
		}
		if len(list) == 0 {
			delete(s.m, k)
		} else {
			s.m[k] = list
		}
	}
	s.m[key] = append(s.m[key], stashed{at: now, content: content})
}

func (s *contentStash) take(key string) ([]registry.ContentBlock, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	list := s.m[key]
	if len(list) == 0 {
		return nil, false
	}
	c := list[0].content
	if len(list) == 1 {
		delete(s.m, key)
	} else {
		s.m[key] = list[1:]
	}
	return c, true
}

// renderStructured renders a structured upstream result: the content the
// server sent with it, else the value as JSON text.
func (u *upstream) renderStructured(name string) registry.RenderFunc {
	return func(args, value frozen.Value) []registry.ContentBlock {
		if c, ok := u.stash.take(stashKey(name, args, value)); ok && len(c) > 0 {
			return c
		}
		return registry.DefaultRender(value)
	}
}

// helperTools are the resource and prompt tools of a server, by what it
// declares.
func (u *upstream) helperTools(c *connection) []registry.RawDefinition {
	var defs []registry.RawDefinition
	add := func(tool, desc, params, output string, do func(ctx context.Context, args frozen.Value, c *connection, token string) (any, error), render registry.RenderFunc) {
		name := u.cfg.Name + "." + tool
		yes := true
		defs = append(defs, registry.RawDefinition{
			Name: name, Description: desc, Parameters: json.RawMessage(params), EnforceParameters: true, Output: json.RawMessage(output),
			Behavior: registry.Behavior{
				Execute: func(ctx context.Context, exec registry.Exec, args frozen.Value) (any, error) {
					return callUpstream(ctx, u, name, exec.CallID(), func(ctx context.Context, c *connection, token string) (any, error) {
						return do(ctx, args, c, token)
					})
				},
				Render:            render,
				Timeout:           u.callTimeout,
				IsConcurrencySafe: func(frozen.Value) bool { return true },
				Hints:             registry.Hints{ReadOnly: true, Idempotent: &yes},
			},
		})
	}
	server := u.cfg.Name
	if c.caps.Resources != nil {
		add(resourcesListTool, fmt.Sprintf("Lists the resources of the %s MCP server (one page; pass nextCursor back as cursor for the next).", server),
			cursorParams, resourcesListOutput, forward((*sdk.ClientSession).ListResources), nil)
		add(resourceTemplatesTool, fmt.Sprintf("Lists the resource templates of the %s MCP server (URI templates to read with %s.%s).", server, server, resourcesReadTool),
			cursorParams, templatesListOutput, forward((*sdk.ClientSession).ListResourceTemplates), nil)
		add(resourcesReadTool, fmt.Sprintf("Reads a resource of the %s MCP server by URI: its contents, each text or a base64 blob.", server),
			`{"type":"object","properties":{"uri":{"type":"string","description":"The resource's URI."}},"required":["uri"],"additionalProperties":false}`,
			resourcesReadOutput, forward((*sdk.ClientSession).ReadResource), renderResourceContents)
	}
	if c.caps.Prompts != nil {
		add(promptsListTool, fmt.Sprintf("Lists the prompts of the %s MCP server (one page; pass nextCursor back as cursor for the next).", server),
			cursorParams, promptsListOutput, forward((*sdk.ClientSession).ListPrompts), nil)
		add(promptsGetTool, fmt.Sprintf("Gets a prompt of the %s MCP server by name, with its arguments filled in: its messages.", server),
			`{"type":"object","properties":{"name":{"type":"string","description":"The prompt's name."},"arguments":{"type":"object","additionalProperties":{"type":"string"},"description":"The prompt's arguments."}},"required":["name"],"additionalProperties":false}`,
			promptsGetOutput, forward((*sdk.ClientSession).GetPrompt), nil)
	}
	return defs
}

// forward is a helper tool's call that sends its arguments, decoded into the
// request's params with the call's progress token, to the server by send,
// and answers with the result as a plain JSON value.
func forward[T any, P interface {
	*T
	SetProgressToken(any)
}, R any](send func(*sdk.ClientSession, context.Context, P) (R, error)) func(context.Context, frozen.Value, *connection, string) (any, error) {
	return func(ctx context.Context, args frozen.Value, c *connection, token string) (any, error) {
		p := P(new(T))
		if err := args.Unmarshal(p); err != nil {
			return nil, registry.Errorf(registry.CodeInvalidArgs, "%v", err)
		}
		p.SetProgressToken(token)
		res, err := send(c.cs, ctx, p)
		if err != nil {
			return nil, err
		}
		return jsonValue(res)
	}
}

// jsonValue is a go-sdk result as a plain JSON value, without the
// protocol's _meta, resultType and caching fields.
func jsonValue(res any) (any, error) {
	raw, err := json.Marshal(res)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	for _, k := range []string{"_meta", "resultType", "ttlMs"} {
		delete(m, k)
	}
	return m, nil
}

// renderResourceContents renders resources_read as embedded resources, so
// that a model or MCP client sees the contents as MCP's resource blocks.
func renderResourceContents(_, value frozen.Value) []registry.ContentBlock {
	var v struct {
		Contents []registry.Resource `json:"contents"`
	}
	if err := value.Unmarshal(&v); err != nil || len(v.Contents) == 0 {
		return registry.DefaultRender(value)
	}
	out := make([]registry.ContentBlock, 0, len(v.Contents))
	for i := range v.Contents {
		r := v.Contents[i]
		out = append(out, registry.ContentBlock{Type: "resource", Resource: &r})
	}
	return out
}

const cursorParams = `{"type":"object","properties":{"cursor":{"type":"string","description":"nextCursor of the previous page."}},"additionalProperties":false}`

const resourcesListOutput = `{"type":"object","properties":{"resources":{"type":"array","items":{"type":"object","properties":{` +
	`"uri":{"type":"string"},"name":{"type":"string"},"title":{"type":"string"},"description":{"type":"string"},"mimeType":{"type":"string"},"size":{"type":"integer"}},"required":["uri","name"]}},` +
	`"nextCursor":{"type":"string"}},"required":["resources"]}`

const templatesListOutput = `{"type":"object","properties":{"resourceTemplates":{"type":"array","items":{"type":"object","properties":{` +
	`"uriTemplate":{"type":"string"},"name":{"type":"string"},"title":{"type":"string"},"description":{"type":"string"},"mimeType":{"type":"string"}},"required":["uriTemplate","name"]}},` +
	`"nextCursor":{"type":"string"}},"required":["resourceTemplates"]}`

const resourcesReadOutput = `{"type":"object","properties":{"contents":{"type":"array","items":` + resourceContentsSchema + `}},"required":["contents"]}`

const promptsListOutput = `{"type":"object","properties":{"prompts":{"type":"array","items":{"type":"object","properties":{` +
	`"name":{"type":"string"},"title":{"type":"string"},"description":{"type":"string"},` +
	`"arguments":{"type":"array","items":{"type":"object","properties":{"name":{"type":"string"},"title":{"type":"string"},"description":{"type":"string"},"required":{"type":"boolean"}},"required":["name"]}}},"required":["name"]}},` +
	`"nextCursor":{"type":"string"}},"required":["prompts"]}`

const promptsGetOutput = `{"type":"object","properties":{"description":{"type":"string"},"messages":{"type":"array","items":{"type":"object","properties":{` +
	`"role":{"enum":["user","assistant"]},"content":{"type":"object","properties":{"type":{"enum":["text","image","audio","resource_link","resource"]}},"required":["type"]}},"required":["role","content"]}}},"required":["messages"]}`
