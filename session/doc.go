// Package session is the durable, append-only session log.
//
// The agent loop appends a tool/call before it runs a call and a tool/result
// after, in model order; the Code Mode bridge appends the nested
// tool/code-dispatch-start and tool/code-dispatch events of a run_code call;
// approvals and additional contexts are logged beside them. Every event gets a
// per-session sequence number (1, 2, 3, … with no gaps) from the [Store] that
// holds it: SQLite by default (package session/sqlite), PostgreSQL when
// several replicas share one log (session/postgres), or memory for tests
// ([NewMemory]). [Open] picks one from a store URL by its scheme, among the
// backends registered with [Register]; [Shared] says whether other
// processes may use a store at once.
//
// # Writing
//
// Every store commits in groups: the writes of all sessions that arrive while
// a commit is under way join the next one, one transaction and one flush
// (see [Durability]). [Store.Submit] queues a [Write] — events, optionally
// the session's creation and a [Checkpoint], optionally fenced by a [Lease] —
// and returns a [Ticket] at once; the ticket resolves when the write is
// durable. Writes of one session take effect, and tickets resolve, in the
// order submitted, so a caller that gates its output on its latest ticket
// shows nothing the log could still lose. [Store.Append] is Submit and
// Wait. Leases ([Store.AcquireLease]) keep two processes from stepping one
// session at once; checkpoints let a reader resume from derived state and
// the events after it; [Store.ListSessions], [Store.DeleteSession] and
// [Store.Prune] manage sessions' lifetimes.
//
// The log is the only state a session has. [Messages] rebuilds the
// model-facing conversation from it, [Timeline] the human view that
// `codemode replay` prints, and [Store.OpenCalls] lists the calls a crashed
// process left without a result so that recovery can close them. Writers
// give every model response its own (turn, step): replay groups the
// tool/calls of one response into one assistant message by that pair.
//
// # Backends
//
// A store is built from this package's kit, so that a backend is a package
// of its own: a [Committer] (NewCommitter over the backend's commit of a
// batch of [Pending] writes) runs the group commit and resolves the
// tickets; [Waiters] implement Wait; a [Core], embedded, implements
// Submit, Append, CreateSession, Wait and WriteErr over those two, runs
// Prune's rounds (Core.Prune over the backend's round) and keeps the closed
// state; [PrepareWrite], [CheckLease],
// [CheckRetention] and [SessionFilter.Page] check arguments;
// [AppendBySubmit] and [CreateBySubmit] implement Append and CreateSession
// over Submit; [Leased], [LeaseLost], [CheckpointPastLog] and [Unavailable]
// make the errors the contract names; [Migrations] reads a schema. A
// backend registers a [Backend] for its schemes, and runs the conformance
// suite of package session/sessiontest.
//
// # JSON
//
// Payload fields use snake_case (call_id, is_error, sub_call_id, …), like the
// HTTP API. An event marshals flat: {"seq":1,"type":"tool/call","time":"…",
// "turn":1,"step":1,"call_id":"c1","name":"math_add","arguments":"{…}"}.
// Event.Data holds the type-specific fields verbatim: the store keeps its bytes
// exactly, so numbers too big for float64, -0 and unusual escapes survive.
package session
