package main

import (
	"context"
	"fmt"
	"strconv"

	"github.com/dop251/goja"

	"github.com/codemode/codemode/sandbox"
)

// Data-sized programs (issue 30, class 7), each in the sandbox (sandbox.Run
// in process: compile cached, the platform and guards installed) beside
// raw goja running the same body in a new runtime: the floor the
// interpreter sets. Building a report with += is quadratic in goja (every
// concatenation copies the whole string); push-and-join, the idiom the SDK
// text names, is linear.
var interpPrograms = []struct {
	figure, body, want string
}{
	{"10,000-line report with +=", reportPlus(10000), "227301"},
	{"10,000-line report with push/join", reportJoin(10000), "227301"},
	{"40,000-line report with +=", reportPlus(40000), "973015"},
	{"40,000-line report with push/join", reportJoin(40000), "973015"},
	{"prime sieve to 2,000,000 (Array)", sieveArray, "148933"},
	{"prime sieve to 2,000,000 (Uint8Array)", sieveBytes, "148933"},
}

func reportPlus(lines int) string {
	return "let s = ''\nfor (let i = 0; i < " + strconv.Itoa(lines) + "; i++) { s += 'line ' + i + ': value ' + i * 7 + '\\n' }\nreturn s.length"
}

func reportJoin(lines int) string {
	return "const parts = []\nfor (let i = 0; i < " + strconv.Itoa(lines) + "; i++) { parts.push('line ' + i + ': value ' + i * 7 + '\\n') }\nreturn parts.join('').length"
}

const sieveArray = `const n = 2000000
const a = new Array(n + 1).fill(true)
a[0] = a[1] = false
for (let i = 2; i * i <= n; i++) if (a[i]) for (let j = i * i; j <= n; j += i) a[j] = false
let c = 0
for (let i = 0; i <= n; i++) if (a[i]) c++
return c`

const sieveBytes = `const n = 2000000
const composite = new Uint8Array(n + 1)
let c = 0
for (let i = 2; i <= n; i++) {
  if (composite[i]) continue
  c++
  for (let j = i * i; j <= n; j += i) composite[j] = 1
}
return c`

// interpFigures measures each program in the sandbox and on raw goja,
// their rounds alternating; a round is at least one run.
func interpFigures(e *env) ([]Row, error) {
	var rows []Row
	for _, p := range interpPrograms {
		prog, err := sandbox.Compile(p.body, sandbox.JavaScript)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p.figure, err)
		}
		raw := goja.MustCompile("floor.js", "(function () {\n"+p.body+"\n})()", false)
		want := p.want
		inSandbox := func() error {
			res := sandbox.Run(context.Background(), prog, nil, sandbox.Options{Timeout: 4 * sandbox.DefaultTimeout})
			if res.Err != nil || string(res.Value) != want {
				return fmt.Errorf("sandbox: %s %v", res.Value, res.Err)
			}
			return nil
		}
		floor := func() error {
			v, err := goja.New().RunProgram(raw)
			if err != nil || v.String() != want {
				return fmt.Errorf("goja: %v %v", v, err)
			}
			return nil
		}
		ms, err := measureAlternating(e.o.rounds, e.o.roundTime, inSandbox, floor)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p.figure, err)
		}
		rows = append(rows, Row{Figure: p.figure, Value: ms[0].us / 1e3, Floor: ms[1].us / 1e3,
			FloorName: "raw goja", Unit: "ms", AllocsPerOp: ms[0].allocsPerOp}.withRatio())
	}
	return rows, nil
}
