// Package app assembles a codemode service from a configuration: the
// registry with its scopes and the demo tools, the runtime with policies,
// guards and the timeout wrapper, the run_code bridge (running programs in
// worker processes with isolation "process", the default, or in this process
// with "inproc"), the session store and the agent loop. The CLI, the HTTP service and the MCP server all start
// from an App, so they serve the same thing.
package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/codemode/codemode/agent"
	"github.com/codemode/codemode/bridge"
	"github.com/codemode/codemode/config"
	"github.com/codemode/codemode/examples/tools"
	"github.com/codemode/codemode/registry"
	"github.com/codemode/codemode/runtime"
	"github.com/codemode/codemode/sandbox"
	"github.com/codemode/codemode/sandbox/worker"
	"github.com/codemode/codemode/session"
	"github.com/codemode/codemode/session/postgres"
	"github.com/codemode/codemode/session/sqlite"
)

// App is one assembled service.
type App struct {
	Config   config.Config
	Registry *registry.Registry
	Runtime  *runtime.Runtime
	Bridge   *bridge.Bridge
	Store    session.Store
	Agent    *agent.Agent
	Demo     *tools.Pack
	Logger   *slog.Logger
	// Workers runs the programs with isolation "process"; nil with "inproc".
	Workers *worker.Pool

	stopSweep func() // stops the sweep of lapsed leases and waits for it; nil without one
}

// Options adjust New. The zero value works.
type Options struct {
	// Store, when set, is used instead of opening Config.Store; App.Close
	// closes it either way.
	Store  session.Store
	Logger *slog.Logger
	// SkipRecovery leaves open calls alone at start (tests of recovery).
	SkipRecovery bool
	// Tools are the embedder's own tools (registry.Typed, Define or Raw),
	// registered in the global layer before the configured restrictions,
	// policies and guards are checked, so that those may name them.
	Tools []*registry.Tool
	// Approver answers asks in Go as they are made (agent.Approver); nil
	// leaves them to the log (Agent.Answer, the HTTP approvals API).
	Approver agent.Approver
	// LeaseTTL is how long a step's lease on a shared (PostgreSQL) store
	// lasts without renewal: the calls of a replica that stopped are closed
	// within it and a sweep's interval (a fifth of it). Default
	// agent.DefaultLeaseTTL.
	LeaseTTL time.Duration
}

// New builds the service described by cfg. The configuration must be valid
// (config.Load validates it).
func New(ctx context.Context, cfg config.Config, opts Options) (*App, error) {
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	a := &App{Config: cfg, Registry: registry.New(), Logger: log}
	a.Registry.SetLayerLimit(cfg.Limits.MaxToolsPerScope)
	if err := a.buildScopes(opts.Tools); err != nil {
		return nil, err
	}
	if err := a.checkGlobs(); err != nil {
		return nil, err
	}
	a.Runtime = runtime.New(a.Registry, runtime.Options{})
	a.Runtime.AddAround(runtime.Timeout(cfg.Limits.Timeout.Std()))
	if err := a.mountPolicies(); err != nil {
		return nil, err
	}
	var runner sandbox.Runner = sandbox.InProcess{}
	if cfg.Isolation == "process" {
		// The pool starts its workers on the first run, so an App that runs no program
		// starts no process.
		// As many idle workers as runs are admitted at once: steady load never
		// starts and retires workers.
		admitted := cfg.Server.MaxInflightRuns
		pool, err := worker.New(worker.Options{
			Memory: int64(cfg.Limits.Memory), Logger: log,
			MaxIdle: admitted, MaxWorkers: max(worker.DefaultMaxWorkers, admitted),
		})
		if err != nil {
			return nil, fmt.Errorf("isolation: process: %w", err)
		}
		a.Workers, runner = pool, pool
	}
	a.Bridge = bridge.Install(a.Runtime, bridge.Options{
		Limits:              Limits(cfg.Limits),
		MaxParallelSubCalls: cfg.Limits.MaxParallelSubCalls,
		MaxContentBytes:     int(cfg.Limits.MaxContentBytes),
		MaxSubCallBytes:     int(cfg.Limits.MaxSubCallBytes),
		Runner:              runner,
		PromptBudget:        cfg.SDK.PromptBudget,
		Pinned:              pinned(cfg.Scopes),
	})

	store := opts.Store
	if store == nil {
		var err error
		if store, err = openStore(ctx, cfg); err != nil {
			a.closeWorkers()
			return nil, err
		}
	}
	a.Store = store
	a.Agent = agent.New(a.Runtime, store, agent.Options{
		ApprovalTimeout: cfg.Approvals.Timeout.Std(),
		Hold:            cfg.Approvals.Hold.Std(),
		MaxParallel:     cfg.Limits.MaxParallelSubCalls,
		Logger:          log,
		// Replicas share a PostgreSQL log: their steps of one session must
		// not interleave.
		Leases:   a.sharedStore(),
		LeaseTTL: opts.LeaseTTL,
		Approver: opts.Approver,
	})
	if !opts.SkipRecovery {
		n, err := a.Agent.Recover(ctx, a.RecoveryAge())
		if err != nil {
			store.Close()
			a.closeWorkers()
			return nil, fmt.Errorf("recover open calls: %w", err)
		}
		if n > 0 {
			log.Warn("closed calls left open by a stopped process", "calls", n)
		}
		a.sweep(opts.LeaseTTL)
	}
	return a, nil
}

