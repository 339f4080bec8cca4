package runtime

import (
	"context"
	"time"

	"github.com/codemode/codemode/registry"
	"github.com/codemode/codemode/registry/frozen"
)

// Token identifies one execution. The runtime mints it; a caller cannot
// choose, forge or serialize one (it has no exported state and no JSON form).
// The zero Token means "none" (a top-level call has no parent).
type Token struct{ p *tokenState }

// tokenState is what a token points at: its execution (nil for tokens made
// outside the runtime). Non-zero size: every token is a distinct pointer.
type tokenState struct{ e *execution }

// IsZero reports whether t is the zero Token.
func (t Token) IsZero() bool { return t.p == nil }

// MarshalJSON refuses: tokens are never serialized.
func (t Token) MarshalJSON() ([]byte, error) {
	return nil, errTokenSerialize
}

var errTokenSerialize = registry.Errorf(registry.CodeInternal, "execution tokens cannot be serialized")

// Call is what every stage sees of an execution. Stages receive it by value,
// and every field is immutable (Args is frozen), so no stage can change what
// later stages, the body or the log see.
type Call struct {
	Token     Token
	Parent    Token // zero for a top-level call
	CallID    string
	Name      string
	Scope     string
	SessionID string
	Args      frozen.Value
	Tool      *registry.Tool // the definition resolved when the call started
	// Started is when the call entered the pipeline (its identity stage):
	// an observer's time.Since(Started) is the call's whole duration.
	Started time.Time
}

// Nested reports whether the call is an SDK sub-call.
func (c Call) Nested() bool { return !c.Parent.IsZero() }

// Decision is a pre-policy verdict: Allow, Deny or Ask. There is no rewrite
// arm: arguments were logged before policy ran.
type Decision struct {
	kind   decisionKind
	reason string
}

type decisionKind uint8

const (
	decideAllow decisionKind = iota
	decideDeny
	decideAsk
)

// Allow lets the call continue to the next stage.
func Allow() Decision { return Decision{kind: decideAllow} }

// Deny refuses the call with a reason (DENIED).
func Deny(reason string) Decision { return Decision{kind: decideDeny, reason: reason} }

// Ask routes the call to the Approver with a reason.
func Ask(reason string) Decision { return Decision{kind: decideAsk, reason: reason} }

// PrePolicy decides whether a call may proceed. A returned *registry.Error
// keeps its code; any other error (or a panic) fails the call without
// running the body.
type PrePolicy func(ctx context.Context, c Call) (Decision, error)

// Guard is an owner veto: it returns a non-empty reason to deny, "" to
// abstain. A veto is final; a panicking guard denies.
type Guard func(ctx context.Context, c Call) (veto string)

// Outcome is what the body stage produces and around wrappers pass along.
type Outcome struct {
	Value    any   // the canonical value candidate (when Err is nil)
	Err      error // an *registry.Error chooses the failure code
	Contexts []registry.Context
}

// Next runs the rest of the around chain and then the body under ctx fused
// with the caller's context.
type Next func(ctx context.Context) Outcome

// Around wraps the body (timeouts, retries, metrics). It may replace the
// context it passes to next, call next several times or not at all, and add
// contexts. Whatever it returns is validated like a body's value.
type Around func(ctx context.Context, c Call, next Next) Outcome

// Result view for post-policy.
type PostView struct {
	IsError bool
	Code    registry.Code
	Value   frozen.Value
	Content []registry.ContentBlock
	Meta    frozen.Value
}

// PostDecision is a post-policy verdict, one of four: Accept (the zero
// value: keep the result as it is), ReplaceContent (value and meta kept),
// ReplaceValue (revalidated and re-rendered; never for a failed result) or
// Block (a valueless failure whose content is the feedback). There is no way
// to replace both content and value. Every verdict may attach contexts; a
// block keeps only its own.
type PostDecision struct {
	kind     postKind
	content  []registry.ContentBlock
	value    any
	feedback string
	contexts []registry.Context
}

type postKind uint8

const (
	postAccept postKind = iota
	postContent
	postValue
	postBlock
)

// Accept keeps the result, adding contexts.
func Accept(contexts ...registry.Context) PostDecision {
	return PostDecision{contexts: contexts}
}

// ReplaceContent replaces the model-facing content; the value and meta stay.
func ReplaceContent(content []registry.ContentBlock, contexts ...registry.Context) PostDecision {
	return PostDecision{kind: postContent, content: registry.CloneContent(content), contexts: contexts}
}

// ReplaceValue replaces the canonical value, which is validated against the
// tool's output schema and rendered again as if the body had returned it.
func ReplaceValue(value any, contexts ...registry.Context) PostDecision {
	return PostDecision{kind: postValue, value: value, contexts: contexts}
}

// Block turns the call into a valueless DENIED failure whose content is
// feedback ("blocked by policy" when empty) and whose contexts are only
// these.
func Block(feedback string, contexts ...registry.Context) PostDecision {
	return PostDecision{kind: postBlock, feedback: feedback, contexts: contexts}
}

// PostPolicy inspects the settled result of a dispatched call.
type PostPolicy func(ctx context.Context, c Call, r PostView) (PostDecision, error)

// Observer receives every final result, frozen. It can change nothing; a
// panic is contained.
type Observer func(c Call, r *Result)

// Approver answers asks. The agent loop supplies one per call; without one
// an ask fails closed.
type Approver interface {
	Approve(ctx context.Context, req ApprovalRequest) ApprovalAnswer
}

// ApprovalRequest is an ask routed to a person.
type ApprovalRequest struct {
	Call   Call
	Reason string
	// Hold, when positive, lets the approver give up after Hold unanswered with
	// ApprovalSuspended, the ask left pending where it can be answered later
	// (Request.Hold).
	Hold time.Duration
	// Resumed: the call started before, in an execution of its run that
	// suspended or stopped; an ask it made then is the one to wait for
	// (Request.Resumed).
	Resumed bool
}

// ApprovalOutcome is how an ask ended.
type ApprovalOutcome uint8

const (
	// ApprovalNone: nobody answered (timed out, or the approver gave up).
	ApprovalNone ApprovalOutcome = iota
	// ApprovalAllowOnce dispatches this call.
	ApprovalAllowOnce
	// ApprovalRejected denies with the person's reason.
	ApprovalRejected
	// ApprovalCancelled: the ask was withdrawn.
	ApprovalCancelled
	// ApprovalSuspended: nobody answered within ApprovalRequest.Hold; the
	// ask stays pending and the call fails with SUSPENDED, for its run to
	// suspend and resume once it is answered.
	ApprovalSuspended
)

// ApprovalAnswer is an Approver's answer.
type ApprovalAnswer struct {
	Outcome ApprovalOutcome
	Reason  string
}
