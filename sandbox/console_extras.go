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

// install adds table, dir, dirxml, trace, assert, count, countReset, time, timeLog, timeEnd,
// group, groupCollapsed and groupEnd to the console object.
func (c *console) install() error {
	methods := []struct {
		name string
		fn   func(goja.FunctionCall)
	}{
		{"table", c.table},
		{"dir", c.dir},
		{"dirxml", func(call goja.FunctionCall) { c.log(call) }},
		{"trace", c.trace},
		{"assert", c.assert},
		{"count", c.count},
		{"countReset", c.countReset},
		{"time", c.time},
		{"timeLog", func(call goja.FunctionCall) { c.timeLog(call, false) }},
		{"timeEnd", func(call goja.FunctionCall) { c.timeLog(call, true) }},
		{"group", c.group},
		{"groupCollapsed", c.group},
		{"groupEnd", c.groupEnd},
	}
	for _, m := range methods {
		name, fn := m.name, m.fn
		f := c.h.function(name, func(call goja.FunctionCall) goja.Value {
			if ex := c.h.runtime().Try(func() { fn(call) }); ex != nil {
				c.emit(fmt.Sprintf("[console.%s could not format its arguments: %s]", name, c.h.describeThrown(ex.Value())))
			}
			return goja.Undefined()
		})
		if err := c.obj.DefineDataProperty(name, f, goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_TRUE); err != nil {
			return err
		}
	}
	return nil
}

// label reads a console label argument: "default" when undefined.
func label(v goja.Value) string {
	if v == nil || goja.IsUndefined(v) {
		return "default"
	}
	return v.String()
}

func (c *console) dir(call goja.FunctionCall) {
	room, full := c.h.logRoom()
	if full {
		return
	}
	depth := inspectDepth
	if opts, ok := call.Argument(1).(*goja.Object); ok {
		if d := opts.Get("depth"); d != nil && !goja.IsUndefined(d) {
			switch f := d.ToFloat(); {
			case goja.IsNull(d) || math.IsInf(f, 1):
				depth = -1
			case !math.IsNaN(f):
				depth = int(math.Max(f, 0))
			}
		}
	}
	c.emit(c.h.inspectValue(call.Argument(0), depth, room)) // strings quoted, as util.inspect shows them
}

func (c *console) trace(call goja.FunctionCall) {
	room, full := c.h.logRoom()
	if full {
		return
	}
	text := "Trace"
	if len(call.Arguments) > 0 {
		text += ": " + c.h.formatLog(call.Arguments, room)
	}
	for _, f := range c.h.runtime().CaptureCallStack(16, nil) {
		p := f.Position()
		if !strings.HasPrefix(p.Filename, "program.") {
			continue
		}
		if l, col, ok := c.h.programFrame(p.Line, p.Column); ok {
			name := f.FuncName()
			if name == "" {
				name = "<anonymous>"
			}
			text += fmt.Sprintf("\n    at %s (line %d:%d)", name, l, col)
		}
	}
	c.emit(text)
}

func (c *console) assert(call goja.FunctionCall) {
	if call.Argument(0).ToBoolean() {
		return
	}
	room, full := c.h.logRoom()
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
		text += sep + c.h.formatLog(rest, room)
	}
	c.emit(text)
}

func (c *console) count(call goja.FunctionCall) {
	l := label(call.Argument(0))
	if c.counts == nil {
		c.counts = make(map[string]int)
	}
	c.counts[l]++
	c.emit(l + ": " + strconv.Itoa(c.counts[l]))
}

func (c *console) countReset(call goja.FunctionCall) {
	l := label(call.Argument(0))
	if _, ok := c.counts[l]; !ok {
		c.emit(fmt.Sprintf("Warning: Count for '%s' does not exist", l))
		return
	}
	c.counts[l] = 0
}

func (c *console) time(call goja.FunctionCall) {
	l := label(call.Argument(0))
	if c.timers == nil {
		c.timers = make(map[string]time.Time)
	}
	if _, ok := c.timers[l]; ok {
		c.emit(fmt.Sprintf("Warning: Label '%s' already exists for console.time()", l))
		return
	}
	c.timers[l] = c.h.now()
}

func (c *console) timeLog(call goja.FunctionCall, end bool) {
	l := label(call.Argument(0))
	start, ok := c.timers[l]
	if !ok {
		method := "console.timeLog()"
		if end {
			method = "console.timeEnd()"
		}
		c.emit(fmt.Sprintf("Warning: No such label '%s' for %s", l, method))
		return
	}
	text := l + ": " + formatDuration(c.h.now().Sub(start))
	if end {
		delete(c.timers, l)
	} else if len(call.Arguments) > 1 {
		room, _ := c.h.logRoom()
		text += " " + c.h.formatLog(call.Arguments[1:], room)
	}
	c.emit(text)
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

func (c *console) group(call goja.FunctionCall) {
	if len(call.Arguments) > 0 {
		c.log(call)
	}
	if c.indent < 200 {
		c.indent += 2
	}
}

func (c *console) groupEnd(goja.FunctionCall) {
	if c.indent >= 2 {
		c.indent -= 2
	}
}

// consoleTable renders tabular data as Node's console.table does: a box-drawn table with an
// (index) column, one column per property of the rows (in first-seen order, or those named by
// the second argument), and a Values column for rows that are not objects. Anything else is
// logged as console.log would.
func (c *console) table(call goja.FunctionCall) {
	data, ok := call.Argument(0).(*goja.Object)
	if !ok {
		c.log(call)
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
		if o, ok := v.(*goja.Object); ok && objectClass(o) != "Array" && len(o.Keys()) > 2 {
			return "[Object]" // as Node: depth -1 shows such an object so
		}
		return c.h.inspectValue(v, 0, 1<<12)
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
		entries := c.arrayFrom(data)
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
		for i, v := range c.arrayFrom(data) {
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
	c.emit(renderTable(header, table))
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
func (c *console) arrayFrom(o *goja.Object) []goja.Value {
	rt := c.h.runtime()
	from, ok := goja.AssertFunction(rt.Get("Array").ToObject(rt).Get("from"))
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
