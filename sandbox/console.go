package sandbox

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/dop251/goja"
)

// consoleMethods are the console functions every program gets. All write to Result.Logs
// alike. The others (table, dir, count, time, group, assert, trace, …) are added for programs
// that name them; see installConsoleExtras.
var consoleMethods = [...]string{"log", "info", "warn", "error", "debug"}

const (
	inspectDepth = 2   // nesting shown before [Object] / [Array], as in Node
	inspectItems = 100 // array items and object properties shown before "... N more"
	inspectReads = 10000
)

// newConsole makes the console object. Its methods are one function under five names: they
// all capture alike, and one function object is cheaper to set up than five.
func (r *run) newConsole() *goja.Object {
	c := r.rt.NewObject()
	r.console = c
	fn := r.function("log", r.consoleLog)
	for _, name := range consoleMethods {
		if err := c.DefineDataProperty(name, fn, goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_TRUE); err != nil {
			panic(err)
		}
	}
	return c
}

func (r *run) consoleLog(call goja.FunctionCall) goja.Value {
	r.mu.Lock()
	room := r.opts.MaxLogBytes - r.logBytes
	full := r.logFull || r.closed
	r.mu.Unlock()
	if full {
		return goja.Undefined()
	}
	// Format at most one byte past the room left: enough to know the line does not fit.
	r.emit(r.formatLog(call.Arguments, room+1))
	return goja.Undefined()
}

// emit logs text, indented by the open console.group levels, one captured line per line of
// text.
func (r *run) emit(text string) {
	if r.groupIndent == 0 {
		r.appendLog(text)
		return
	}
	pad := strings.Repeat(" ", r.groupIndent)
	for _, line := range strings.Split(text, "\n") {
		r.appendLog(pad + line)
	}
}

// appendLog adds one captured line. Each line costs its bytes plus one for its newline. The
// line that crosses MaxLogBytes is cut to fit, a marker line follows, and the run fails.
func (r *run) appendLog(line string) {
	r.mu.Lock()
	if r.closed || r.logFull {
		r.mu.Unlock()
		return
	}
	room := r.opts.MaxLogBytes - r.logBytes
	if len(line)+1 <= room {
		r.logs = append(r.logs, line)
		r.logBytes += len(line) + 1
		r.mu.Unlock()
		return
	}
	if cut := truncateUTF8(line, room-1); cut != "" {
		r.logs = append(r.logs, cut)
	}
	r.logs = append(r.logs, fmt.Sprintf("[console output truncated: the %d-byte log limit was reached]", r.opts.MaxLogBytes))
	r.logFull = true
	r.mu.Unlock()
	r.fail(&Failure{Kind: KindLimit, Message: fmt.Sprintf("the program logged more than %d bytes", r.opts.MaxLogBytes)})
}

