package sandbox

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/dop251/goja"
)

// The console methods beyond log/info/warn/error/debug, as Node prints them. A logging call
// never fails a run: whatever goes wrong while formatting (a getter that throws, say) is
// logged as a note instead. Only the log-size limit ends a run.

// installConsoleExtras adds table, dir, dirxml, trace, assert, count, countReset, time,
// timeLog, timeEnd, group, groupCollapsed and groupEnd to the run's console.
func (r *run) installConsoleExtras() error {
	c := r.console
	methods := []struct {
		name string
		fn   func(goja.FunctionCall)
	}{
		{"table", r.consoleTable},
		{"dir", r.consoleDir},
		{"dirxml", func(call goja.FunctionCall) { r.consoleLog(call) }},
		{"trace", r.consoleTrace},
		{"assert", r.consoleAssert},
		{"count", r.consoleCount},
		{"countReset", r.consoleCountReset},
		{"time", r.consoleTime},
		{"timeLog", func(call goja.FunctionCall) { r.consoleTimeLog(call, false) }},
		{"timeEnd", func(call goja.FunctionCall) { r.consoleTimeLog(call, true) }},
		{"group", r.consoleGroup},
		{"groupCollapsed", r.consoleGroup},
		{"groupEnd", r.consoleGroupEnd},
	}
	for _, m := range methods {
		name, fn := m.name, m.fn
		f := r.function(name, func(call goja.FunctionCall) goja.Value {
			if ex := r.rt.Try(func() { fn(call) }); ex != nil {
				r.emit(fmt.Sprintf("[console.%s could not format its arguments: %s]", name, r.describeThrown(ex.Value())))
			}
			return goja.Undefined()
		})
		if err := c.DefineDataProperty(name, f, goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_TRUE); err != nil {
			return err
		}
	}
	return nil
}

// logRoom is how many bytes a formatter may produce before the line cannot fit anyway.
func (r *run) logRoom() (int, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.opts.MaxLogBytes - r.logBytes + 1, r.logFull || r.closed
}

// label reads a console label argument: "default" when undefined.
func label(v goja.Value) string {
	if v == nil || goja.IsUndefined(v) {
		return "default"
	}
	return v.String()
}

func (r *run) consoleDir(call goja.FunctionCall) {
	room, full := r.logRoom()
	if full {
		return
	}
	in := &inspector{r: r, limit: room, depthLimit: inspectDepth}
	if opts, ok := call.Argument(1).(*goja.Object); ok {
		if d := opts.Get("depth"); d != nil && !goja.IsUndefined(d) {
			switch f := d.ToFloat(); {
			case goja.IsNull(d) || math.IsInf(f, 1):
				in.depthLimit = -1
			case !math.IsNaN(f):
				in.depthLimit = int(math.Max(f, 0))
			}
		}
	}
	in.value(call.Argument(0), 0) // strings quoted, as util.inspect shows them
	r.emit(in.b.String())
}

func (r *run) consoleTrace(call goja.FunctionCall) {
	room, full := r.logRoom()
	if full {
		return
	}
	text := "Trace"
	if len(call.Arguments) > 0 {
		text += ": " + r.formatLog(call.Arguments, room)
	}
	for _, f := range r.rt.CaptureCallStack(16, nil) {
		p := f.Position()
		if !strings.HasPrefix(p.Filename, "program.") {
			continue
		}
		if l, c, ok := r.prog.frame(p.Line, p.Column); ok {
			name := f.FuncName()
			if name == "" {
				name = "<anonymous>"
			}
			text += fmt.Sprintf("\n    at %s (line %d:%d)", name, l, c)
		}
	}
	r.emit(text)
}

func (r *run) consoleAssert(call goja.FunctionCall) {
	if call.Argument(0).ToBoolean() {
		return
	}
	room, full := r.logRoom()
	if full {
		return
	}
	// As Node: "Assertion failed: " before a message string; other values follow a space.
	text := "Assertion failed"
	if rest := call.Arguments[min(1, len(call.Arguments)):]; len(rest) > 0 {
		sep := " "
		if goja.IsString(rest[0]) {
			sep = ": "
		}
		text += sep + r.formatLog(rest, room)
	}
	r.emit(text)
}

func (r *run) consoleCount(call goja.FunctionCall) {
	l := label(call.Argument(0))
	if r.consoleCounts == nil {
		r.consoleCounts = make(map[string]int)
	}
	r.consoleCounts[l]++
	r.emit(l + ": " + strconv.Itoa(r.consoleCounts[l]))
}

