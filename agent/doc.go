// Package agent is the step loop: it owns the durability of top-level tool
// calls.
//
// For one model response (a step), Agent.Step commits the additional
// contexts the previous step's results carried as user/context events, then
// runs the model's tool calls through a runtime.Batch: each call logs its
// tool/call at pipeline entry (committed before the body runs for a tool that
// may have effects; held to join the next write for a read-only tool and
// run_code, whose sub-calls write ahead on their own), runs the pipeline,
// and has its tool/result appended in model order. A step returns its
// results with a Gate that opens once every write of the step is durable
// (StepGated). Consecutive concurrency-safe calls overlap; an
// exclusive call is a barrier, in execution and in the log. A call that
// never started gets a synthetic aborted pair, so every tool/call has a
// result. A run_code call's nested dispatch events go to the same session
// through the agent's bridge.EventSink and land between its tool/call and
// tool/result.
//
// Asks from pre-policy become approval/asked events that any replica can list
// and answer (approval/answered); the waiting call resumes when the answer
// appears in the log. A run_code call made with a hold (RunOptions.Hold,
// StepOptions.Hold) suspends instead when one of its calls' asks waits
// longer: its tool/call stays open, the session takes no step, and once its
// asks are answered Resume runs it again by replay, on any replica
// (resume.go). An embedder may answer in Go instead: Options.Approver
// is called with each ask once it is logged and may Allow, Reject or Defer
// it to the log. Recover closes the calls a stopped process left open.
//
// Between requests the agent holds nothing the log does not: turn and step
// numbers, pending contexts and pending approvals are all derived from the
// log. It caches each session's folded state (a bounded number of sessions),
// but the cache only remembers how far the log was read and catches up on it
// before every step, so any process sharing the store can continue a
// session.
package agent