// truncateUTF8 cuts s to at most n bytes without splitting a character.
func truncateUTF8(s string, n int) string {
	if n <= 0 {
		return ""
	}
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// formatLog renders console arguments like Node's util.format, on one line and at most limit
// bytes long (the output is cut there). A first string argument may hold %s %d %i %f %j %o %O
// %c and %% directives.
func (r *run) formatLog(args []goja.Value, limit int) string {
	in := &inspector{r: r, limit: limit, depthLimit: inspectDepth}
	rest := args
	if len(args) > 0 && goja.IsString(args[0]) {
		f := args[0].String()
		rest = args[1:]
		if strings.IndexByte(f, '%') >= 0 && len(rest) > 0 {
			rest = in.format(f, rest)
		} else {
			in.write(f)
		}
		for _, a := range rest {
			in.write(" ")
			in.top(a)
		}
		return in.b.String()
	}
	for i, a := range rest {
		if i > 0 {
			in.write(" ")
		}
		in.top(a)
	}
	return in.b.String()
}

// inspector renders values for the console, Node-style, with bounded depth and output size.
type inspector struct {
	r          *run
	b          strings.Builder
	limit      int
	depthLimit int // nesting shown before [Object]; negative for no limit
	full       bool
	seen       []*goja.Object // the objects being rendered, for [Circular]
	indent     int            // columns the value's lines start at (Node's indentationLvl)
	current    *int           // depth of the object entered last (Node's currentDepth); shared
}

// tooDeep reports whether a value at depth is shown by its kind only.
func (in *inspector) tooDeep(depth int) bool { return in.depthLimit >= 0 && depth > in.depthLimit }

func (in *inspector) write(s string) {
	if in.full {
		return
	}
	if room := in.limit - in.b.Len(); len(s) > room {
		in.b.WriteString(truncateUTF8(s, room))
		in.full = true
		return
	}
	in.b.WriteString(s)
}

// top renders a console argument: strings raw, anything else inspected.
func (in *inspector) top(v goja.Value) {
	if goja.IsString(v) {
		in.write(v.String())
		return
	}
	in.value(v, 0)
}

// format expands printf-like directives in f and returns the arguments left over.
func (in *inspector) format(f string, args []goja.Value) []goja.Value {
	start := 0
	for i := 0; i < len(f)-1; i++ {
		if f[i] != '%' {
			continue
		}
		d := f[i+1]
		if d == '%' {
			in.write(f[start:i])
			in.write("%")
			start = i + 2
			i++
			continue
		}
		if !strings.ContainsRune("sdifjoOc", rune(d)) || len(args) == 0 {
			continue
		}
		in.write(f[start:i])
		a := args[0]
		args = args[1:]
		switch d {
		case 's':
			in.top(a)
		case 'd', 'i':
			switch {
			case goja.IsBigInt(a):
				in.write(a.String() + "n")
			case isObject(a):
				in.write("NaN")
			default:
				n := a.ToFloat()
				if d == 'i' && !math.IsNaN(n) && !math.IsInf(n, 0) {
					n = math.Trunc(n)
				}
				in.write(numberString(in.r.rt.ToValue(n)))
			}
		case 'f':
			if isObject(a) {
				in.write("NaN")
			} else {
				in.write(numberString(in.r.rt.ToValue(a.ToFloat())))
			}
		case 'j':
			b, serr := in.r.snapshot(a, snapResult, in.limit)
			switch {
			case serr == nil:
				in.write(string(b))
			case strings.Contains(serr.what, "circular"):
				in.write("[Circular]")
			default:
				in.value(a, 0)
			}
		case 'o', 'O':
			in.value(a, 0)
		case 'c':
			// CSS styling: consumed, not shown.
		}
		start = i + 2
		i++
	}
	in.write(f[start:])
	return args
}

func isObject(v goja.Value) bool {
	_, ok := v.(*goja.Object)
	return ok
}

// value renders v as Node's util.inspect would, on one line.
func (in *inspector) value(v goja.Value, depth int) {
	if in.full {
		return
	}
	switch {
	case v == nil || goja.IsUndefined(v):
		in.write("undefined")
		return
	case goja.IsNull(v):
		in.write("null")
		return
	}
	switch x := v.(type) {
	case *goja.Object:
		in.object(x, depth)
	case *goja.Symbol:
		in.write("Symbol(" + x.String() + ")")
	default:
		switch {
		case goja.IsString(v):
			in.write(quote(v.String()))
		case goja.IsNumber(v):
			in.write(numberString(v))
		case goja.IsBigInt(v):
			in.write(v.String() + "n")
		default:
			in.write(v.String())
		}
	}
}

func numberString(v goja.Value) string {
	if f, ok := v.Export().(float64); ok && f == 0 && math.Signbit(f) {
		return "-0"
	}
	return v.String()
}

func (in *inspector) object(o *goja.Object, depth int) {
	if _, ok := goja.AssertFunction(o); ok {
		name := ""
		if n := o.Get("name"); n != nil && goja.IsString(n) {
			name = n.String()
		}
		if name == "" {
			in.write("[Function (anonymous)]")
		} else {
			in.write("[Function: " + name + "]")
		}
		return
	}
	if o.ExportType() == proxyType {
		in.write("[Proxy]")
		return
	}
	for _, s := range in.seen {
		if s == o {
			in.write("[Circular]")
			return
		}
	}
	in.seen = append(in.seen, o)
	defer func() { in.seen = in.seen[:len(in.seen)-1] }()

	switch cls := objectClass(o); cls {
	case "Array":
		in.array(o, depth)
	case "Error":
		in.error(o, depth)
	case "Date":
		if t, ok := o.Export().(time.Time); ok {
			in.write(t.UTC().Format("2006-01-02T15:04:05.000Z"))
		} else {
			in.write("Invalid Date")
		}
	case "RegExp":
		in.write(o.String())
	case "String":
		in.write("[String: " + quote(o.String()) + "]")
	case "Number", "Boolean":
		in.write("[" + cls + ": " + o.String() + "]")
	case "Promise":
		in.promise(o, depth)
	case "Map", "Set":
		in.collection(o, cls, depth)
	default:
		in.plain(o, cls, depth)
	}
}

func (in *inspector) array(o *goja.Object, depth int) {
	n := o.Get("length").ToInteger()
	if n == 0 {
		in.write("[]")
		return
	}
	if in.tooDeep(depth) {
		in.write("[Array]")
		return
	}
	in.enter(depth)
	var entries entryList
	numeric := true
	// reads bounds the elements looked at, holes included: a sparse array's length can be
	// 2^32-1, and this is native code the run's Interrupt cannot stop.
	reads := 0
	i := int64(0)
	for shown := 0; i < n && shown < inspectItems && reads < inspectReads && !entries.full; shown++ {
		reads++
		if v := o.Get(strconv.FormatInt(i, 10)); v != nil {
			if !goja.IsNumber(v) && !goja.IsBigInt(v) {
				numeric = false
			}
			entries.add(in, in.render(v, depth+1, &entries))
			i++
			continue
		}
		numeric = false
		holes := int64(1)
		for i++; i < n && reads < inspectReads && o.Get(strconv.FormatInt(i, 10)) == nil; i++ {
			holes++
			reads++
		}
		entries.add(in, fmt.Sprintf("<%d empty item%s>", holes, plural(holes)))
	}
	more := i < n
	if more {
		entries.add(in, fmt.Sprintf("... %d more item%s", n-i, plural(n-i)))
	}
	in.reduce("[", "]", entries.items, depth, arrayLayout{grouped: true, numeric: numeric, more: more})
}

func plural(n int64) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func (in *inspector) error(o *goja.Object, depth int) {
	name, msg := "Error", ""
	if v := o.Get("name"); v != nil && !goja.IsUndefined(v) {
		name = v.String()
	}
	if v := o.Get("message"); v != nil && !goja.IsUndefined(v) {
		msg = v.String()
	}
	text := name
	if msg != "" {
		text += ": " + msg
	}
	if depth > 0 {
		in.write("[" + text + "]")
		return
	}
	if keys := o.Keys(); len(keys) > 0 {
		in.properties(text+" {", o, keys, depth)
		return
	}
	in.write(text)
}

func (in *inspector) promise(o *goja.Object, depth int) {
	p, ok := o.Export().(*goja.Promise)
	if !ok {
		in.plain(o, "Promise", depth)
		return
	}
	switch p.State() {
	case goja.PromiseStatePending:
		in.write("Promise { <pending> }")
	case goja.PromiseStateFulfilled:
		in.write("Promise { ")
		in.value(p.Result(), depth+1)
		in.write(" }")
	default:
		in.write("Promise { <rejected> ")
		in.value(p.Result(), depth+1)
		in.write(" }")
	}
}

// collection renders a Map or Set through Array.from (the program's own, should it have
// replaced it: the output is only its own log).
func (in *inspector) collection(o *goja.Object, cls string, depth int) {
	var items *goja.Object
	if from, ok := goja.AssertFunction(in.r.rt.Get("Array").ToObject(in.r.rt).Get("from")); ok {
		v, err := from(goja.Undefined(), o)
		if err != nil {
			panic(err)
		}
		items, _ = v.(*goja.Object)
	}
	if items == nil {
		in.write("[" + cls + "]")
		return
	}
	n := items.Get("length").ToInteger()
	if n == 0 {
		in.write(fmt.Sprintf("%s(%d) {}", cls, n))
		return
	}
	if in.tooDeep(depth) {
		in.write("[" + cls + "]")
		return
	}
	in.enter(depth)
	var entries entryList
	for i := int64(0); i < n && i < inspectItems && !entries.full; i++ {
		item := items.Get(strconv.FormatInt(i, 10))
		if pair, ok := item.(*goja.Object); ok && cls == "Map" {
			k := in.render(pair.Get("0"), depth+1, &entries)
			entries.add(in, k+" => "+in.render(pair.Get("1"), depth+1, &entries))
		} else {
			entries.add(in, in.render(item, depth+1, &entries))
		}
	}
	if n > inspectItems {
		entries.add(in, fmt.Sprintf("... %d more item%s", n-inspectItems, plural(n-inspectItems)))
	}
	in.reduce(fmt.Sprintf("%s(%d) {", cls, n), "}", entries.items, depth, arrayLayout{})
}

func (in *inspector) plain(o *goja.Object, cls string, depth int) {
	prefix := ""
	objectProto, _ := in.r.intrinsics()
	switch proto := o.Prototype(); {
	case proto == nil:
		prefix = "[Object: null prototype] "
	case proto != objectProto:
		if name := constructorName(proto); name != "" {
			prefix = name + " "
		}
	case cls != "Object":
		prefix = cls + " "
	}
	keys := o.Keys()
	switch prefix {
	case "URL ":
		if in.r.webClass(o, "URL") {
			keys = urlInspectKeys
		}
	case "URLSearchParams ":
		if pairs, ok := in.r.searchParamsPairs(o); ok {
			in.searchParams(pairs, depth)
			return
		}
	}
	if len(keys) == 0 {
		in.write(prefix + "{}")
		return
	}
	if in.tooDeep(depth) {
		name := strings.TrimSpace(prefix)
		if name == "" || strings.HasPrefix(name, "[") {
			name = "Object"
		}
		in.write("[" + name + "]")
		return
	}
	in.properties(prefix+"{", o, keys, depth)
}

// urlInspectKeys are the properties Node shows of a URL, in its order.
var urlInspectKeys = []string{"href", "origin", "protocol", "username", "password", "host", "hostname", "port", "pathname", "search", "searchParams", "hash"}

// searchParams renders a URLSearchParams's pairs as Node does: URLSearchParams { 'a' => '1' }.
func (in *inspector) searchParams(pairs [][2]string, depth int) {
	if len(pairs) == 0 {
		in.write("URLSearchParams {}")
		return
	}
	in.write("URLSearchParams { ")
	for i, p := range pairs {
		if i == inspectItems || in.full {
			in.write(fmt.Sprintf(", ... %d more items", len(pairs)-i))
			break
		}
		if i > 0 {
			in.write(", ")
		}
		in.write(quote(p[0]) + " => " + quote(p[1]))
	}
	in.write(" }")
}

func (in *inspector) properties(open string, o *goja.Object, keys []string, depth int) {
	in.enter(depth)
	var entries entryList
	for i, k := range keys {
		if i == inspectItems || entries.full {
			entries.add(in, fmt.Sprintf("... %d more propert%s", len(keys)-i, map[bool]string{true: "y", false: "ies"}[len(keys)-i == 1]))
			break
		}
		name := k
		if !isIdentifier(k) {
			name = quote(k)
		}
		entries.add(in, name+": "+in.render(o.Get(k), depth+1, &entries))
	}
	in.reduce(open, "}", entries.items, depth, arrayLayout{})
}

// Node's layout of objects and arrays (util.inspect with compact: 3, breakLength: 80): an
// object whose entries fit in the line, and that holds fewer than three levels of objects
// entered, is written on one line; otherwise each entry is on a line of its own, indented
// by two more columns; an array of more than six short entries is laid out in columns.
const (
	inspectBreakLength = 80
	inspectCompact     = 3
)

// enter records that an object at depth is being rendered (Node's ctx.currentDepth).
func (in *inspector) enter(depth int) {
	if in.current == nil {
		in.current = new(int)
	}
	*in.current = depth
}

// entryList collects the rendered entries of one object within the output's room.
type entryList struct {
	items []string
	used  int
	full  bool
}

func (l *entryList) add(in *inspector, s string) {
	if l.full {
		return
	}
	l.items = append(l.items, s)
	l.used += len(s) + 2
	if l.used >= in.limit-in.b.Len() {
		l.full = true
	}
}

// render renders v as an entry of the object being rendered: two columns further in, in
// the room the entries before it left.
func (in *inspector) render(v goja.Value, depth int, l *entryList) string {
	if in.current == nil {
		in.current = new(int)
	}
	c := &inspector{r: in.r, limit: max(in.limit-in.b.Len()-l.used, 0), depthLimit: in.depthLimit,
		seen: in.seen, indent: in.indent + 2, current: in.current}
	c.value(v, depth)
	if c.full {
		l.full = true
	}
	return c.b.String()
}

// arrayLayout says how an array's entries may be grouped in columns.
type arrayLayout struct {
	grouped bool // an array: more than six entries may go in columns
	numeric bool // every element a number or bigint: columns align right
	more    bool // the last entry is "... N more items"
}

// reduce writes the entries between open and close, on one line or on lines of their own.
func (in *inspector) reduce(open, close string, entries []string, depth int, lay arrayLayout) {
	out := entries
	if lay.grouped && len(entries) > 6 {
		out = in.groupColumns(entries, lay)
	}
	if *in.current-depth < inspectCompact && len(out) == len(entries) {
		start := len(out) + in.indent + jsLength(open) + 10
		if fitsOnALine(out, start) {
			if joined := strings.Join(out, ", "); !strings.Contains(joined, "\n") {
				in.write(open + " " + joined + " " + close)
				return
			}
		}
	}
	ind := "\n" + strings.Repeat(" ", in.indent)
	in.write(open + ind + "  " + strings.Join(out, ","+ind+"  ") + ind + close)
}

// fitsOnALine is Node's isBelowBreakLength.
func fitsOnALine(entries []string, start int) bool {
	total := len(entries) + start
	if total+len(entries) > inspectBreakLength {
		return false
	}
	for _, e := range entries {
		if total += jsLength(e); total > inspectBreakLength {
			return false
		}
	}
	return true
}

// groupColumns is Node's groupArrayElements: short entries in aligned columns, as many as
// make the block roughly square, at most 15 and within the line.
func (in *inspector) groupColumns(entries []string, lay arrayLayout) []string {
	const separator = 2 // ", "
	n := len(entries)
	if lay.more {
		n--
	}
	widths := make([]int, n)
	total, widest := 0, 0
	for i := 0; i < n; i++ {
		widths[i] = jsLength(entries[i])
		total += widths[i] + separator
		widest = max(widest, widths[i])
	}
	actualMax := widest + separator
	if actualMax*3+in.indent >= inspectBreakLength || (float64(total)/float64(actualMax) <= 5 && widest > 6) {
		return entries
	}
	averageBias := math.Sqrt(float64(actualMax) - float64(total)/float64(len(entries)))
	biasedMax := math.Max(float64(actualMax)-3-averageBias, 1)
	columns := min(
		int(math.Round(math.Sqrt(2.5*biasedMax*float64(n))/biasedMax)),
		(inspectBreakLength-in.indent)/actualMax,
		inspectCompact*4,
		15,
	)
	if columns <= 1 {
		return entries
	}
	lineWidths := make([]int, columns)
	for c := 0; c < columns; c++ {
		for j := c; j < n; j += columns {
			lineWidths[c] = max(lineWidths[c], widths[j])
		}
		lineWidths[c] += separator
	}
	var rows []string
	for i := 0; i < n; i += columns {
		last := min(i+columns, n) - 1
		var b strings.Builder
		for j := i; j <= last; j++ {
			cell := entries[j]
			width := lineWidths[j-i]
			if j < last {
				cell += ", "
			} else {
				width -= separator
			}
			pad := strings.Repeat(" ", max(width-jsLength(cell), 0))
			switch {
			case lay.numeric:
				b.WriteString(pad + cell)
			case j < last:
				b.WriteString(cell + pad)
			default:
				b.WriteString(cell)
			}
		}
		rows = append(rows, b.String())
	}
	if lay.more {
		rows = append(rows, entries[n])
	}
	return rows
}

// jsLength is a string's length in UTF-16 code units, as Node measures it.
func jsLength(s string) int {
	n := 0
	for _, r := range s {
		n++
		if r > 0xFFFF {
			n++
		}
	}
	return n
}

// quote renders a string as Node does inside objects: single quotes, escapes for quotes,
// backslashes and control characters.
func quote(s string) string {
	// Node picks the quote the string does not contain: ' then " then `.
	q := '\''
	if strings.ContainsRune(s, '\'') {
		if !strings.ContainsRune(s, '"') {
			q = '"'
		} else if !strings.ContainsRune(s, '`') {
			q = '`'
		}
	}
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteRune(q)
	for _, c := range s {
		switch c {
		case q:
			b.WriteByte('\\')
			b.WriteRune(c)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if c < 0x20 || c == 0x7f {
				fmt.Fprintf(&b, `\x%02X`, c)
			} else {
				b.WriteRune(c)
			}
		}
	}
	b.WriteRune(q)
	return b.String()
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