// sweep runs, until Close, the service's two sweeps: for a shared store,
// every fifth of a lease's ttl, it closes the calls of the replicas that
// stopped while they held them (Agent.RecoverLapsed), so that recovery does
// not wait for a restart (start-up recovery, at RecoveryAge, still closes
// calls left by a version of codemode whose steps held no lease); and every
// ResumeEvery it resumes the suspended runs that no longer wait and ends
// their asks past approvals.timeout (Agent.ResumeWaiting), first at once.
// Two goroutines serve every session: a suspended run holds none.
func (a *App) sweep(ttl time.Duration) {
	if ttl <= 0 {
		ttl = agent.DefaultLeaseTTL
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	a.stopSweep = func() { cancel(); wg.Wait() }
	every := func(d time.Duration, what string, fn func(context.Context) (int, error)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tick := time.NewTicker(d)
			defer tick.Stop()
			for {
				n, err := fn(ctx)
				switch {
				case err != nil && ctx.Err() == nil:
					a.Logger.Warn(what+" failed; retrying", "err", err)
				case n > 0:
					a.Logger.Info(what, "calls", n)
				}
				select {
				case <-ctx.Done():
					return
				case <-tick.C:
				}
			}
		}()
	}
	if a.sharedStore() {
		every(ttl/5, "closed calls left open by a replica that stopped", a.Agent.RecoverLapsed)
	}
	every(ResumeEvery, "resumed suspended runs", a.Agent.ResumeWaiting)
}

// ResumeEvery is how often the service looks for suspended runs to resume
// or whose asks timed out: the longest an answer waits for its run to resume
// when the process that took it stopped before resuming it.
const ResumeEvery = 10 * time.Second

// StoreError is a store that could not be opened: one line naming the
// store and the fix.
type StoreError struct {
	Store string // the URL, its password redacted
	Err   error
}

func (e *StoreError) Error() string {
	return fmt.Sprintf("cannot open the session store %s: %v (point store, CODEMODE_STORE or --store at a writable file, a reachable database, or memory://)", e.Store, e.Err)
}

func (e *StoreError) Unwrap() error { return e.Err }

// openStore opens the configured store, creating a SQLite file's
// directories (with their parents) first.
func openStore(ctx context.Context, cfg config.Config) (session.Store, error) {
	RegisterStores()
	if p, ok := config.SQLitePath(cfg.Store); ok {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return nil, &StoreError{p, err}
		}
	}
	st, err := session.Open(ctx, cfg.Store, session.Options{Durability: session.Durability(cfg.Durability)})
	if err != nil {
		return nil, &StoreError{RedactURL(cfg.Store), err}
	}
	return st, nil
}

// RedactURL hides a password in a store URL, for logs and errors.
func RedactURL(s string) string {
	if p, ok := config.SQLitePath(s); ok {
		return p
	}
	u, err := url.Parse(s)
	if err != nil {
		return "(unparsable store URL)"
	}
	if _, has := u.User.Password(); !has {
		return s
	}
	return u.Redacted()
}

// sharedStore reports whether other processes may use the store at once
// (its backend says so: session.Shared).
func (a *App) sharedStore() bool {
	RegisterStores()
	return session.Shared(a.Config.Store)
}

// RegisterStores registers the session stores codemode ships for
// session.Open, by scheme: sqlite:// (and sqlite3://), postgres:// (and
// postgresql://); memory:// is session's own. It may be called any number
// of times; New does, before it opens the configured store.
func RegisterStores() {
	sqlite.Register()
	postgres.Register()
}

