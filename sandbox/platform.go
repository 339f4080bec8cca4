package sandbox

import (
	"embed"
	"fmt"
	"regexp"
	"sync"
	"time"

	"github.com/dop251/goja"
	"github.com/dop251/goja/parser"
)

// The platform: what a program gets beyond the ECMAScript built-ins goja provides, so that
// the JavaScript a model learned from Node, Deno and browsers works: the ES2023–2025
// built-ins goja lacks, Web APIs, timers, the rest of console.
//
// A fresh runtime per run must stay cheap (a trivial run costs tens of microseconds), so none
// of it is installed up front. A program gets the additions its compiled text names (a word
// such as structuredClone, groupBy or TextEncoder; all of them when it builds code at run time
// with eval or Function), and a global among them is built only when the program first reads
// it. A program that reaches an addition under a name computed at run time, without naming it
// anywhere, does not get it: that is the one price of the scheme.

// platformHost is what the platform is installed against, as k6's modules are against their
// VU: the one run whose runtime it extends. A module (the console, the timers, the Web APIs)
// is a type of its own holding its state and a platformHost, with one field in the run; the
// other additions are functions of a platformHost. None holds the run itself. The methods come
// in four groups: the runtime, the loop, the clock and limits, the log. They are for the VM
// goroutine unless said otherwise.
type platformHost interface {
	// runtime is the run's goja runtime.
	runtime() *goja.Runtime
	// function makes a Go function callable from JavaScript under name; a panic in fn becomes
	// a JavaScript error.
	function(name string, fn func(goja.FunctionCall) goja.Value) goja.Value
	// lazyGlobal defines a global that build makes the first time a program reads it.
	lazyGlobal(name string, build func() goja.Value) error
	// prelude runs the named prelude of prelude/ once per runtime and returns its result.
	prelude(name string, args ...goja.Value) goja.Value

	// enqueue hands a job to the run's loop, to run as a top-level call into the VM; jobs
	// queued after the run closed are dropped. Safe from any goroutine.
	enqueue(j job)
	// fail ends the run with f (the first failure wins) and interrupts its JavaScript. Safe
	// from any goroutine.
	fail(f *Failure)
	// uncaught fails the run with an exception nothing caught, thrown in where (as "a
	// setTimeout callback"); an uncatchable error (a limit) is panicked on, to unwind.
	uncaught(err error, where string)
	// describeThrown is the failure message for a thrown value.
	describeThrown(v goja.Value) string
	// stopping reports whether the run has failed or was stopped: a native step should end.
	// Safe from any goroutine.
	stopping() bool
	// intrinsics are Object.prototype and Array.prototype as the runtime created them.
	intrinsics() (objectProto, arrayProto *goja.Object)

	// timeout is the run's wall-clock limit; no timer need be longer.
	timeout() time.Duration
	// started is when the run began: the origin of performance.now and event time stamps.
	started() time.Time
	// now is the program's clock: a reading recorded in the run's journal, or replayed from it
	// (journal.go). Everything the program can observe of time reads it.
	now() time.Time
	// loopTime is the timers' clock: now, read once per job.
	loopTime() time.Time
	// replayingJournal reports whether the run replays a journal: the Go clock must not
	// fire its timers meanwhile.
	replayingJournal() bool
	// randomBytes fills b from the run's seeded generator: what crypto hands the program.
	randomBytes(b []byte)
	// memoryCaps are the built-in caps derived from Options.Memory; overCap fails the run with
	// kind "limit" for what passed one and unwinds the VM (see guards.go).
	memoryCaps() caps
	overCap(what string, size float64, limit int64, unit string, divisor int64)

	// appendLog adds one line to the run's captured output (Result.Logs). The line that
	// crosses Options.MaxLogBytes is cut, a marker line follows, and the run fails; lines
	// after that, or after the run closed, are dropped. Safe from any goroutine.
	appendLog(line string)
	// logRoom is how many bytes a line may still have, plus one (a formatter that produces
	// that many knows the line is cut), and whether the log takes no more lines.
	logRoom() (room int, full bool)
	// formatLog renders console arguments as Node's util.format does, in at most limit bytes.
	formatLog(args []goja.Value, limit int) string
	// inspectValue renders v as util.inspect does with nesting shown to depth (negative for
	// all), in at most limit bytes.
	inspectValue(v goja.Value, depth, limit int) string
	// programFrame maps a line and column of the compiled program (as in a stack trace) to the
	// model's own; false for positions outside the model's code.
	programFrame(line, col int) (int, int, bool)
}

