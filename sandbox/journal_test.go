package sandbox

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// journalHost settles calls after a random delay, as real tools do, and keeps the run's
// journal pieces and its settlements; given a journal, it replays: each call is settled at
// once with the settlement recorded for it.
type journalHost struct {
	*fakeHost
	journal string

	mu      sync.Mutex
	pieces  []string
	settled map[int]Settlement
}

func (h *journalHost) Journal() string { return h.journal }

func newJournalHost(replay *journalHost, journal string) *journalHost {
	h := &journalHost{fakeHost: newFakeHost("get", "put"), journal: journal, settled: map[int]Settlement{}}
	h.handle = func(c Call, settle func(Settlement)) {
		h.mu.Lock()
		h.pieces = append(h.pieces, c.Journal)
		h.mu.Unlock()
		if replay != nil {
			if s, ok := replay.settled[c.Seq]; ok {
				settle(s)
				return
			}
		}
		s := Settlement{Value: []byte(fmt.Sprintf(`{"n":%d,"args":%s}`, c.Seq, c.Args))}
		h.mu.Lock()
		h.settled[c.Seq] = s
		h.mu.Unlock()
		time.AfterFunc(time.Duration(rand.IntN(4000))*time.Microsecond, func() { settle(s) })
	}
	return h
}

// journalOf is the whole journal a run handed out: its calls' pieces and its result's.
func (h *journalHost) journalOf(res Result) string {
	return strings.Join(h.pieces, "") + res.Journal
}

// nondeterministic observes everything a journal must replay: the clock (Date, performance,
// console.time), randomness (Math.random, crypto), and timers racing tool calls.
const nondeterministic = `
const seen = [];
const t0 = Date.now(), p0 = performance.now();
seen.push(Math.random(), crypto.randomUUID(), Array.from(crypto.getRandomValues(new Uint8Array(4))));
const order = [];
setTimeout(() => order.push("t1"), 1);
const a = tools.get({ at: Date.now() - t0 }).then(v => order.push("a" + v.n));
setTimeout(() => order.push("t2"), 2);
setImmediate(() => order.push("i"));
const b = tools.get({ r: Math.random() }).then(v => order.push("b" + v.n));
await Promise.all([a, b]);
await new Promise(r => setTimeout(r, 3));
const c = await tools.put({ order, t: new Date().toISOString() });
seen.push(performance.now() - p0 >= 0, new Date(t0).toISOString(), c.n);
for (let i = 0; i < 3; i++) { seen.push(Math.random()); await tools.get({ i, now: Date.now() }); }
console.log(JSON.stringify(order), new Intl.DateTimeFormat("en-US", { timeStyle: "medium" }).format());
return seen;`

func TestReplayRepeatsTheRun(t *testing.T) {
	for i := 0; i < 20; i++ {
		live := newJournalHost(nil, "")
		first := runJS(t, nondeterministic, live)
		if first.Err != nil {
			t.Fatalf("live run: %v", first.Err)
		}
		journal := live.journalOf(first)
		replay := newJournalHost(live, journal)
		again := runJS(t, nondeterministic, replay)
		if again.Err != nil {
			t.Fatalf("replay: %v\njournal: %s", again.Err, journal)
		}
		if string(again.Value) != string(first.Value) || !slices.Equal(again.Logs, first.Logs) {
			t.Fatalf("replay differs:\n live %s %q\nagain %s %q\njournal: %s", first.Value, first.Logs, again.Value, again.Logs, journal)
		}
		if !slices.EqualFunc(replay.recorded(), live.recorded(), func(x, y Call) bool { return x.Name == y.Name && string(x.Args) == string(y.Args) }) {
			t.Fatalf("replay made other calls")
		}
		if got := replay.journalOf(again); got != "" {
			t.Fatalf("a replay to the end handed out journal %q; want nothing new", got)
		}
	}
}

// A journal cut after a call (what a crash leaves durable) replays up to there and the run
// goes on live, recording from where the journal ended.
func TestReplayOfAPrefixGoesOnLive(t *testing.T) {
	live := newJournalHost(nil, "")
	first := runJS(t, nondeterministic, live)
	if first.Err != nil {
		t.Fatal(first.Err)
	}
	for cut := 1; cut <= len(live.pieces); cut++ {
		prefix := strings.Join(live.pieces[:cut], "")
		replay := newJournalHost(live, prefix)
		again := runJS(t, nondeterministic, replay)
		if again.Err != nil {
			t.Fatalf("cut %d: %v", cut, again.Err)
		}
		var x, y []json.RawMessage
		if json.Unmarshal(first.Value, &x) != nil || json.Unmarshal(again.Value, &y) != nil || !slices.EqualFunc(x[:3], y[:3], bytesEqual) {
			t.Fatalf("cut %d: the values seen before the cut differ:\n%s\n%s", cut, first.Value, again.Value)
		}
		// What it recorded continues the prefix into a journal that replays the whole run.
		whole := prefix + replay.journalOf(again)
		third := runJS(t, nondeterministic, newJournalHost(replay, whole))
		if third.Err != nil || string(third.Value) != string(again.Value) || !slices.Equal(third.Logs, again.Logs) {
			t.Fatalf("cut %d: replaying the continued journal: %v\n%s\n%s", cut, third.Err, again.Value, third.Value)
		}
	}
}