func (r *run) consoleCountReset(call goja.FunctionCall) {
	l := label(call.Argument(0))
	if _, ok := r.consoleCounts[l]; !ok {
		r.emit(fmt.Sprintf("Warning: Count for '%s' does not exist", l))
		return
	}
	r.consoleCounts[l] = 0
}

func (r *run) consoleTime(call goja.FunctionCall) {
	l := label(call.Argument(0))
	if r.consoleTimers == nil {
		r.consoleTimers = make(map[string]time.Time)
	}
	if _, ok := r.consoleTimers[l]; ok {
		r.emit(fmt.Sprintf("Warning: Label '%s' already exists for console.time()", l))
		return
	}
	r.consoleTimers[l] = time.Now()
}

func (r *run) consoleTimeLog(call goja.FunctionCall, end bool) {
	l := label(call.Argument(0))
	start, ok := r.consoleTimers[l]
	if !ok {
		method := "console.timeLog()"
		if end {
			method = "console.timeEnd()"
		}
		r.emit(fmt.Sprintf("Warning: No such label '%s' for %s", l, method))
		return
	}
	text := l + ": " + formatDuration(time.Since(start))
	if end {
		delete(r.consoleTimers, l)
	} else if len(call.Arguments) > 1 {
		room, _ := r.logRoom()
		text += " " + r.formatLog(call.Arguments[1:], room)
	}
	r.emit(text)
}

// formatDuration renders a console.time duration as Node does: milliseconds with three
// decimals, seconds past one second, m:ss.mmm past a minute, h:mm:ss.mmm past an hour.
func formatDuration(d time.Duration) string {
	ms := float64(d) / float64(time.Millisecond)
	switch {
	case ms >= 3600000:
		h := math.Floor(ms / 3600000)
		m := math.Floor(math.Mod(ms, 3600000) / 60000)
		s := math.Mod(ms, 60000) / 1000
		return fmt.Sprintf("%d:%02d:%06.3f (h:mm:ss.mmm)", int(h), int(m), s)
	case ms >= 60000:
		m := math.Floor(ms / 60000)
		s := math.Mod(ms, 60000) / 1000
		return fmt.Sprintf("%d:%06.3f (m:ss.mmm)", int(m), s)
	case ms >= 1000:
		return strconv.FormatFloat(ms/1000, 'f', 3, 64) + "s"
	}
	return strconv.FormatFloat(ms, 'f', 3, 64) + "ms"
}

func (r *run) consoleGroup(call goja.FunctionCall) {
	if len(call.Arguments) > 0 {
		r.consoleLog(call)
	}
	if r.groupIndent < 200 {
		r.groupIndent += 2
	}
}

func (r *run) consoleGroupEnd(goja.FunctionCall) {
	if r.groupIndent >= 2 {
		r.groupIndent -= 2
	}
}

