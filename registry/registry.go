package registry

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
)

// Mode decides a scope's model entry point; it never changes the tools.
type Mode string

const (
	// ModeNative: tools are called directly; no run_code.
	ModeNative Mode = "native"
	// ModeCode: only run_code is directly callable; tools are reached
	// through the SDK inside programs.
	ModeCode Mode = "code"
	// ModeBoth: run_code and every tool are directly callable.
	ModeBoth Mode = "both"
)

// Valid reports whether m is a known mode.
func (m Mode) Valid() bool { return m == ModeNative || m == ModeCode || m == ModeBoth }

// Global names the global layer: tools every scope inherits, and the scope
// of calls made without one.
const Global = ""

// Filter is a restriction: an allow mask or a deny mask over inherited tool
// names. Exactly one of the two lists must be non-empty.
type Filter struct {
	Allow []string
	Deny  []string
}

// ErrNotFound reports an unknown scope.
var ErrNotFound = errors.New("not found")

// Registry is the tool registry: a global layer and a tree of scopes. It is
// safe for concurrent use. Resolution happens when a call starts (View), so
// registry changes are seen by any call that has not started yet.
type Registry struct {
	mu         sync.RWMutex
	global     map[string]*entry
	globalMode Mode
	// globalWithheld withholds tools from every view (Withhold on Global).
	globalWithheld []*withholding
	globalNotes    []*withholding // Annotate on Global
	scopes         map[string]*scope
	transport      *Tool
	gen            uint64           // bumped by every change; guarded by mu
	views          map[string]*View // resolved views for gen; guarded by mu
	nextID         uint64
	listeners      map[uint64]func()
	batching       int  // Batch calls under way; guarded by mu
	deferred       bool // a change happened while batching; guarded by mu
	layerLimit     int  // SetLayerLimit; guarded by mu
}

// DefaultMaxLayerTools is the default bound of the tools one layer (the
// global layer or a scope) holds: two upstreams at their own bound
// (mcp_servers' max_tools, 5,000) fit, and far more than a model can use.
const DefaultMaxLayerTools = 10_000

// ErrLayerFull reports a registration past SetLayerLimit.
var ErrLayerFull = errors.New("the scope holds as many tools as it may")

type entry struct {
	tool *Tool
	id   uint64
}

type scope struct {
	name, parent string
	mode         Mode
	tools        map[string]*entry
	restrictions []*restriction
	withheld     []*withholding
	notes        []*withholding // Annotate: reason is the note
}

// withholding leaves the names match selects out of a scope's views (see Withhold); as a note
// (Annotate), it labels them.
type withholding struct {
	match  func(name string) bool
	reason string
}

type restriction struct {
	id    uint64
	allow map[string]bool // nil for a deny mask
	deny  map[string]bool
}

// SetLayerLimit bounds the tools registered in one layer (the global layer
// or one scope, not counting what it inherits); a Register past it fails
// with ErrLayerFull. n <= 0 is DefaultMaxLayerTools. Tools registered
// before stay.
func (r *Registry) SetLayerLimit(n int) {
	if n <= 0 {
		n = DefaultMaxLayerTools
	}
	r.mu.Lock()
	r.layerLimit = n
	r.mu.Unlock()
}

// New returns an empty registry whose global layer resolves in mode native,
// each layer bounded by DefaultMaxLayerTools.
func New() *Registry {
	return &Registry{
		layerLimit: DefaultMaxLayerTools,
		global:     map[string]*entry{},
		globalMode: ModeNative,
		scopes:     map[string]*scope{},
		views:      map[string]*View{},
		listeners:  map[uint64]func(){},
	}
}

// SetCodeTransport installs t, made by DefineCodeTransport, as the run_code
// tool that views of code and both scopes expose (nil removes it). It is the
// only way a tool named run_code enters a view: Define and Raw refuse the
// name, and Register refuses the tool. It panics on a tool of another name,
// a programming error.
func (r *Registry) SetCodeTransport(t *Tool) {
	if t != nil && t.name != RunCode {
		panic(fmt.Sprintf("registry: SetCodeTransport of %q, not a tool made by DefineCodeTransport", t.name))
	}
	r.mu.Lock()
	r.transport = t
	r.changed()
	r.mu.Unlock()
	r.notify()
}

