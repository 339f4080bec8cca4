package config

import (
	"testing"
	"time"

	"github.com/codemode/codemode/agent"
	"github.com/codemode/codemode/bridge"
	"github.com/codemode/codemode/examples/tools"
	"github.com/codemode/codemode/runtime"
	"github.com/codemode/codemode/sdkgen"
)

// TestDefaultsAreTheOwners pins that each default of Default is the one its
// owner applies to a zero option, so that a limit's default is written once
// (in the package that applies it) and a change there shows here. The
// limits app.Limits hands the sandbox are pinned all at once by app's
// TestDefaultLimitsAreTheSandboxs. The server.*, mcp_servers[].* and
// openapi_sources[].* defaults are this package's own: their owners (http,
// mcp, httpsource) import config.
func TestDefaultsAreTheOwners(t *testing.T) {
	d := Default()
	quotas := tools.DefaultQuotas()
	for _, c := range []struct {
		key       string
		got, want int64
	}{
		{"limits.max_parallel_sub_calls", int64(d.Limits.MaxParallelSubCalls), runtime.DefaultWindow},
		{"limits.max_content_bytes", int64(d.Limits.MaxContentBytes), bridge.DefaultMaxContentBytes},
		{"limits.max_sub_call_bytes", int64(d.Limits.MaxSubCallBytes), bridge.DefaultMaxSubCallBytes},
		{"approvals.timeout", int64(d.Approvals.Timeout), int64(agent.DefaultApprovalTimeout)},
		{"approvals.hold", int64(d.Approvals.Hold), int64(agent.DefaultHold)},
		{"sdk.prompt_budget", int64(d.SDK.PromptBudget), sdkgen.DefaultPromptBudget},
		{"server.max_mcp_sessions", int64(d.Server.MaxMCPSessions), DefaultMaxMCPSessions},
		{"demo_state.max_sessions", int64(d.DemoState.MaxSessions), int64(quotas.MaxSessions)},
		{"demo_state.max_total_bytes", int64(d.DemoState.MaxTotalBytes), quotas.MaxTotalBytes},
		{"demo_state.max_session_bytes", int64(d.DemoState.MaxSessionBytes), quotas.MaxSessionBytes},
		{"demo_state.max_entries", int64(d.DemoState.MaxEntries), int64(quotas.MaxEntries)},
		{"demo_state.max_value_bytes", int64(d.DemoState.MaxValueBytes), quotas.MaxValueBytes},
		{"demo_state.idle_ttl", int64(d.DemoState.IdleTTL), int64(quotas.IdleTTL)},
	} {
		if c.got != c.want {
			t.Errorf("%s: Default() has %d, its owner %d", c.key, c.got, c.want)
		}
	}
}

// TestDefaultPromptStatesDefaultLimits: the prompt of a zero
// sdkgen.PromptOptions (what the SDK endpoints and tests render) states
// the limits of a service configured with nothing.
func TestDefaultPromptStatesDefaultLimits(t *testing.T) {
	l := Default().Limits
	set := sdkgen.NewSet(nil)
	got := sdkgen.PromptWith(set, sdkgen.PromptOptions{})
	want := sdkgen.PromptWith(set, sdkgen.PromptOptions{
		Timeout: l.Timeout.Std(), MaxCalls: l.MaxSubCalls, MaxParallel: l.MaxParallelSubCalls,
		MaxLogBytes: int64(l.MaxLogBytes), MaxResultBytes: int64(l.MaxResultBytes),
	})
	if string(got) != string(want) {
		t.Errorf("the zero PromptOptions' prompt differs from the default limits':\n%s\n---\n%s", got, want)
	}
}

// TestLivenessFailsBeforeTheRunTimeout: an upstream that stops answering
// fails its calls before the default run timeout would (see the liveness
// defaults), leaving the program time to handle the failure.
func TestLivenessFailsBeforeTheRunTimeout(t *testing.T) {
	def := Liveness{}.Resolved()
	if run := time.Duration(Default().Limits.Timeout); def.FailAfter.Std() >= run {
		t.Errorf("liveness fails after %v, not before the run timeout %v", def.FailAfter.Std(), run)
	}
}

// TestMessageBoundHoldsTenReplies: ten upstream replies at the message
// bound stay under 200 MiB, as the bound's comment promises.
func TestMessageBoundHoldsTenReplies(t *testing.T) {
	if n := 10 * DefaultMaxMessageBytes; n >= 200<<20 {
		t.Errorf("ten messages of %d bytes are %d, not under 200 MiB", DefaultMaxMessageBytes, n)
	}
}
