package sandbox

// Failure kinds reported in [Failure.Kind].
const (
	KindSyntax    = "syntax"    // the program does not compile
	KindRuntime   = "runtime"   // the program threw, returned non-JSON data, or can never finish
	KindTimeout   = "timeout"   // the run exceeded Options.Timeout
	KindLimit     = "limit"     // a resource limit was exceeded (stack, calls, logs, result size)
	KindCancelled = "cancelled" // the caller's context was cancelled
)

// Failure is why a program could not be compiled or did not complete. Message is meant for the
// model that wrote the program: it names what went wrong and, where known, where.
type Failure struct {
	Kind    string
	Message string
}

// Error renders the failure as "<kind>: <message>".
func (f *Failure) Error() string {
	if f == nil {
		return "<nil>"
	}
	return f.Kind + ": " + f.Message
}