// RecoveryAge is how old an open call must be before start-up recovery
// closes it: any age for a store only this process uses, and for a shared
// store (PostgreSQL) only calls older than anything still running elsewhere
// could be (a run's timeout plus an approval's), so that a starting replica
// never closes another replica's live call.
func (a *App) RecoveryAge() time.Duration {
	if a.sharedStore() {
		return a.Config.Limits.Timeout.Std() + a.Config.Approvals.Timeout.Std() + time.Minute
	}
	return 0
}

// Limits converts configured limits to sandbox options.
func Limits(l config.Limits) sandbox.Options {
	return sandbox.Options{
		Timeout:        l.Timeout.Std(),
		MaxCalls:       l.MaxSubCalls,
		MaxCallBytes:   int(l.MaxSubCallArgsBytes),
		MaxLogBytes:    int(l.MaxLogBytes),
		MaxResultBytes: int(l.MaxResultBytes),
		Memory:         int64(l.Memory),
	}
}

// DemoQuotas converts the configured demo_state bounds to the demo pack's quotas.
func DemoQuotas(d config.DemoState) tools.Quotas {
	return tools.Quotas{
		MaxSessions:     d.MaxSessions,
		MaxTotalBytes:   int64(d.MaxTotalBytes),
		MaxSessionBytes: int64(d.MaxSessionBytes),
		MaxEntries:      d.MaxEntries,
		MaxValueBytes:   int64(d.MaxValueBytes),
		IdleTTL:         d.IdleTTL.Std(),
	}
}

func (a *App) buildScopes(own []*registry.Tool) error {
	cfg := a.Config
	for _, name := range cfg.ScopeOrder() {
		sc := cfg.Scopes[name]
		mode := sc.Mode
		if name == config.DefaultScope && mode == "" {
			mode = cfg.Mode
		}
		if mode == "" {
			mode = a.scopeMode(sc.Parent)
		}
		if err := a.Registry.CreateScope(name, sc.Parent, registry.Mode(mode)); err != nil {
			return config.Errorf("scopes.%s: %v", name, err)
		}
	}
	if cfg.DemoEnabled() {
		a.Demo = tools.NewWithQuotas(DemoQuotas(cfg.DemoState))
		if _, err := a.Demo.Register(a.Registry, config.DefaultScope); err != nil {
			return fmt.Errorf("demo tools: %w", err)
		}
	}
	for _, t := range own {
		if t == nil {
			return errors.New("tools: a nil tool")
		}
		if _, err := a.Registry.Register(registry.Global, t); err != nil {
			return fmt.Errorf("tools: %w", err)
		}
	}
	for _, name := range cfg.ScopeOrder() {
		r := cfg.Scopes[name].Restrict
		if r == nil {
			continue
		}
		if _, err := a.Registry.Restrict(name, registry.Filter{Allow: r.Allow, Deny: r.Deny}); err != nil {
			return config.Errorf("scopes.%s.restrict: %v", name, err)
		}
	}
	return nil
}

func (a *App) scopeMode(name string) string {
	if name == "" {
		return string(registry.ModeNative)
	}
	v, err := a.Registry.View(name)
	if err != nil {
		return string(registry.ModeNative)
	}
	return string(v.Mode())
}

// pinned maps each scope to the tools its catalog shows whole first.
func pinned(scopes map[string]config.ScopeConfig) map[string][]string {
	out := map[string][]string{}
	for name, sc := range scopes {
		if len(sc.Pinned) > 0 {
			out[name] = sc.Pinned
		}
	}
	return out
}

