package runtime

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/codemode/codemode/registry"
	"github.com/codemode/codemode/registry/frozen"
)

// dispatch runs the around chain with the body innermost, then makes the
// outcome canonical.
func (rt *Runtime) dispatch(e *execution, p hookSet) pending {
	rt.traceStage(StageAround, e)
	next := rt.body(e)
	for i := len(p.around) - 1; i >= 0; i-- {
		next = wrap(p.around[i], e.call, next)
	}
	return rt.canonical(e, next(e.callerCtx))
}

// wrap mounts one around wrapper; a panic inside it becomes a failure.
func wrap(a Around, c Call, next Next) Next {
	return func(ctx context.Context) (out Outcome) {
		if l, ok := ctx.(*lineage); ok {
			l.crossed.Store(true)
		}
		defer func() {
			if r := recover(); r != nil {
				out = Outcome{Err: &registry.Error{Code: registry.CodeInternal, Message: (&registry.PanicError{Where: "around wrapper", Value: r}).Error()}}
			}
		}()
		return a(ctx, c, next)
	}
}

// body is the innermost step. Immediately before the body it fuses the
// wrapper's context with the caller's, so a wrapper can never sever caller
// cancellation; the fused context is released when the body returns.
func (rt *Runtime) body(e *execution) Next {
	return func(ctx context.Context) Outcome {
		if ctx == nil {
			ctx = e.callerCtx
		}
		if e.callerCtx.Err() != nil || ctx.Err() != nil {
			cause := context.Cause(e.callerCtx)
			if cause == nil {
				cause = context.Cause(ctx)
			}
			return Outcome{Err: &registry.Error{Code: registry.CodeAbortedBeforeDispatch, Message: fmt.Sprintf("%s was cancelled before dispatch: %v", e.call.Name, cause)}}
		}
		switch l, derived := ctx.(*lineage); {
		case ctx == e.callerCtx:
		case derived && l.e == e && !l.crossed.Load():
			// Already under the caller's cancellation, and released by the
			// wrapper that made it as soon as the body returns.
		case derived && l.e == e:
			// Under the caller's cancellation, but another wrapper runs
			// after the body: release the body's context on its return.
			fused, cancel := context.WithCancel(ctx)
			defer cancel()
			ctx = fused
		default:
			fused, cancel := context.WithCancelCause(ctx)
			stop := context.AfterFunc(e.callerCtx, func() { cancel(context.Cause(e.callerCtx)) })
			defer func() {
				stop()
				cancel(nil)
			}()
			ctx = fused
		}
		if e.argsErr != nil {
			return Outcome{Err: e.argsErr}
		}
		e.mu.Lock()
		e.started = true
		e.mu.Unlock()
		rt.traceStage(StageBody, e)
		if body := rt.nestingBody(e); body != nil {
			v, err := body(ctx, &Nesting{Exec: e, Parent: e.call.Token, Approver: e.approver, View: e.view, Run: e.run}, e.call.Args)
			return Outcome{Value: v, Err: err}
		}
		v, err := e.call.Tool.Body(ctx, e, e.call.Args)
		return Outcome{Value: v, Err: err}
	}
}

// lineage is a context a runtime wrapper derived, through the context
// tree, from its execution's caller context (or from another lineage of
// it), so caller cancellation already reaches it. The wrapper cancels it as
// soon as its next returns; crossed means another wrapper ran below it, so
// the body's return no longer releases it at once.
type lineage struct {
	context.Context
	e       *execution
	crossed atomic.Bool
}

// derive marks tctx, derived from ctx by a wrapper of c that cancels it
// when its next returns, as a lineage when ctx is already one (or the
// caller's context); otherwise it returns tctx as is.
func derive(c Call, ctx, tctx context.Context) context.Context {
	if c.Token.p == nil || c.Token.p.e == nil {
		return tctx
	}
	e := c.Token.p.e
	if l, ok := ctx.(*lineage); ctx != e.callerCtx && !(ok && l.e == e) {
		return tctx
	}
	return &lineage{Context: tctx, e: e}
}

func (e *execution) bodyStarted() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.started
}

