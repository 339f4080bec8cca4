package sandbox

import "context"

// Host is the sandbox's only way out of the VM: it dispatches tool calls and says which tool
// bindings exist. Everything that crosses is data (names, JSON text, messages), so a Host can
// sit in another process.
type Host interface {
	// Call dispatches one tools[c.Name](args) call whose argument passed the JSON snapshot.
	// It runs on the VM goroutine and must return promptly: do the work elsewhere. The host
	// must call settle exactly once, from any goroutine, at any later time or before Call
	// returns. Calling settle again, or after the run ended, is a harmless no-op. Call is never
	// invoked after Run has returned. A panic in Call rejects that call with a ToolCallError.
	Call(c Call, settle func(Settlement))
	// Has reports whether name is a tool binding. It is asked on every tools.<name> access.
	Has(name string) bool
	// Names lists the tool bindings in order (for Object.keys(tools) and for … in).
	Names() []string
}

// Holder is a Host that can hold the calls it is given until its Runner releases them, so that
// a call the program is left awaiting alone runs on the goroutine that would otherwise only wait
// for it: handing a call to another goroutine and its settlement back costs two wake-ups of
// other threads, which on a virtual machine are most of a fast tool call's cost. A Runner that
// releases calls says so by calling Hold before the program runs; until then, and with a Runner
// that never does, each call starts when Call is given it.
//
// The sandbox releases the calls a job of the program (its start, a settlement applied, a timer)
// made when that job ends, as a promise's work is done once the code that started it yields,
// and within the heap watchdog's interval of being made should the job go on computing.
type Holder interface {
	Host
	// Hold makes the calls given to Call from now on wait for Release.
	Hold()
	// Release starts the held calls. With alone set the program now awaits nothing but them (no
	// job is queued, no timer pending, no other call in flight): when just one call is held
	// Release may run it on the calling goroutine and return once it has settled (its settle
	// function has been called), reporting true; stop ends when the run is being stopped, and
	// the call must then end promptly. Otherwise it returns at once and reports false.
	Release(alone bool, stop context.Context) bool
}

// KeyedNames is a Host whose Names come from a set that changes rarely (a registry view): NamesKey
// identifies that set, equal keys meaning equal names, so a Runner that keeps the names
// elsewhere (a worker pool sends them to each worker once) need not list and compare them on
// every run. The key is never 0.
type KeyedNames interface {
	Host
	NamesKey() uint64
}

// Call is one tool call leaving the VM.
type Call struct {
	// Seq numbers the run's dispatched calls 1, 2, 3… in submission order. A call rejected in
	// the sandbox (bad argument) is never dispatched and takes no number.
	Seq  int
	Name string
	// Args is the argument as JSON text: a lossless snapshot taken when the call was made,
	// independent of later changes to the program's objects. A call with no argument sends {}.
	Args []byte
	// Line and Column are where in the program's own source the call was made (1-based; 0
	// when unknown), for messages that must say which call they mean.
	Line, Column int
	// Journal is the piece of the run's journal recorded since the previous call (see
	// [Replayer]): a host that resumes runs keeps the pieces, in order.
	Journal string
}

// Settlement is a tool call's outcome going back into the VM.
type Settlement struct {
	// Value is the tool's value as JSON text; empty means undefined. It is parsed with JSON
	// semantics (integers beyond 2^53 lose precision as JS numbers).
	Value []byte
	// Err, when set, rejects the program's promise with a ToolCallError carrying ToolName
	// (the called name when empty) and Message.
	Err *CallError
}

// CallError is a failed tool call as the program sees it: a tool name, a result code (such as
// "UNKNOWN_TOOL"; may be empty) and a message.
type CallError struct {
	ToolName string
	Code     string
	Message  string
}

// Error renders the error as "<tool>: <message>".
func (e *CallError) Error() string { return e.ToolName + ": " + e.Message }