// mountPolicies turns configured policies and guards into runtime hooks. A
// scoped rule binds its scope and the scope's descendants. A configured guard
// names tools only, so it vetoes every call of the tools it matches: they are
// also withheld from the scope's views (never listed, typed or offered to a
// model, on which they would only spend tokens), and the guard still vetoes
// a call that names one.
func (a *App) mountPolicies() error {
	for _, p := range a.Config.Policies {
		p := p
		a.Runtime.AddPrePolicy(p.Scope, func(_ context.Context, c runtime.Call) (runtime.Decision, error) {
			if !config.MatchTool(p.Tool, c.Name) {
				return runtime.Allow(), nil
			}
			switch p.Decision {
			case "deny":
				return runtime.Deny(p.Reason), nil
			case "ask":
				return runtime.Ask(p.Reason), nil
			}
			return runtime.Allow(), nil
		})
		// The catalog says so beside the tool: a program learns before it calls.
		note := map[string]string{"deny": "denied here", "ask": "asks a person first"}[p.Decision]
		if note == "" {
			continue
		}
		if p.Reason != "" {
			note += ": " + p.Reason
		}
		match := func(name string) bool { return config.MatchTool(p.Tool, name) }
		if _, err := a.Registry.Annotate(p.Scope, match, note); err != nil {
			return fmt.Errorf("policies: %w", err)
		}
	}
	for _, g := range a.Config.Guards {
		g := g
		reason := g.Reason
		if reason == "" {
			reason = "denied by the owner"
		}
		a.Runtime.AddGuard(g.Scope, func(_ context.Context, c runtime.Call) string {
			if config.MatchTool(g.Tool, c.Name) {
				return reason
			}
			return ""
		})
		match := func(name string) bool { return config.MatchTool(g.Tool, name) }
		if _, err := a.Registry.Withhold(g.Scope, match, "guard: "+reason); err != nil {
			return fmt.Errorf("guards: %w", err)
		}
	}
	return nil
}

// ModelTools is exactly what a model must be given for scope ("" means
// default): each tool's name, description and parameter schema (with the
// output schema), run_code's description being the scope's SDK prompt
// (Bridge.ModelSchemas). GET /v1/tools and MCP tools/list serve the same.
func (a *App) ModelTools(scope string) ([]registry.ModelSchema, error) {
	if scope == "" {
		scope = config.DefaultScope
	}
	v, err := a.Registry.View(scope)
	if errors.Is(err, registry.ErrNotFound) {
		return nil, fmt.Errorf("%w %q", ErrUnknownScope, scope)
	}
	if err != nil {
		return nil, err
	}
	return a.Bridge.ModelSchemas(v), nil
}

// Close stops the sweeps, lets the runs being resumed end, stops the worker
// processes (a run still in one fails) and closes the store.
func (a *App) Close() error {
	if a.stopSweep != nil {
		a.stopSweep()
	}
	a.Agent.StopResuming() // a run resuming ends before its workers and store go
	a.closeWorkers()
	return a.Store.Close()
}

func (a *App) closeWorkers() {
	if a.Workers != nil {
		a.Workers.Close()
	}
}

// RunRequest is a client's program (POST /v1/run, codemode run).
type RunRequest struct {
	Code        string
	Description string
	Scope       string // for a new session: default "default"
	SessionID   string // default: a new session
	Timeout     time.Duration
	// Hold, when positive, lets the run suspend when a call's ask waits
	// this long (approvals.hold over HTTP): the result has Status
	// "suspended" and the run resumes by replay once its asks are answered.
	// An ephemeral run never suspends.
	Hold time.Duration
	// Ephemeral deletes the new session once the run has its result (the
	// result still comes back, with SessionDeleted set). It applies only to
	// the session a run without SessionID creates.
	Ephemeral bool
}

// RunResult is the result of POST /v1/run and codemode run --json: the
// run_code result in its wire form, with its value and its settled SDK
// calls (each the payload of its tool/code-dispatch event) in submission
// order.
type RunResult struct {
	SessionID string `json:"session_id"`
	// SessionDeleted reports that the session was deleted after the run
	// (RunRequest.Ephemeral): SessionID names it only for the logs.
	SessionDeleted bool                    `json:"session_deleted,omitempty"`
	CallID         string                  `json:"call_id"`
	IsError        bool                    `json:"is_error"`
	Value          json.RawMessage         `json:"value"`
	Content        []registry.ContentBlock `json:"content"`
	Error          *runtime.ErrorInfo      `json:"error"`
	Calls          []session.CodeDispatch  `json:"calls"`
	// CallsTrimmed counts calls whose arguments or content were cut, and
	// CallsOmitted calls left out of Calls, to keep the reply bounded; the
	// session log has them whole.
	CallsTrimmed  int                `json:"calls_trimmed,omitempty"`
	CallsOmitted  int                `json:"calls_omitted,omitempty"`
	Contexts      []registry.Context `json:"contexts"`
	ConcludesTurn bool               `json:"concludes_turn"`
	// Status is StatusCompleted, or StatusSuspended for a run that waits for
	// PendingApprovals: its result comes later, from
	// GET /v1/sessions/{id}/calls/{call_id} and the session's events.
	Status           string                  `json:"status"`
	PendingApprovals []agent.PendingApproval `json:"pending_approvals,omitempty"`
}

// The statuses of a RunResult.
const (
	StatusCompleted = "completed"
	StatusSuspended = "suspended"
)

