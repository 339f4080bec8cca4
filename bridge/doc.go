// Package bridge is the run_code tool: it connects the SDK calls of a
// program running in the sandbox to runtime.Execute.
//
// The runtime runs run_code's body with a runtime.Nesting (the bridge is
// the runtime's nesting body): the call's token, approver and view, and the
// caller's runtime.RunOptions (the program's timeout, and the EventSink its
// nested events go to). Every binding call becomes a sub-call with id
// "<parent>:code:<n>", the run_code call's token as parent, resolved in the
// run's one view (the tools the program was shown, whatever the registry
// does meanwhile), and runs the whole pipeline. Calls
// start in submission order; consecutive concurrency-safe calls overlap up
// to MaxParallelSubCalls while pre-policy and post-policy keep submission
// order; an exclusive call drains the window, runs alone, and holds later
// calls back until it has settled. Each sub-call writes two log-only events
// to the run's EventSink (start at pipeline entry, settlement
// with content and times). When the program settles, in-flight sub-calls are
// cancelled, queued ones are abandoned (they log nothing), and run_code
// returns only after the in-flight ones drained, so every nested event lands
// inside the open turn. Sub-call contexts and image content are ferried onto
// the run_code result in submission order; a sub-call's conclusion is
// forwarded when the run succeeds.
//
// The program itself runs in a sandbox.Runner (Options.Runner): in this
// process, or in a worker process (package sandbox/worker) from which every
// SDK call crosses back here. Scheduling, the pipeline and the log are the
// same either way.
//
// A run whose caller sets runtime.RunOptions.Hold (and whose sink is a
// SuspendSink) may suspend: it keeps the program's journal and logs what
// replaying it needs, and when a sub-call's ask stays unanswered past the
// hold it stops the program and ends with SUSPENDED. Given a Resume
// (runtime.RunOptions.Resume), a run replays the logged execution and goes on
// live past it; a program that calls otherwise fails with REPLAY_DIVERGED
// (replay.go).
package bridge