var _ platformHost = (*run)(nil)

// feature is one addition to the runtime.
type feature struct {
	name string
	// words select the feature when any of them occurs in the program's compiled text as a
	// whole word; match, when set, selects it too.
	words []string
	match *regexp.Regexp
	// install adds the feature to a run's runtime before the program starts.
	install func(r *run) error
}

// featureSet has one bit per entry of features.
type featureSet uint64

var (
	featureWords map[string]featureSet // word → features it selects
	featureAll   featureSet
	wordPattern  *regexp.Regexp
)

func init() {
	if len(features) > 64 {
		panic("sandbox: more than 64 platform features")
	}
	featureWords = make(map[string]featureSet)
	words := ""
	for i, f := range features {
		featureAll |= 1 << i
		for _, w := range f.words {
			if _, seen := featureWords[w]; !seen {
				if words != "" {
					words += "|"
				}
				words += regexp.QuoteMeta(w)
			}
			featureWords[w] |= 1 << i
		}
	}
	wordPattern = regexp.MustCompile(`\b(?:` + words + `)\b`)
}

// featuresFor chooses a program's platform additions from the text goja runs.
func featuresFor(text string) featureSet {
	if codeAtRunTime.MatchString(text) {
		return featureAll
	}
	var set featureSet
	for _, w := range wordPattern.FindAllString(text, -1) {
		set |= featureWords[w]
	}
	for i, f := range features {
		if f.match != nil && set&(1<<i) == 0 && f.match.MatchString(text) {
			set |= 1 << i
		}
	}
	return set
}

// installFeatures installs the features of set into the run's runtime.
func (r *run) installFeatures(set featureSet) error {
	for i, f := range features {
		if set&(1<<i) == 0 {
			continue
		}
		if err := f.install(r); err != nil {
			return fmt.Errorf("install %s: %w", f.name, err)
		}
	}
	return nil
}

// lazyGlobal defines a global that is built by build the first time a program reads it, and
// from then on (or once assigned) is an ordinary writable, configurable, non-enumerable
// property, as Node's globals are.
func (r *run) lazyGlobal(name string, build func() goja.Value) error {
	global := r.rt.GlobalObject()
	get := r.function(name, func(goja.FunctionCall) goja.Value {
		v := build()
		must(global.DefineDataProperty(name, v, goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE))
		return v
	})
	set := r.function(name, func(call goja.FunctionCall) goja.Value {
		must(global.DefineDataProperty(name, call.Argument(0), goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE))
		return goja.Undefined()
	})
	return global.DefineAccessorProperty(name, get, set, goja.FLAG_TRUE, goja.FLAG_FALSE)
}

// lazyGlobals defines several globals from one build, run once on first use of any of them:
// build returns an object holding every name.
func lazyGlobals(h platformHost, names []string, build func() *goja.Object) error {
	var built *goja.Object
	load := func() *goja.Object {
		if built == nil {
			built = build()
		}
		return built
	}
	for _, name := range names {
		if err := h.lazyGlobal(name, func() goja.Value { return load().Get(name) }); err != nil {
			return err
		}
	}
	return nil
}

// defineMethod defines a non-enumerable method on o, as built-in methods are.
func defineMethod(h platformHost, o *goja.Object, name string, length int, fn func(goja.FunctionCall) goja.Value) error {
	f := h.function(name, fn).(*goja.Object)
	if err := f.DefineDataProperty("length", h.runtime().ToValue(length), goja.FLAG_FALSE, goja.FLAG_TRUE, goja.FLAG_FALSE); err != nil {
		return err
	}
	return o.DefineDataProperty(name, f, goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE) // as a built-in method
}

// Preludes are the parts of the platform written in JavaScript: each file of prelude/ is one
// function expression, compiled once per process on first use and called in a run's runtime
// with the run's natives (Go functions it needs) as its argument.

//go:embed prelude/*.js
var preludeFiles embed.FS

var preludePrograms sync.Map // file name → func() *goja.Program