// CodeTransport returns the installed run_code tool (nil when none).
func (r *Registry) CodeTransport() *Tool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.transport
}

// SetGlobalMode sets the mode of calls made without a scope.
func (r *Registry) SetGlobalMode(m Mode) error {
	if !m.Valid() {
		return fmt.Errorf("invalid mode %q", m)
	}
	r.mu.Lock()
	r.globalMode = m
	r.changed()
	r.mu.Unlock()
	r.notify()
	return nil
}

// OnChange registers fn to run (outside the registry lock, on the changing
// goroutine) after every change. It returns a function that removes it.
func (r *Registry) OnChange(fn func()) (remove func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.nextID++
	id := r.nextID
	r.listeners[id] = fn
	return func() {
		r.mu.Lock()
		delete(r.listeners, id)
		r.mu.Unlock()
	}
}

// changed invalidates resolved views; callers hold mu. Listeners are
// notified by notify, after the lock is released.
func (r *Registry) changed() {
	r.gen++
	clear(r.views)
}

func (r *Registry) notify() {
	r.mu.Lock()
	if r.batching > 0 {
		r.deferred = true
		r.mu.Unlock()
		return
	}
	fns := make([]func(), 0, len(r.listeners))
	for _, fn := range r.listeners {
		fns = append(fns, fn)
	}
	r.mu.Unlock()
	for _, fn := range fns {
		fn()
	}
}

// Batch runs fn, which may change the registry any number of times, and notifies the OnChange
// listeners once when it returns (if anything changed) rather than after every change: an
// upstream registering a thousand tools costs its listeners (the MCP tool list, the SDK) one
// rebuild, not a thousand. Views resolved inside fn see every change at once as usual. Changes
// other goroutines make meanwhile are announced with the batch's.
func (r *Registry) Batch(fn func()) {
	r.mu.Lock()
	r.batching++
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		r.batching--
		announce := r.batching == 0 && r.deferred
		if announce {
			r.deferred = false
		}
		r.mu.Unlock()
		if announce {
			r.notify()
		}
	}()
	fn()
}

// CreateScope creates a scope under parent (Global for a root scope).
func (r *Registry) CreateScope(name, parent string, mode Mode) error {
	if name == Global {
		return errors.New("scope name must not be empty")
	}
	if !mode.Valid() {
		return fmt.Errorf("scope %q: invalid mode %q", name, mode)
	}
	r.mu.Lock()
	if _, ok := r.scopes[name]; ok {
		r.mu.Unlock()
		return fmt.Errorf("scope %q already exists", name)
	}
	if parent != Global {
		if _, ok := r.scopes[parent]; !ok {
			r.mu.Unlock()
			return fmt.Errorf("scope %q: parent scope %q: %w", name, parent, ErrNotFound)
		}
	}
	r.scopes[name] = &scope{name: name, parent: parent, mode: mode, tools: map[string]*entry{}}
	r.changed()
	r.mu.Unlock()
	r.notify()
	return nil
}

// SetMode changes a scope's mode.
func (r *Registry) SetMode(name string, mode Mode) error {
	if !mode.Valid() {
		return fmt.Errorf("scope %q: invalid mode %q", name, mode)
	}
	r.mu.Lock()
	s, ok := r.scopes[name]
	if !ok {
		r.mu.Unlock()
		return fmt.Errorf("scope %q: %w", name, ErrNotFound)
	}
	s.mode = mode
	r.changed()
	r.mu.Unlock()
	r.notify()
	return nil
}

// RemoveScope removes a scope with its registrations and restrictions. A
// scope with child scopes cannot be removed.
func (r *Registry) RemoveScope(name string) error {
	r.mu.Lock()
	if _, ok := r.scopes[name]; !ok {
		r.mu.Unlock()
		return fmt.Errorf("scope %q: %w", name, ErrNotFound)
	}
	for _, s := range r.scopes {
		if s.parent == name {
			r.mu.Unlock()
			return fmt.Errorf("scope %q has child scope %q", name, s.name)
		}
	}
	delete(r.scopes, name)
	r.changed()
	r.mu.Unlock()
	r.notify()
	return nil
}