// PendingOf lists the session's pending asks that belong to the runs
// callIDs (their own, and their sub-calls').
func (a *App) PendingOf(ctx context.Context, sessionID string, callIDs ...string) ([]agent.PendingApproval, error) {
	all, err := a.Agent.Approvals(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	return agent.AsksOf(all, callIDs...), nil
}

// ErrUnknownScope reports a scope that does not exist.
var ErrUnknownScope = errors.New("unknown scope")

// Run is a client's entry to Code Mode (POST /v1/run, codemode run): the
// program runs in the session SessionID names (in its scope; Scope is then
// ignored) or in a new session of Scope, logged like a model's run_code
// call, and the result comes back in its wire form. A run without SessionID
// creates its session (unless Ephemeral, it stays, like any other).
func (a *App) Run(ctx context.Context, req RunRequest) (RunResult, error) {
	out, gate, err := a.RunGated(ctx, req)
	if err == nil {
		err = gate.Wait(context.WithoutCancel(ctx))
	}
	if err != nil {
		return RunResult{}, err
	}
	return out, nil
}

// RunGated is Run with output gating: the result comes back as soon as it
// is known, with the gate that opens when the run's log is durable. The
// caller builds its reply meanwhile and must not send it before Wait
// returns nil; an error from Wait fails the run as Run would have. An
// ephemeral run waits itself (its session is deleted once durable) and
// returns an open gate.
func (a *App) RunGated(ctx context.Context, req RunRequest) (RunResult, *agent.Gate, error) {
	sessionID := req.SessionID
	var create *session.Session
	if sessionID == "" {
		// The new session is created with the run's first write: no flush of
		// its own.
		s, err := a.newSession(req.Scope)
		if err != nil {
			return RunResult{}, nil, err
		}
		sessionID, create = s.ID, &s
	}
	ephemeral := req.Ephemeral && create != nil
	hold := req.Hold
	if ephemeral {
		hold = 0 // its session goes with the result: nothing could resume it
	}
	rep, err := a.Agent.Run(ctx, sessionID, req.Code, req.Description, agent.RunOptions{Timeout: req.Timeout, Hold: hold, Create: create, Gated: !ephemeral})
	if err != nil {
		return RunResult{}, nil, err
	}
	res, calls := rep.Result, rep.Calls
	wire := session.ResultOf(res)
	out := RunResult{
		Status:        StatusCompleted,
		SessionID:     sessionID,
		CallID:        res.CallID(),
		IsError:       wire.IsError,
		Value:         json.RawMessage("null"),
		Content:       wire.Content,
		Error:         wire.Error,
		Calls:         calls,
		CallsTrimmed:  rep.Trimmed,
		CallsOmitted:  rep.Omitted,
		Contexts:      wire.Contexts,
		ConcludesTurn: wire.ConcludesTurn,
	}
	if out.Calls == nil {
		out.Calls = []session.CodeDispatch{}
	}
	if res.Code() == registry.CodeSuspended {
		out.Status = StatusSuspended
		if out.PendingApprovals, err = a.PendingOf(ctx, sessionID, out.CallID); err != nil {
			return RunResult{}, nil, err
		}
	}
	if !res.Value().IsZero() {
		out.Value = res.Value().Bytes()
	}
	if ephemeral {
		// The result is in hand and its log durable (Run waited): the
		// session goes even if the caller left.
		if err := a.Store.DeleteSession(context.WithoutCancel(ctx), sessionID); err != nil {
			a.Logger.Warn("ephemeral run: delete its session", "session", sessionID, "err", err)
		} else {
			out.SessionDeleted = true
		}
	}
	return out, rep.Gate, nil
}

// NewSession creates a session in a scope ("" means default).
func (a *App) NewSession(ctx context.Context, scope string) (session.Session, error) {
	s, err := a.newSession(scope)
	if err != nil {
		return session.Session{}, err
	}
	if err := a.Store.CreateSession(ctx, s); err != nil {
		return session.Session{}, err
	}
	return a.Store.GetSession(ctx, s.ID)
}

// newSession mints a session of scope ("" means default) without storing it.
func (a *App) newSession(scope string) (session.Session, error) {
	if scope == "" {
		scope = config.DefaultScope
	}
	if !a.Registry.HasScope(scope) {
		return session.Session{}, fmt.Errorf("%w %q", ErrUnknownScope, scope)
	}
	return session.Session{ID: session.NewID(), Scope: scope}, nil
}