// canonical turns an outcome into a pending result: failures are normalized
// by layer; a value crosses three boundaries (lossless snapshot, output
// schema, freeze) and is then rendered, with presentationMeta for top-level
// calls.
func (rt *Runtime) canonical(e *execution, out Outcome) pending {
	if out.Err != nil {
		p := rt.bodyFailure(e, out.Err)
		p.contexts = registry.CloneContexts(out.Contexts)
		return p
	}
	if e.callerCtx.Err() != nil {
		return pending{
			err:      &ErrorInfo{Code: registry.CodeAborted, Message: fmt.Sprintf("%s was cancelled; its result was discarded", e.call.Name)},
			content:  []registry.ContentBlock{registry.Text(fmt.Sprintf("%s was cancelled; its result was discarded", e.call.Name))},
			contexts: registry.CloneContexts(out.Contexts),
		}
	}
	p, err := settleValue(e.call, e.call.Tool, out.Value)
	if err != nil {
		p = failed(err)
	}
	p.contexts = registry.CloneContexts(out.Contexts)
	return p
}

// settleValue snapshots, validates, renders and (top-level) adds meta.
func settleValue(c Call, t *registry.Tool, v any) (pending, error) {
	val, err := frozen.Snapshot(v)
	if err != nil {
		return pending{}, &registry.Error{Code: registry.CodeInvalidToolOutput, Message: fmt.Sprintf("%s returned a value that is not JSON: %v", c.Name, err)}
	}
	if err := t.ValidateOutputOf(v, val); err != nil {
		return pending{}, err
	}
	content, err := t.Render(c.Args, val)
	if err != nil {
		return pending{}, err
	}
	p := pending{value: val, content: content}
	if !c.Nested() {
		m, err := t.Meta(c.Args, val)
		if err != nil {
			return pending{}, fmt.Errorf("presentationMeta of %s: %w", c.Name, err)
		}
		p.meta = m
	}
	return p, nil
}

// bodyFailure normalizes an error from the around/body layer.
func (rt *Runtime) bodyFailure(e *execution, err error) pending {
	if re := asRegistryError(err); re != nil {
		return failed(re)
	}
	if e.callerCtx.Err() != nil && (registry.ErrorIs(err, context.Canceled) || registry.ErrorIs(err, context.DeadlineExceeded)) {
		return failed(&registry.Error{Code: registry.CodeAborted, Message: fmt.Sprintf("%s was cancelled: %s", e.call.Name, registry.SafeString(err))})
	}
	return failed(&registry.Error{Code: registry.CodeToolFailed, Message: registry.SafeString(err)})
}

// asRegistryError finds an *registry.Error in err's chain; a hostile chain
// (an Unwrap that panics, a cycle) counts as none.
func asRegistryError(err error) *registry.Error {
	re, _ := registry.ErrorAs[*registry.Error](err)
	return re
}

// normalize maps any error to an ErrorInfo and content. It is total: no
// error value, however hostile, makes it fail.
func normalize(err error, def registry.Code) (*ErrorInfo, []registry.ContentBlock) {
	if re := asRegistryError(err); re != nil {
		info := &ErrorInfo{Code: re.Code, Kind: re.Kind, Message: re.Message}
		if info.Code == "" {
			info.Code = def
		}
		if info.Message == "" {
			info.Message = string(info.Code)
		}
		if re.Content != nil {
			return info, registry.CloneContent(re.Content)
		}
		return info, []registry.ContentBlock{registry.Text(info.Message)}
	}
	msg := registry.SafeString(err)
	if msg == "" {
		msg = "unknown error"
	}
	return &ErrorInfo{Code: def, Message: msg}, []registry.ContentBlock{registry.Text(msg)}
}

// postPolicy runs the post hooks in order over a dispatched result.
func (rt *Runtime) postPolicy(e *execution, p hookSet, out pending) pending {
	rt.traceStage(StagePostPolicy, e)
	for _, hook := range p.post {
		view := PostView{Value: out.value, Content: registry.CloneContent(out.content), Meta: out.meta, IsError: out.err != nil}
		if out.err != nil {
			view.Code = out.err.Code
		}
		d, err := callPost(hook, e.callerCtx, e.call, view)
		if err != nil {
			f := failed(fmt.Errorf("post-policy failed: %w", err))
			if re := asRegistryError(err); re != nil {
				f = failed(re)
			}
			f.contexts = out.contexts
			return f
		}
		switch d.kind {
		case postBlock:
			fb := orDefault(d.feedback, "blocked by policy")
			return pending{
				err:      &ErrorInfo{Code: registry.CodeDenied, Message: fb},
				content:  []registry.ContentBlock{registry.Text(fb)},
				contexts: registry.CloneContexts(d.contexts),
				dropTool: true,
			}
		case postValue:
			if out.err != nil {
				f := failed(&registry.Error{Code: registry.CodeInternal, Message: "post-policy cannot replace the value of a failed result"})
				f.contexts = out.contexts
				return f
			}
			next, err := rt.replaceValue(e, d.value)
			if err != nil {
				f := failed(err)
				f.contexts = out.contexts
				return f
			}
			next.contexts = out.contexts
			out = next
		case postContent:
			out.content = registry.CloneContent(d.content)
		}
		out.contexts = append(out.contexts, registry.CloneContexts(d.contexts)...)
	}
	return out
}