func TestReplayDiverges(t *testing.T) {
	live := newJournalHost(nil, "")
	first := runJS(t, `const t = Date.now(); await tools.get({}); setTimeout(() => {}, 1); return t`, live)
	if first.Err != nil {
		t.Fatal(first.Err)
	}
	journal := live.journalOf(first)
	for _, src := range []string{
		`await tools.get({}); return Date.now()`,                          // reads the clock later
		`const t = Date.now(); Date.now(); await tools.get({}); return t`, // reads it once more
		`const t = Date.now(); return t`,                                  // makes no call
	} {
		res := runJS(t, src, newJournalHost(live, journal))
		if res.Err == nil || res.Err.Kind != KindDiverged {
			t.Errorf("%s: got %v; want kind %q", src, res.Err, KindDiverged)
		}
	}
	for _, bad := range []string{"x", "T1 R00", "T1 R" + strings.Repeat("0", 64) + " q1", "T1 R" + strings.Repeat("0", 64) + " X", "T1 R" + strings.Repeat("0", 64) + " i0"} {
		res := runJS(t, `return 1`, newJournalHost(nil, bad))
		if res.Err == nil || res.Err.Kind != KindDiverged {
			t.Errorf("journal %q: got %v; want kind %q", bad, res.Err, KindDiverged)
		}
	}
}

// The seed and the clock of a replay are the journal's; a live run's are its own.
func TestLiveRunsDrawTheirOwnRandomness(t *testing.T) {
	a := runJS(t, `return [Math.random(), crypto.randomUUID()]`, nil)
	b := runJS(t, `return [Math.random(), crypto.randomUUID()]`, nil)
	if a.Err != nil || b.Err != nil || string(a.Value) == string(b.Value) {
		t.Fatalf("two live runs drew the same: %s %s (%v %v)", a.Value, b.Value, a.Err, b.Err)
	}
	res := runJS(t, `const d = Date.now(); return Math.abs(d - `+fmt.Sprint(time.Now().UnixMilli())+`) < 60000`, nil)
	if string(res.Value) != "true" {
		t.Fatalf("the live clock is not the wall clock: %s %v", res.Value, res.Err)
	}
}

func FuzzParseJournal(f *testing.F) {
	f.Add("T1 R" + strings.Repeat("ab", 32) + " c1 i2 s1 d5")
	f.Add("T-5 R" + strings.Repeat("0", 64))
	f.Fuzz(func(t *testing.T, text string) {
		var j journal
		if err := j.begin(text, true); err != nil {
			return
		}
		for j.replaying() {
			j.advance()
		}
	})
}

var _ Replayer = (*journalHost)(nil)

func bytesEqual(a, b json.RawMessage) bool { return string(a) == string(b) }

// journaling keeps its run's journal (a Replayer with nothing to replay).
type journaling struct{ Host }

func (journaling) Journal() string { return "" }

// BenchmarkRunJournaled* are BenchmarkRunOneCallSyncHost, BenchmarkRunElevenCallsSyncHost
// and BenchmarkRunTimers with the journal kept, as for a run that may suspend: the
// difference is what recording costs.
func BenchmarkRunJournaledOneCall(b *testing.B) {
	benchmarkRunProgram(b, journaling{newNamesHost(10)}, "", "return await tools.tool_0001({a: 1})")
}

func BenchmarkRunJournaledElevenCalls(b *testing.B) {
	benchmarkRunProgram(b, journaling{newNamesHost(10)}, "11", "let n = 0; for (let i = 0; i < 11; i++) if ((await tools.tool_0001({a: i, b: 2})).ok) n++; return n")
}

func BenchmarkRunJournaledTimers(b *testing.B) {
	benchmarkRunProgram(b, journaling{nil}, "100", `let n = 0; await new Promise(r => { for (let i = 0; i < 100; i++) setImmediate(() => { if (++n === 100) r() }) }); for (let i = 0; i < 100; i++) clearTimeout(setTimeout(() => {}, 1000)); return n`)
}
