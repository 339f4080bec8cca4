package sandbox

import (
	"testing"
	"time"
)

func TestTimerKinds(t *testing.T) {
	tests := []struct{ name, src, want string }{
		{"interval runs until cleared", `
			let n = 0
			await new Promise(resolve => { const id = setInterval(() => { if (++n === 3) { clearInterval(id); resolve() } }, 1) })
			return n`, `3`},
		{"interval with arguments", `
			const got = []
			await new Promise(resolve => { const id = setInterval((a, b) => { got.push(a + b); if (got.length === 2) { clearInterval(id); resolve() } }, 2, 1, 2) })
			return got`, `[3,3]`},
		{"clearTimeout clears an interval", `
			let n = 0; const id = setInterval(() => n++, 1); clearTimeout(id)
			await new Promise(r => setTimeout(r, 10)); return n`, `0`},
		{"equal delays fire in creation order, shorter first", `
			const order = []
			for (let i = 0; i < 20; i++) setTimeout(() => order.push(i), 25)
			setTimeout(() => order.push("zero"), 0)
			await new Promise(r => setTimeout(r, 40)); return order.join(",")`, `"zero,0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19"`},
		{"the timers of one job count from one instant, however long it runs", `
			const order = []
			setTimeout(() => order.push(2), 2)
			const t = Date.now(); while (Date.now() - t < 5) {}
			setTimeout(() => order.push(1), 1)
			await new Promise(r => setTimeout(r, 30)); return order`, `[1,2]`},
		{"shorter delay first", `
			const order = []
			setTimeout(() => order.push("b"), 15); setTimeout(() => order.push("a"), 1)
			await new Promise(r => setTimeout(r, 30)); return order`, `["a","b"]`},
		{"promise jobs run between timer callbacks", `
			const order = []
			setTimeout(() => { order.push("t1"); Promise.resolve().then(() => order.push("micro")) }, 1)
			setTimeout(() => order.push("t2"), 1)
			await new Promise(r => setTimeout(r, 10)); return order`, `["t1","micro","t2"]`},
		{"setImmediate and clearImmediate", `
			const order = []
			setImmediate((x) => order.push(x), "imm")
			const id = setImmediate(() => order.push("cleared")); clearImmediate(id)
			order.push("sync")
			await new Promise(r => setTimeout(r, 5)); return order`, `["sync","imm"]`},
		{"queueMicrotask before timers", `
			const order = []
			setTimeout(() => order.push("timeout"), 0)
			queueMicrotask(() => order.push("micro"))
			order.push("sync")
			await new Promise(r => setTimeout(r, 5)); return order`, `["sync","micro","timeout"]`},
		{"queueMicrotask checks its argument", `try { queueMicrotask(1) } catch (e) { return e.name }`, `"TypeError"`},
		{"replaceable globals", `setInterval = 1; queueMicrotask = 2; return [setInterval, queueMicrotask]`, `[1,2]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { wantValue(t, runJS(t, tt.src, nil), tt.want) })
	}
	wantFailure(t, runJS(t, `queueMicrotask(() => { throw new Error("micro boom") }); await new Promise(r => setTimeout(r, 5))`, nil),
		KindRuntime, "queueMicrotask callback", "micro boom")
	wantFailure(t, runJS(t, `setInterval(() => { throw new RangeError("tick") }, 1); await new Promise(r => setTimeout(r, 50))`, nil),
		KindRuntime, "setInterval callback", "RangeError: tick")
}

func msDuration(ms float64) time.Duration { return time.Duration(ms * float64(time.Millisecond)) }