// replaceValue revalidates and re-renders a replacement value against the
// tool visible now; a tool that disappeared cannot take one.
func (rt *Runtime) replaceValue(e *execution, v any) (pending, error) {
	view, err := rt.reg.View(e.call.Scope)
	if err != nil {
		return pending{}, &registry.Error{Code: registry.CodeInternal, Message: fmt.Sprintf("post-policy replaced the value of %s, but its scope is gone", e.call.Name)}
	}
	t, ok := view.Get(e.call.Name)
	if !ok {
		return pending{}, &registry.Error{Code: registry.CodeInternal, Message: fmt.Sprintf("post-policy replaced the value of %s, but the tool is no longer registered", e.call.Name)}
	}
	return settleValue(e.call, t, v)
}

func callPost(hook PostPolicy, ctx context.Context, c Call, v PostView) (d PostDecision, err error) {
	defer func() {
		if r := recover(); r != nil {
			d, err = PostDecision{}, &registry.PanicError{Where: "post-policy", Value: r}
		}
	}()
	return hook(ctx, c, v)
}

// finalizeResult runs finalizeContent (captured at identity) exactly once
// and freezes the result.
func (rt *Runtime) finalizeResult(e *execution, out pending) *Result {
	rt.traceStage(StageFinalize, e)
	toolContexts, concludes := e.deferred()
	if e.finalize != nil {
		f := registry.Final{Content: registry.CloneContent(out.content), IsError: out.err != nil, Value: out.value}
		if out.err != nil {
			f.Code = out.err.Code
		}
		blocks, err := callFinalize(e.finalize, e.call.Args, f)
		switch {
		case err != nil:
			msg := fmt.Sprintf("finalizeContent of %s failed: %s", e.call.Name, registry.SafeString(err))
			out.err = &ErrorInfo{Code: registry.CodeInternal, Message: msg}
			out.value, out.meta = frozen.Value{}, frozen.Value{}
			out.content = []registry.ContentBlock{registry.Text(msg)}
		case blocks != nil:
			out.content = registry.CloneContent(blocks)
		}
	}
	r := &Result{
		callID:      e.call.CallID,
		name:        e.call.Name,
		value:       out.value,
		content:     out.content,
		err:         out.err,
		meta:        out.meta,
		bodyStarted: e.bodyStarted(),
	}
	if r.err != nil {
		r.value = frozen.Value{}
	}
	if !out.dropTool {
		r.contexts = append(toolContexts, out.contexts...)
		r.concludesTurn = concludes
	} else {
		r.contexts = out.contexts
	}
	if len(r.contexts) == 0 {
		r.contexts = nil
	}
	return r
}

func callFinalize(fn registry.FinalizeFunc, args frozen.Value, f registry.Final) (blocks []registry.ContentBlock, err error) {
	defer func() {
		if r := recover(); r != nil {
			blocks, err = nil, &registry.PanicError{Where: "finalizeContent", Value: r}
		}
	}()
	return fn(args, f), nil
}

// observe hands the frozen result to every observer; panics are contained.
func (rt *Runtime) observe(e *execution, p hookSet, r *Result) {
	rt.traceStage(StageObservers, e)
	for _, o := range p.observers {
		func() {
			defer func() { _ = recover() }()
			o(e.call, r)
		}()
	}
}

// nestingBody is the nesting body when e's tool is the code transport.
func (rt *Runtime) nestingBody(e *execution) NestingBody {
	if e.call.Name != registry.RunCode || e.call.Tool != rt.reg.CodeTransport() {
		return nil
	}
	rt.mu.RLock()
	defer rt.mu.RUnlock()
	return rt.nesting
}
