package sandbox

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/dop251/goja"
)

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

// describeThrown turns a value the program threw (or rejected with) into a failure message:
// an Error as "name: message" (a ToolCallError also names its tool), a string as itself,
// anything else as the console would show it. It never fails: a value whose inspection throws
// gets a fixed description. Runs on the VM goroutine, inside the VM.
func (r *run) describeThrown(v goja.Value) string {
	var msg string
	if ex := r.rt.Try(func() { msg = r.describe(v) }); ex != nil || msg == "" {
		msg = "the program threw a value that cannot be described"
	}
	if len(msg) > maxMessageBytes {
		msg = truncateUTF8(msg, maxMessageBytes) + "…"
	}
	return msg
}

func (r *run) describe(v goja.Value) string { return r.describeAt(v, 0) }

// maxErrorNesting bounds how deep a description follows causes and an AggregateError's
// errors; maxAggregated bounds how many of its errors it lists.
const (
	maxErrorNesting = 3
	maxAggregated   = 10
)

// describeAt describes v as an error nested depth levels inside the one thrown: an Error's
// own cause and an AggregateError's errors follow on lines of their own, indented, as Node
// prints them ("[cause]: …", "[errors]: …").
func (r *run) describeAt(v goja.Value, depth int) string {
	o, ok := v.(*goja.Object)
	if !ok {
		if v != nil && goja.IsString(v) {
			return v.String()
		}
		return r.formatLog([]goja.Value{v}, maxMessageBytes+1)
	}
	if o.ExportType() == proxyType || o.ClassName() != "Error" {
		return r.formatLog([]goja.Value{v}, maxMessageBytes+1)
	}
	name, msg := "Error", ""
	if n := o.Get("name"); n != nil && !goja.IsUndefined(n) {
		name = n.String()
	}
	if m := o.Get("message"); m != nil && !goja.IsUndefined(m) {
		msg = m.String()
	}
	var text string
	switch {
	case name == "ToolCallError":
		tool := ""
		if t := o.Get("toolName"); t != nil && !goja.IsUndefined(t) {
			tool = t.String()
		}
		text = fmt.Sprintf("ToolCallError: %s (from tool %s)", msg, tool)
	case msg != "":
		if name == "TypeError" {
			msg = r.v8TypeError(msg, o.Get("stack"))
		}
		text = name + ": " + msg + hostHint(name, msg)
	default:
		text = name
	}
	if st := o.Get("stack"); st != nil && goja.IsString(st) {
		text += r.errorLocation(st.String())
	}
	if depth >= maxErrorNesting {
		return text
	}
	indent := strings.Repeat("  ", depth+1)
	if errs, ok := o.Get("errors").(*goja.Object); ok && name == "AggregateError" && errs.ClassName() == "Array" {
		n := int(errs.Get("length").ToInteger())
		text += "\n" + indent + "[errors]:"
		for i := 0; i < n && i < maxAggregated; i++ {
			text += "\n" + indent + "  " + r.describeAt(errs.Get(strconv.Itoa(i)), depth+2)
		}
		if n > maxAggregated {
			text += fmt.Sprintf("\n%s  … and %d more", indent, n-maxAggregated)
		}
	}
	if o.GetOwnPropertyNames() != nil && hasOwn(o, "cause") {
		text += "\n" + indent + "[cause]: " + r.describeAt(o.Get("cause"), depth+1)
	}
	return text
}

// hasOwn reports whether o has an own property named key.
func hasOwn(o *goja.Object, key string) bool {
	for _, k := range o.GetOwnPropertyNames() {
		if k == key {
			return true
		}
	}
	return false
}

// stackFrame matches a frame of the program in a goja stack trace: program.js or program.ts
// (through esbuild's source map), line and column of the wrapped source. Frames in esbuild's
// helpers are named otherwise and never match.
var stackFrame = regexp.MustCompile(`\bprogram\.(?:js|ts):(\d+):(\d+)`)

// errorLocation finds the innermost frame of the program in an error's stack and renders it in
// the model's lines and columns, " (at line 3:7)"; "" when there is none.
func (r *run) errorLocation(stack string) string {
	for _, m := range stackFrame.FindAllStringSubmatch(stack, 8) {
		line, err1 := strconv.Atoi(m[1])
		col, err2 := strconv.Atoi(m[2])
		if err1 != nil || err2 != nil {
			continue
		}
		if l, c, ok := r.prog.frame(line, col); ok {
			return fmt.Sprintf(" (at line %d:%d)", l, c)
		}
	}
	return ""
}

// gojaReadError and gojaCallErrors are goja's words for reading a property of undefined or
// null (goja says "of undefined" for both) and for calling what is not a function.
var (
	gojaReadError  = regexp.MustCompile(`^Cannot read property '(.*)' of undefined(?: or null)?$`)
	gojaCallErrors = regexp.MustCompile(`^(?:Value is not an object: .*|Object has no member '(.*)')$`)
)

// v8TypeError words a TypeError of goja's as V8 does, for the failure a model reads:
// "Cannot read properties of undefined or null (reading 'x')" (V8 names which; goja does not
// know), "o.a.bar is not a function" (the callee as the program wrote it, found at the
// error's position in the program). Other messages are returned as they are. The program's
// own e.message is goja's: goja gives no hook where its errors are made.
func (r *run) v8TypeError(msg string, stack goja.Value) string {
	if m := gojaReadError.FindStringSubmatch(msg); m != nil {
		return "Cannot read properties of undefined or null (reading '" + m[1] + "')"
	}
	m := gojaCallErrors.FindStringSubmatch(msg)
	if m == nil {
		return msg
	}
	if stack != nil && goja.IsString(stack) {
		if f := stackFrame.FindStringSubmatch(stack.String()); f != nil {
			line, _ := strconv.Atoi(f[1])
			col, _ := strconv.Atoi(f[2])
			if callee := r.prog.calleeAt(line, col); callee != "" {
				return callee + " is not a function"
			}
		}
	}
	if m[1] != "" {
		return m[1] + " is not a function"
	}
	return msg
}

// hostHints explain the globals a program written for Node, Deno or a browser reaches for.
var hostHints = map[string]string{
	"require":        moduleHint,
	"module":         moduleHint,
	"exports":        moduleHint,
	"__dirname":      moduleHint,
	"__filename":     moduleHint,
	"process":        "there is no process object (no environment, arguments or exit); " + toolsHint,
	"Buffer":         "there is no Buffer; use Uint8Array, TextEncoder/TextDecoder and atob/btoa",
	"fetch":          "there is no network; " + toolsHint,
	"XMLHttpRequest": "there is no network; " + toolsHint,
	"WebSocket":      "there is no network; " + toolsHint,
	"Deno":           "this is not Deno; " + toolsHint,
	"Bun":            "this is not Bun; " + toolsHint,
	"window":         "this is not a browser (use globalThis); " + toolsHint,
	"document":       "this is not a browser: there is no DOM; " + toolsHint,
	"localStorage":   "there is no storage; " + toolsHint,
}

const toolsHint = "call tools through the global `tools` object (for example `const r = await tools.<name>(args)`)"

// hostHint returns the hint for a ReferenceError "<name> is not defined" about a host global.
func hostHint(name, msg string) string {
	if name != "ReferenceError" || !strings.HasSuffix(msg, " is not defined") {
		return ""
	}
	if h, ok := hostHints[strings.TrimSuffix(msg, " is not defined")]; ok {
		return ": " + h
	}
	return ""
}