func preludeProgram(name string) *goja.Program {
	once, _ := preludePrograms.LoadOrStore(name, sync.OnceValue(func() *goja.Program {
		src, err := preludeFiles.ReadFile("prelude/" + name)
		if err != nil {
			panic(err)
		}
		ast, err := parser.ParseFile(nil, name, string(src), 0, parser.WithDisableSourceMaps)
		if err != nil {
			panic(fmt.Sprintf("sandbox: prelude %s: %v", name, err))
		}
		p, err := goja.CompileAST(ast, true)
		if err != nil {
			panic(fmt.Sprintf("sandbox: prelude %s: %v", name, err))
		}
		return p
	}))
	return once.(func() *goja.Program)()
}

// prelude runs the named prelude in the run's runtime and calls it with args, returning what
// it returns. Its results are cached per run, so a prelude runs at most once per runtime.
func (r *run) prelude(name string, args ...goja.Value) goja.Value {
	if v, ok := r.preludes[name]; ok {
		return v
	}
	fnv, err := r.rt.RunProgram(preludeProgram(name))
	must(err)
	fn, ok := goja.AssertFunction(fnv)
	if !ok {
		panic(fmt.Sprintf("sandbox: prelude %s is not a function", name))
	}
	v, err := fn(goja.Undefined(), args...)
	must(err)
	if r.preludes == nil {
		r.preludes = make(map[string]goja.Value)
	}
	r.preludes[name] = v
	return v
}

// nativesObject builds the object of Go functions handed to a prelude.
func nativesObject(h platformHost, fns map[string]func(goja.FunctionCall) goja.Value) *goja.Object {
	o := h.runtime().NewObject()
	for name, fn := range fns {
		must(o.Set(name, h.function(name, fn)))
	}
	return o
}

// tryJS runs f, turning a JavaScript exception into an error (interrupts keep unwinding).
func tryJS(h platformHost, f func()) error {
	if ex := h.runtime().Try(f); ex != nil {
		return ex
	}
	return nil
}

