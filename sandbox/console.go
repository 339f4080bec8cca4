package sandbox

import (
	"strings"
	"time"

	"github.com/dop251/goja"
)

// consoleMethods are the console functions every program gets. All write to Result.Logs
// alike. The others (table, dir, count, time, group, assert, trace, …) are added for programs
// that name them; see console.install.
var consoleMethods = [...]string{"log", "info", "warn", "error", "debug"}

const (
	inspectDepth = 2   // nesting shown before [Object] / [Array], as in Node
	inspectItems = 100 // array items and object properties shown before "... N more"
	inspectReads = 10000
)

// console is the platform's console module: the console object and what its methods keep
// between calls. It writes to the run's log sink and formats with the run's inspector (the
// one failure messages are written with), both through its platformHost. Fields belong to the
// VM goroutine.
type console struct {
	h      platformHost
	obj    *goja.Object         // the console object, for the methods installed later
	indent int                  // spaces console.group adds before each line
	counts map[string]int       // console.count labels
	timers map[string]time.Time // console.time labels
}

// newObject makes the console object. Its methods are one function under five names: they
// all capture alike, and one function object is cheaper to set up than five.
func (c *console) newObject() *goja.Object {
	o := c.h.runtime().NewObject()
	c.obj = o
	fn := c.h.function("log", c.log)
	for _, name := range consoleMethods {
		if err := o.DefineDataProperty(name, fn, goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_TRUE); err != nil {
			panic(err)
		}
	}
	return o
}

func (c *console) log(call goja.FunctionCall) goja.Value {
	room, full := c.h.logRoom()
	if full {
		return goja.Undefined()
	}
	// Format at most one byte past the room left: enough to know the line does not fit.
	c.emit(c.h.formatLog(call.Arguments, room))
	return goja.Undefined()
}

// emit logs text, indented by the open console.group levels, one captured line per line of
// text.
func (c *console) emit(text string) {
	if c.indent == 0 {
		c.h.appendLog(text)
		return
	}
	pad := strings.Repeat(" ", c.indent)
	for _, line := range strings.Split(text, "\n") {
		c.h.appendLog(pad + line)
	}
}