// Scopes lists scope names in order.
func (r *Registry) Scopes() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	names := make([]string, 0, len(r.scopes))
	for n := range r.scopes {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// HasScope reports whether a scope exists (Global always does).
func (r *Registry) HasScope(name string) bool {
	if name == Global {
		return true
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	_, ok := r.scopes[name]
	return ok
}

// Ancestry returns the chain from the scope up to its root, nearest first
// (the scope itself first). It is empty for Global and unknown scopes.
func (r *Registry) Ancestry(name string) []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.chainLocked(name)
}

func (r *Registry) chainLocked(name string) []string {
	var chain []string
	for name != Global {
		s, ok := r.scopes[name]
		if !ok {
			break
		}
		chain = append(chain, name)
		name = s.parent
	}
	return chain
}

// Register adds a tool to a layer (Global or a scope). A name may appear
// once per layer; a scoped tool shadows inherited ones of the same name. It
// returns a function that removes exactly this registration (a no-op once
// the registration or its scope is gone).
func (r *Registry) Register(scopeName string, t *Tool) (unregister func(), err error) {
	if t == nil {
		return nil, errors.New("nil tool")
	}
	if t.name == RunCode {
		return nil, fmt.Errorf("%q is reserved", RunCode)
	}
	r.mu.Lock()
	layer, err := r.layerLocked(scopeName)
	if err != nil {
		r.mu.Unlock()
		return nil, err
	}
	if _, dup := layer[t.name]; dup {
		r.mu.Unlock()
		return nil, fmt.Errorf("tool %q is already registered in %s", t.name, layerName(scopeName))
	}
	if len(layer) >= r.layerLimit {
		n := r.layerLimit
		r.mu.Unlock()
		return nil, fmt.Errorf("%w: %s holds %d tools (limits.max_tools_per_scope)", ErrLayerFull, layerName(scopeName), n)
	}
	r.nextID++
	e := &entry{tool: t, id: r.nextID}
	layer[t.name] = e
	r.changed()
	r.mu.Unlock()
	r.notify()
	return func() {
		r.mu.Lock()
		layer, err := r.layerLocked(scopeName)
		if err != nil || layer[t.name] != e {
			r.mu.Unlock()
			return
		}
		delete(layer, t.name)
		r.changed()
		r.mu.Unlock()
		r.notify()
	}, nil
}

func layerName(scopeName string) string {
	if scopeName == Global {
		return "the global scope"
	}
	return fmt.Sprintf("scope %q", scopeName)
}

func (r *Registry) layerLocked(scopeName string) (map[string]*entry, error) {
	if scopeName == Global {
		return r.global, nil
	}
	s, ok := r.scopes[scopeName]
	if !ok {
		return nil, fmt.Errorf("scope %q: %w", scopeName, ErrNotFound)
	}
	return s.tools, nil
}

// Restrict masks the tools a scope inherits (from the global layer and its
// ancestors); the scope's own registrations are exempt. Restrictions along a
// scope chain intersect. A deny mask admits tools registered later; an allow
// mask excludes them. The filter is copied. Rejected: the global scope, an
// empty filter, both lists at once, run_code, a name the scope registers
// itself, and a name the scope does not inherit.
func (r *Registry) Restrict(scopeName string, f Filter) (remove func(), err error) {
	if scopeName == Global {
		return nil, errors.New("the global scope cannot be restricted")
	}
	if len(f.Allow) > 0 && len(f.Deny) > 0 {
		return nil, errors.New("a restriction is an allow mask or a deny mask, not both")
	}
	names := f.Allow
	if len(names) == 0 {
		names = f.Deny
	}
	if len(names) == 0 {
		return nil, errors.New("empty restriction filter")
	}
	r.mu.Lock()
	s, ok := r.scopes[scopeName]
	if !ok {
		r.mu.Unlock()
		return nil, fmt.Errorf("scope %q: %w", scopeName, ErrNotFound)
	}
	inherited := r.inheritedLocked(s)
	set := make(map[string]bool, len(names))
	for _, n := range names {
		switch {
		case n == RunCode:
			r.mu.Unlock()
			return nil, fmt.Errorf("%q cannot be restricted", RunCode)
		case s.tools[n] != nil:
			r.mu.Unlock()
			return nil, fmt.Errorf("restriction on scope %q names its own tool %q; restrictions mask only inherited tools", scopeName, n)
		case inherited[n] == nil:
			r.mu.Unlock()
			return nil, fmt.Errorf("restriction on scope %q names unknown tool %q", scopeName, n)
		}
		set[n] = true
	}
	r.nextID++
	res := &restriction{id: r.nextID}
	if len(f.Allow) > 0 {
		res.allow = set
	} else {
		res.deny = set
	}
	s.restrictions = append(s.restrictions, res)
	r.changed()
	r.mu.Unlock()
	r.notify()
	return func() {
		r.mu.Lock()
		i := slices.Index(s.restrictions, res)
		if i < 0 || r.scopes[scopeName] != s {
			r.mu.Unlock()
			return
		}
		s.restrictions = slices.Delete(s.restrictions, i, i+1)
		r.changed()
		r.mu.Unlock()
		r.notify()
	}, nil
}

// Withhold leaves the tools match selects out of the scope's views and its
// descendants' (Global: every view): a withheld tool is not listed, typed in
// the SDK or offered to a model, and the view reports it with reason in
// Withheld. Get still finds it, so a call by name still reaches the
// pipeline. It is for tools that can never run in the scope, such as those
// an owner's guard vetoes whatever the arguments; match is applied to every
// tool, including ones registered later.
func (r *Registry) Withhold(scopeName string, match func(name string) bool, reason string) (remove func(), err error) {
	if match == nil {
		return nil, errors.New("withhold: no match function")
	}
	return r.addRule(scopeName, &withholding{match: match, reason: reason}, func(s *scope) *[]*withholding { return &s.withheld }, &r.globalWithheld)
}

// Annotate labels the tools match selects, in the scope's views and its descendants' (Global:
// every view), with note: what a person or a program should know before calling one, such as a
// policy that denies it or asks for approval. Notes change nothing about a call; the catalog
// shows them beside a tool's summary (View.Note). The nearest scope's first note wins.
func (r *Registry) Annotate(scopeName string, match func(name string) bool, note string) (remove func(), err error) {
	if match == nil {
		return nil, errors.New("annotate: no match function")
	}
	return r.addRule(scopeName, &withholding{match: match, reason: note}, func(s *scope) *[]*withholding { return &s.notes }, &r.globalNotes)
}

// addRule appends w to a scope's rule list (of picks which) or, for Global, to global, and
// returns the function that removes exactly this rule.
func (r *Registry) addRule(scopeName string, w *withholding, of func(*scope) *[]*withholding, global *[]*withholding) (remove func(), err error) {
	r.mu.Lock()
	list := global
	if scopeName != Global {
		s, ok := r.scopes[scopeName]
		if !ok {
			r.mu.Unlock()
			return nil, fmt.Errorf("scope %q: %w", scopeName, ErrNotFound)
		}
		list = of(s)
	}
	*list = append(*list, w)
	r.changed()
	r.mu.Unlock()
	r.notify()
	return func() {
		r.mu.Lock()
		if i := slices.Index(*list, w); i >= 0 {
			*list = slices.Delete(*list, i, i+1)
			r.changed()
		}
		r.mu.Unlock()
		r.notify()
	}, nil
}

// chainRulesLocked gathers a rule list along the scope chain, nearest scope first, then the
// global one.
func (r *Registry) chainRulesLocked(scopeName string, of func(*scope) []*withholding, global []*withholding) []*withholding {
	var rules []*withholding
	for a := r.scopes[scopeName]; a != nil; a = r.scopes[a.parent] {
		rules = append(rules, of(a)...)
		if a.parent == Global {
			break
		}
	}
	return append(rules, global...)
}

// withheldLocked moves the tools the scope chain withholds from tools to the
// returned map, with each one's reason (the nearest scope's first rule wins).
func (r *Registry) withheldLocked(scopeName string, tools map[string]*Tool) (map[string]*Tool, map[string]string) {
	rules := r.chainRulesLocked(scopeName, func(s *scope) []*withholding { return s.withheld }, r.globalWithheld)
	if len(rules) == 0 {
		return nil, nil
	}
	var held map[string]*Tool
	var reasons map[string]string
	for n, t := range tools {
		for _, w := range rules {
			if w.match(n) {
				if held == nil {
					held, reasons = make(map[string]*Tool), make(map[string]string)
				}
				held[n], reasons[n] = t, w.reason
				delete(tools, n)
				break
			}
		}
	}
	return held, reasons
}

// inheritedLocked is the unmasked inherited layer of s: global tools, then
// ancestor registrations with nearer ones shadowing farther ones.
func (r *Registry) inheritedLocked(s *scope) map[string]*Tool {
	out := make(map[string]*Tool, len(r.global))
	for n, e := range r.global {
		out[n] = e.tool
	}
	var ancestors []*scope
	for p := s.parent; p != Global; {
		a, ok := r.scopes[p]
		if !ok {
			break
		}
		ancestors = append(ancestors, a)
		p = a.parent
	}
	for i := len(ancestors) - 1; i >= 0; i-- { // farthest first, so nearer wins
		for n, e := range ancestors[i].tools {
			out[n] = e.tool
		}
	}
	return out
}

// View resolves a scope now: global tools → ancestor registrations (nearer
// shadowing farther) → every restriction along the chain intersected → the
// scope's own registrations → run_code for code and both. The view is
// immutable; views are cached until the next change.
func (r *Registry) View(scopeName string) (*View, error) {
	r.mu.RLock()
	if v, ok := r.views[scopeName]; ok {
		r.mu.RUnlock()
		return v, nil
	}
	r.mu.RUnlock()

	r.mu.Lock()
	defer r.mu.Unlock()
	if v, ok := r.views[scopeName]; ok {
		return v, nil
	}
	v, err := r.resolveLocked(scopeName)
	if err != nil {
		return nil, err
	}
	r.views[scopeName] = v
	return v, nil
}

func (r *Registry) resolveLocked(scopeName string) (*View, error) {
	v := &View{scope: scopeName, mode: r.globalMode, gen: r.gen}
	var tools map[string]*Tool
	if scopeName == Global {
		tools = make(map[string]*Tool, len(r.global))
		for n, e := range r.global {
			tools[n] = e.tool
		}
	} else {
		s, ok := r.scopes[scopeName]
		if !ok {
			return nil, fmt.Errorf("scope %q: %w", scopeName, ErrNotFound)
		}
		v.mode = s.mode
		tools = r.inheritedLocked(s)
		for a := s; a != nil; a = r.scopes[a.parent] {
			for _, res := range a.restrictions {
				for n := range tools {
					if (res.allow != nil && !res.allow[n]) || res.deny[n] {
						delete(tools, n)
					}
				}
			}
		}
		for n, e := range s.tools {
			tools[n] = e.tool
		}
	}
	v.withheld, v.withheldReasons = r.withheldLocked(scopeName, tools)
	v.notes = r.chainRulesLocked(scopeName, func(s *scope) []*withholding { return s.notes }, r.globalNotes)
	v.tools = tools
	if scopeName != Global {
		v.chain = r.chainLocked(scopeName)
	}
	v.names = make([]string, 0, len(tools))
	for n := range tools {
		v.names = append(v.names, n)
	}
	sort.Strings(v.names)
	if v.mode != ModeNative && r.transport != nil {
		v.transport = r.transport
	}
	return v, nil
}

// View is one scope's resolved tool set at one moment. Get, model schemas,
// the SDK generator and dispatch all read a View, so they cannot disagree.
type View struct {
	scope     string
	mode      Mode
	gen       uint64
	tools     map[string]*Tool // without run_code
	names     []string         // sorted keys of tools
	transport *Tool            // run_code when mode is code or both
	chain     []string         // the scope and its ancestors, nearest first; nil for Global
	// withheld are tools the scope withholds (see Registry.Withhold): found
	// by Get, never listed; withheldReasons says why.
	withheld        map[string]*Tool
	withheldReasons map[string]string
	notes           []*withholding // Annotate's rules, nearest scope first
	memo            sync.Map       // derived data (the SDK set and its texts, MCP tool lists); see Memo
}

// Memo returns the value derived from this view under key, building it once
// with build. Views are immutable and replaced on every change, so derived
// data (the SDK set and its texts) lives exactly as long as
// the tool set it was derived from.
func (v *View) Memo(key any, build func() any) any {
	if x, ok := v.memo.Load(key); ok {
		return x
	}
	x, _ := v.memo.LoadOrStore(key, build())
	return x
}

// Scope is the scope the view was resolved for.
func (v *View) Scope() string { return v.scope }

// Mode is the scope's mode.
func (v *View) Mode() Mode { return v.mode }

// Within reports whether scope is the view's scope or one of its ancestors
// as they were when the view was resolved (never for Global).
func (v *View) Within(scope string) bool { return slices.Contains(v.chain, scope) }

// Generation identifies the registry state the view was resolved from.
func (v *View) Generation() uint64 { return v.gen }

// Get finds a tool by name, run_code included when the mode exposes it.
func (v *View) Get(name string) (*Tool, bool) {
	if name == RunCode {
		return v.transport, v.transport != nil
	}
	if t, ok := v.tools[name]; ok {
		return t, true
	}
	t, ok := v.withheld[name]
	return t, ok
}

// Note is what the scope's annotations say of the tool name (Registry.Annotate); "" for none.
func (v *View) Note(name string) string {
	for _, w := range v.notes {
		if w.match(name) {
			return w.reason
		}
	}
	return ""
}

// Withheld is one tool a view leaves out, and why.
type Withheld struct {
	Name   string `json:"name"`
	Reason string `json:"reason"`
}

// Withheld lists the tools the view leaves out of its lists, the SDK and the
// model's tools (see Registry.Withhold), sorted by name.
func (v *View) Withheld() []Withheld {
	out := make([]Withheld, 0, len(v.withheld))
	for n := range v.withheld {
		out = append(out, Withheld{Name: n, Reason: v.withheldReasons[n]})
	}
	slices.SortFunc(out, func(a, b Withheld) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// DirectlyCallable reports whether a model may call name directly: in code
// mode only run_code is.
func (v *View) DirectlyCallable(name string) bool {
	if v.mode == ModeCode {
		return name == RunCode
	}
	return true
}

// SDKTools lists the tools a program can reach, sorted by name; run_code is
// never among them.
func (v *View) SDKTools() []*Tool {
	out := make([]*Tool, len(v.names))
	for i, n := range v.names {
		out[i] = v.tools[n]
	}
	return out
}

// Names lists the names of SDKTools (a fresh slice).
func (v *View) Names() []string { return append([]string(nil), v.names...) }

// HasSDKTool reports whether a program can reach name through the SDK.
func (v *View) HasSDKTool(name string) bool {
	_, ok := v.tools[name]
	return ok
}

// ModelTools lists what a model is offered directly: run_code first when the mode exposes it
// (so that a client reading only the first page of a long list still finds it), then the
// tools in name order in native and both modes.
func (v *View) ModelTools() []*Tool {
	var out []*Tool
	if v.transport != nil {
		out = append(out, v.transport)
	}
	if v.mode != ModeCode {
		out = append(out, v.SDKTools()...)
	}
	return out
}

// ModelSchema is a tool as a model sees it. Schemas are fresh copies.
type ModelSchema struct {
	Name         string          `json:"name"`
	Description  string          `json:"description"`
	Parameters   json.RawMessage `json:"parameters"`
	OutputSchema json.RawMessage `json:"output_schema"`
}

// Schemas returns the model-facing schemas of ModelTools. Mutating the
// result changes nothing in the registry; host callbacks, timeouts and
// classifiers never appear in it.
func (v *View) Schemas() []ModelSchema {
	tools := v.ModelTools()
	out := make([]ModelSchema, len(tools))
	for i, t := range tools {
		out[i] = ModelSchema{Name: t.name, Description: t.description, Parameters: t.Parameters(), OutputSchema: t.OutputSchema()}
	}
	return out
}