// features lists every platform addition. The words of one feature are the names a program
// uses to reach it.
var features = []feature{
	{name: "console", words: []string{"table", "dir", "dirxml", "trace", "assert", "count", "countReset", "time", "timeLog", "timeEnd", "group", "groupCollapsed", "groupEnd"},
		install: func(r *run) error { return r.console.install() }},
	{name: "iteratorPreview", match: iteratorPreviewUse, install: (*run).installIteratorPreview},
	{name: "date", words: []string{"Date"}, install: func(r *run) error { return installDate(r) }},
	{name: "timers", words: []string{"setInterval", "clearInterval", "setImmediate", "clearImmediate", "queueMicrotask"},
		install: func(r *run) error { return r.timers.install() }},
	{name: "url", words: []string{"URL", "URLSearchParams"},
		install: func(r *run) error { return r.web.installURL() }},
	{name: "groupBy", words: []string{"groupBy"}, install: installPrelude("groupby.js")},
	{name: "fromAsync", words: []string{"fromAsync"}, install: installPrelude("fromasync.js")},
	{name: "withResolvers", words: []string{"withResolvers"}, install: installPrelude("withresolvers.js")},
	{name: "promiseAny", words: []string{"any"}, install: installPrelude("promiseany.js")},
	{name: "wellFormed", words: []string{"isWellFormed", "toWellFormed"}, install: installPrelude("wellformed.js")},
	{name: "captureStackTrace", words: []string{"captureStackTrace", "stackTraceLimit"}, install: installPrelude("capturestack.js")},
	{name: "symbols", words: []string{"asyncIterator", "dispose", "asyncDispose", "SuppressedError", "DisposableStack", "AsyncDisposableStack"},
		install: (*run).installSymbols},
	// Every built-in iterator inherits the helpers, so programs that iterate (an iterator
	// method called without arguments, a generator, matchAll) get them.
	{name: "iterator", words: []string{"Iterator", "toArray", "matchAll", "yield"},
		match:   regexp.MustCompile(`\.(?:values|keys|entries)\(\s*\)|function\s*\*|\*\s*\[\s*Symbol\.iterator`),
		install: (*run).installIterator},
	{name: "weakRef", words: []string{"WeakRef", "FinalizationRegistry"},
		install: preludeGlobals("weakref.js", nil, "WeakRef", "FinalizationRegistry")},
	{name: "structuredClone", words: []string{"structuredClone"},
		install: preludeGlobals("structuredclone.js", func(r *run) goja.Value { return r.web.structuredCloneNatives() }, "structuredClone")},
	{name: "encoding", words: []string{"TextEncoder", "TextDecoder"},
		install: preludeGlobals("encoding.js", func(r *run) goja.Value { return r.web.encodingNatives() }, "TextEncoder", "TextDecoder")},
	{name: "base64", words: []string{"atob", "btoa"}, install: func(r *run) error { return r.web.installBase64() }},
	{name: "events", words: []string{"Event", "EventTarget", "CustomEvent", "AbortController", "AbortSignal", "DOMException"},
		install: func(r *run) error {
			return lazyGlobals(r, []string{"Event", "EventTarget", "CustomEvent", "AbortController", "AbortSignal", "DOMException"}, r.web.events)
		}},
	{name: "crypto", words: []string{"crypto"}, install: func(r *run) error { return r.web.installCrypto() }},
	{name: "intl", words: []string{"Intl", "toLocaleString", "toLocaleDateString", "toLocaleTimeString", "localeCompare", "toLocaleUpperCase", "toLocaleLowerCase"},
		install: (*run).installIntl},
	// esbuild turns regular-expression literals goja cannot read into RegExp calls.
	{name: "regexp", words: []string{"RegExp", "hasIndices", "unicodeSets"}, install: func(r *run) error { return installRegexp(r) }},
	// Every match goes through exec or test.
	{name: "regexpTimeout", words: []string{"exec", "test", "match", "matchAll", "replace", "replaceAll", "search", "split", "RegExp"},
		install: func(r *run) error { return installRegexpTimeout(r) }},
	// Where goja's numbers differ from V8's: Number of a BigInt (a program that has one names
	// BigInt, writes a literal or reads a BigInt64Array) and parseInt of a negative zero.
	{name: "bigIntNumber", match: regexp.MustCompile(`\bNumber\b[\s\S]*(?:\bBig(?:U?Int)|\b\d[\d_]*n\b)|(?:\bBig(?:U?Int)|\b\d[\d_]*n\b)[\s\S]*\bNumber\b`),
		install: installPrelude("number.js")},
	{name: "parseInt", words: []string{"parseInt"}, install: installPrelude("parseint.js")},
	// Math.sin, cos and tan bit for bit as V8's (fdlibm); goja's are Go's math package's.
	{name: "trig", words: []string{"sin", "cos", "tan"}, install: (*run).installTrig},
	{name: "arrayBuffer", words: []string{"transfer", "transferToFixedLength", "detached", "resizable", "maxByteLength", "resize"},
		// %TypedArray%.from: a typed array named, and a from (on it, a subclass or the prototype).
		match: regexp.MustCompile(`(?:Int|Uint|Float|BigInt|BigUint)(?:8|16|32|64|8Clamped)Array\b[\s\S]*\.\s*from\b|\.\s*from\b[\s\S]*(?:Int|Uint|Float|BigInt|BigUint)(?:8|16|32|64|8Clamped)Array\b`),
		install: func(r *run) error {
			return tryJS(r, func() { r.prelude("arraybuffer.js", r.web.arrayBufferNatives()) })
		}},
	{name: "performance", words: []string{"performance"},
		install: func(r *run) error {
			return r.lazyGlobal("performance", func() goja.Value { return r.prelude("performance.js", r.web.performanceNatives()) })
		}},
}

// platformGlobals names every global the features define.
var platformGlobals = []string{
	"URL", "URLSearchParams",
	"setInterval", "clearInterval", "setImmediate", "clearImmediate", "queueMicrotask",
	"SuppressedError", "DisposableStack", "AsyncDisposableStack", "Iterator", "WeakRef", "FinalizationRegistry",
	"structuredClone", "TextEncoder", "TextDecoder", "atob", "btoa",
	"Event", "EventTarget", "CustomEvent", "AbortController", "AbortSignal", "DOMException",
	"crypto", "performance", "Intl",
}

// PlatformSummary says in a few lines what a program can use, for the model-facing SDK text.
const PlatformSummary = "ES2024 (groupBy, iterator helpers, using), Intl, URL, TextEncoder, atob, crypto, AbortController, structuredClone, timers, console.*; no require, import, fetch or fs: only the tools reach out."