// consoleTable renders tabular data as Node's console.table does: a box-drawn table with an
// (index) column, one column per property of the rows (in first-seen order, or those named by
// the second argument), and a Values column for rows that are not objects. Anything else is
// logged as console.log would.
func (r *run) consoleTable(call goja.FunctionCall) {
	data, ok := call.Argument(0).(*goja.Object)
	if !ok {
		r.consoleLog(call)
		return
	}
	var filter []string
	if cols, ok := call.Argument(1).(*goja.Object); ok && objectClass(cols) == "Array" {
		n := cols.Get("length").ToInteger()
		for i := int64(0); i < n && i < inspectItems; i++ {
			filter = append(filter, cols.Get(strconv.FormatInt(i, 10)).String())
		}
	}
	cell := func(v goja.Value) string {
		in := &inspector{r: r, limit: 1 << 12, depthLimit: 0}
		if o, ok := v.(*goja.Object); ok && objectClass(o) != "Array" && len(o.Keys()) > 2 {
			in.depthLimit = -1 // as Node: depth -1 shows such an object as [Object]
			in.write("[Object]")
			return in.b.String()
		}
		in.value(v, 0)
		return in.b.String()
	}
	type row struct {
		index  string
		cells  map[string]string
		value  string
		hasVal bool
	}
	var rows []row
	var keys []string
	seen := map[string]bool{}
	indexHeader := "(index)"
	hasValues := false
	addRow := func(index string, v goja.Value) {
		rw := row{index: index, cells: map[string]string{}}
		if o, ok := v.(*goja.Object); ok && !isFunctionObject(o) {
			for _, k := range tableKeys(o) {
				if !seen[k] {
					seen[k] = true
					keys = append(keys, k)
				}
				rw.cells[k] = cell(o.Get(k))
			}
		} else {
			rw.value, rw.hasVal = cell(v), true
			hasValues = true
		}
		rows = append(rows, rw)
	}
	switch objectClass(data) {
	case "Map":
		indexHeader = "(iteration index)"
		entries := r.arrayFrom(data)
		keys = []string{"Key", "Values"}
		for i, e := range entries {
			pair, _ := e.(*goja.Object)
			if pair == nil {
				continue
			}
			rows = append(rows, row{index: strconv.Itoa(i), cells: map[string]string{"Key": cell(pair.Get("0")), "Values": cell(pair.Get("1"))}})
		}
		filter = nil
	case "Set":
		indexHeader = "(iteration index)"
		for i, v := range r.arrayFrom(data) {
			rows = append(rows, row{index: strconv.Itoa(i), value: cell(v), hasVal: true})
		}
		hasValues = true
	default:
		for _, k := range tableKeys(data) {
			addRow(k, data.Get(k))
			if len(rows) >= 1000 {
				break
			}
		}
	}
	if filter != nil {
		keys = filter
	}
	header := append([]string{indexHeader}, keys...)
	if hasValues {
		header = append(header, "Values")
	}
	table := make([][]string, 0, len(rows))
	for _, rw := range rows {
		line := []string{rw.index}
		for _, k := range keys {
			line = append(line, rw.cells[k])
		}
		if hasValues {
			v := ""
			if rw.hasVal {
				v = rw.value
			}
			line = append(line, v)
		}
		table = append(table, line)
	}
	r.emit(renderTable(header, table))
}

func isFunctionObject(o *goja.Object) bool {
	_, ok := goja.AssertFunction(o)
	return ok
}

// tableKeys are an object's own enumerable string keys, array indices first as goja lists
// them.
func tableKeys(o *goja.Object) []string {
	keys := o.Keys()
	if len(keys) > inspectReads {
		keys = keys[:inspectReads]
	}
	return keys
}

// arrayFrom lists an iterable's values through Array.from (bounded by inspectReads).
func (r *run) arrayFrom(o *goja.Object) []goja.Value {
	from, ok := goja.AssertFunction(r.rt.Get("Array").ToObject(r.rt).Get("from"))
	if !ok {
		return nil
	}
	v, err := from(goja.Undefined(), o)
	must(err)
	arr, ok := v.(*goja.Object)
	if !ok {
		return nil
	}
	n := min(arr.Get("length").ToInteger(), inspectReads)
	out := make([]goja.Value, 0, n)
	for i := int64(0); i < n; i++ {
		out = append(out, arr.Get(strconv.FormatInt(i, 10)))
	}
	return out
}

// renderTable draws rows under header with Node's box characters, each cell left-aligned in
// a column as wide as its widest entry plus one space either side (as Node 20.20 does).
func renderTable(header []string, rows [][]string) string {
	widths := make([]int, len(header))
	for i, h := range header {
		widths[i] = utf8.RuneCountInString(h) + 2
	}
	for _, row := range rows {
		for i, c := range row {
			if w := utf8.RuneCountInString(c) + 2; w > widths[i] {
				widths[i] = w
			}
		}
	}
	var b strings.Builder
	line := func(left, mid, right string) {
		b.WriteString(left)
		for i, w := range widths {
			if i > 0 {
				b.WriteString(mid)
			}
			b.WriteString(strings.Repeat("─", w))
		}
		b.WriteString(right)
	}
	cells := func(row []string) {
		b.WriteString("│")
		for i, w := range widths {
			if i > 0 {
				b.WriteString("│")
			}
			c := ""
			if i < len(row) {
				c = row[i]
			}
			b.WriteString(" ")
			b.WriteString(c)
			b.WriteString(strings.Repeat(" ", w-1-utf8.RuneCountInString(c)))
		}
		b.WriteString("│")
	}
	line("┌", "┬", "┐")
	b.WriteString("\n")
	cells(header)
	b.WriteString("\n")
	line("├", "┼", "┤")
	for _, row := range rows {
		b.WriteString("\n")
		cells(row)
	}
	b.WriteString("\n")
	line("└", "┴", "┘")
	return b.String()
}
