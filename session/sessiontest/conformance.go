// Package sessiontest is the conformance suite every session.Store passes.
//
// A backend's test calls RunConformance with a function that opens a fresh,
// empty store, and RunShared when two Store instances can share one database
// (as two processes or replicas would).
package sessiontest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/codemode/codemode/registry"
	"github.com/codemode/codemode/session"
)

// waitLimit bounds how long a test waits for something that should happen
// promptly; it only turns a hang into a failure and never measures speed.
const waitLimit = 20 * time.Second

// RunConformance runs the whole suite, its tests in parallel. open must
// return a new, empty store each time it is called (and be safe to call from
// parallel tests); the suite closes what it opens.
func RunConformance(t *testing.T, open func(t *testing.T) session.Store) {
	tests := []struct {
		name string
		run  func(t *testing.T, s session.Store)
	}{
		{"Sessions", testSessions},
		{"SeqAssignment", testSeqAssignment},
		{"TimeAssignment", testTimeAssignment},
		{"LargeBatch", testLargeBatch},
		{"EventsAfterLimit", testEventsAfterLimit},
		{"RunsOfEvents", testRunsOfEvents},
		{"UnknownSession", testUnknownSession},
		{"RejectsMalformed", testRejectsMalformed},
		{"DataRoundTrip", testDataRoundTrip},
		{"Isolation", testIsolation},
		{"ConcurrentAppends", testConcurrentAppends},
		{"Wait", testWait},
		{"WaitCancel", testWaitCancel},
		{"OpenCalls", testOpenCalls},
		{"UsedCallIDs", testUsedCallIDs},
		{"SubmitOrder", testSubmitOrder},
		{"SubmitConcurrent", testSubmitConcurrent},
		{"SubmitFailures", testSubmitFailures},
		{"SubmitMalformed", testSubmitMalformed},
		{"SubmitCreate", testSubmitCreate},
		{"SessionHeader", testSessionHeader},
		{"Checkpoints", testCheckpoints},
		{"Leases", testLeases},
		{"LeaseRace", testLeaseRace},
		{"LapsedLeases", testLapsedLeases},
		{"ListSessions", testListSessions},
		{"DeleteSession", testDeleteSession},
		{"Prune", testPrune},
		{"Close", testClose},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel() // every test has a store of its own
			s := open(t)
			t.Cleanup(func() { s.Close() })
			tt.run(t, s)
		})
	}
}

func testSessions(t *testing.T, s session.Store) {
	ctx := context.Background()
	created := time.Date(2025, 3, 4, 5, 6, 7, 891234567, time.FixedZone("X", 3600))
	if err := s.CreateSession(ctx, session.Session{ID: "s1", Scope: "default", CreatedAt: created}); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetSession(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	want := session.Session{ID: "s1", Scope: "default", CreatedAt: created.UTC().Truncate(time.Microsecond)}
	if got.ID != want.ID || got.Scope != want.Scope || !got.CreatedAt.Equal(want.CreatedAt) || got.CreatedAt.Location() != time.UTC {
		t.Fatalf("GetSession = %+v, want %+v", got, want)
	}
	if err := s.CreateSession(ctx, session.Session{ID: "s1", Scope: "other"}); !errors.Is(err, session.ErrExists) {
		t.Fatalf("second CreateSession: err = %v, want ErrExists", err)
	}
	if got, _ := s.GetSession(ctx, "s1"); got.Scope != "default" {
		t.Fatalf("a refused CreateSession changed the session: %+v", got)
	}
	before := time.Now().Add(-time.Second)
	if err := s.CreateSession(ctx, session.Session{ID: "s2 ✓"}); err != nil {
		t.Fatal(err)
	}
	if got, err := s.GetSession(ctx, "s2 ✓"); err != nil || got.CreatedAt.Before(before) {
		t.Fatalf("GetSession with zero CreatedAt = %+v, %v: want now", got, err)
	}
	if _, err := s.GetSession(ctx, "nope"); !errors.Is(err, session.ErrNotFound) {
		t.Fatalf("GetSession(unknown): err = %v, want ErrNotFound", err)
	}
	for _, id := range []string{"", "a\nb", string([]byte{0xff}), string(make([]byte, 300))} {
		err := s.CreateSession(ctx, session.Session{ID: id})
		if err == nil || errors.Is(err, session.ErrExists) {
			t.Errorf("CreateSession(%q): err = %v, want a validation error", id, err)
		}
	}
}

func testSeqAssignment(t *testing.T, s session.Store) {
	create(t, s, "s")
	var seqs []int64
	for _, batch := range [][]session.Event{
		{contextEvent("a")},
		{contextEvent("b"), contextEvent("c"), contextEvent("d")},
		{contextEvent("e")},
	} {
		batch[0].Seq = 99 // ignored: the store assigns
		got := mustAppend(t, s, "s", batch...)
		if len(got) != len(batch) {
			t.Fatalf("Append returned %d events for %d", len(got), len(batch))
		}
		for i, e := range got {
			if e.Type != batch[i].Type || string(e.Data) != string(batch[i].Data) {
				t.Fatalf("Append returned %+v for %+v", e, batch[i])
			}
			seqs = append(seqs, e.Seq)
		}
	}
	if want := []int64{1, 2, 3, 4, 5}; !slices.Equal(seqs, want) {
		t.Fatalf("seqs = %v, want %v", seqs, want)
	}
	evs := mustEvents(t, s, "s", 0, 0)
	var texts []string
	for i, e := range evs {
		if e.Seq != int64(i+1) {
			t.Fatalf("event %d has seq %d", i, e.Seq)
		}
		var c session.UserContext
		if err := e.Decode(&c); err != nil {
			t.Fatal(err)
		}
		texts = append(texts, c.Text)
	}
	if want := []string{"a", "b", "c", "d", "e"}; !slices.Equal(texts, want) {
		t.Fatalf("events in order %v, want %v", texts, want)
	}
	if got, err := s.Append(context.Background(), "s"); err != nil || len(got) != 0 {
		t.Fatalf("Append of nothing = %v, %v", got, err)
	}
	if got := mustAppend(t, s, "s", contextEvent("f")); got[0].Seq != 6 {
		t.Fatalf("after an empty append the next seq is %d, want 6", got[0].Seq)
	}
}

func testLargeBatch(t *testing.T, s session.Store) {
	create(t, s, "s")
	mustAppend(t, s, "s", contextEvent("first"))
	for _, n := range []int{2, 31, 32, 33, 100, 1000} {
		batch := make([]session.Event, n)
		for i := range batch {
			batch[i] = contextEvent(fmt.Sprintf("%d/%d", n, i))
		}
		got := mustAppend(t, s, "s", batch...)
		for i := 1; i < n; i++ {
			if got[i].Seq != got[0].Seq+int64(i) {
				t.Fatalf("batch of %d: event %d has seq %d after %d", n, i, got[i].Seq, got[0].Seq)
			}
		}
		stored := mustEvents(t, s, "s", got[0].Seq-1, n)
		for i, e := range stored {
			if e.Seq != got[i].Seq || string(e.Data) != string(batch[i].Data) {
				t.Fatalf("batch of %d: stored event %d is %d %s, want %d %s", n, i, e.Seq, e.Data, got[i].Seq, batch[i].Data)
			}
		}
	}
	checkSeqs(t, s, "s", 1+2+31+32+33+100+1000)
	// A malformed event anywhere in a big batch leaves nothing behind.
	batch := make([]session.Event, 100)
	for i := range batch {
		batch[i] = contextEvent("x")
	}
	batch[70].Data = json.RawMessage(`[]`)
	if _, err := s.Append(context.Background(), "s", batch...); err == nil {
		t.Fatal("a batch with a malformed event was appended")
	}
	checkSeqs(t, s, "s", 1+2+31+32+33+100+1000)
}

func testTimeAssignment(t *testing.T, s session.Store) {
	create(t, s, "s")
	given := time.Date(2024, 1, 2, 3, 4, 5, 678912345, time.FixedZone("Y", -7200))
	e := contextEvent("timed")
	e.Time = given
	before := time.Now().UTC().Truncate(time.Microsecond)
	got := mustAppend(t, s, "s", contextEvent("now"), e)
	after := time.Now()
	if got[0].Time.Before(before) || got[0].Time.After(after) {
		t.Fatalf("assigned time %v is not between %v and %v", got[0].Time, before, after)
	}
	want := given.UTC().Truncate(time.Microsecond)
	if !got[1].Time.Equal(want) {
		t.Fatalf("given time came back as %v, want %v", got[1].Time, want)
	}
	stored := mustEvents(t, s, "s", 0, 0)
	for i := range stored {
		if !stored[i].Time.Equal(got[i].Time) || stored[i].Time.Location() != time.UTC {
			t.Fatalf("stored time %v, Append returned %v (want equal, UTC)", stored[i].Time, got[i].Time)
		}
	}
}

func testEventsAfterLimit(t *testing.T, s session.Store) {
	create(t, s, "s")
	if evs := mustEvents(t, s, "s", 0, 0); len(evs) != 0 {
		t.Fatalf("new session has events %v", evs)
	}
	for i := 0; i < 5; i++ {
		mustAppend(t, s, "s", contextEvent(fmt.Sprint(i)))
	}
	tests := []struct {
		after int64
		limit int
		want  []int64
	}{
		{0, 0, []int64{1, 2, 3, 4, 5}},
		{0, -1, []int64{1, 2, 3, 4, 5}},
		{-3, 0, []int64{1, 2, 3, 4, 5}},
		{2, 0, []int64{3, 4, 5}},
		{0, 2, []int64{1, 2}},
		{3, 1, []int64{4}},
		{4, 10, []int64{5}},
		{5, 0, nil},
		{100, 3, nil},
	}
	for _, tt := range tests {
		var got []int64
		for _, e := range mustEvents(t, s, "s", tt.after, tt.limit) {
			got = append(got, e.Seq)
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("Events(after %d, limit %d) = %v, want %v", tt.after, tt.limit, got, tt.want)
		}
	}
}

// testRunsOfEvents writes a run's shape, many events without a call id between a call and
// its result, in writes of several sizes (a store may keep such runs together), and reads the
// log back from every after with every limit: the same events, numbers, types, times and
// data each time, and the header's last seq and update time those of the last event.
func testRunsOfEvents(t *testing.T, s session.Store) {
	create(t, s, "s")
	base := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	var written []session.Event
	for w, nested := range []int{0, 1, 2, 7, 70, 3} {
		evs := []session.Event{callEvent(t, 1, w+1, fmt.Sprintf("c%d", w), "run_code", `{"code":"x"}`)}
		for i := 0; i < nested; i++ {
			e := contextEvent(fmt.Sprintf("write %d, nested %d %s", w, i, strings.Repeat("\"q\"", i%3)))
			if i%2 == 1 {
				e = event(t, "tool/code-dispatch", map[string]any{"sub_call_id": fmt.Sprintf("c%d:code:%d", w, i), "n": i, "q": "\u2028"})
			}
			e.Time = base.Add(time.Duration(len(written)+len(evs)) * time.Millisecond)
			evs = append(evs, e)
		}
		evs = append(evs, resultEvent(t, fmt.Sprintf("c%d", w), false))
		written = append(written, mustAppend(t, s, "s", evs...)...)
	}
	all := mustEvents(t, s, "s", 0, 0)
	if len(all) != len(written) {
		t.Fatalf("read %d events, wrote %d", len(all), len(written))
	}
	for i, e := range all {
		w := written[i]
		if e.Seq != int64(i+1) || e.Seq != w.Seq || e.Type != w.Type || !e.Time.Equal(w.Time) || !jsonEqual(e.Data, w.Data) {
			t.Fatalf("event %d: read %d %s %v %s, wrote %d %s %v %s", i+1, e.Seq, e.Type, e.Time, e.Data, w.Seq, w.Type, w.Time, w.Data)
		}
	}
	n := int64(len(all))
	for after := int64(0); after <= n+1; after++ {
		for _, limit := range []int{0, 1, 2, 3, 5, 64, 65, 200} {
			got := mustEvents(t, s, "s", after, limit)
			want := all[min(after, n):]
			if limit > 0 && len(want) > limit {
				want = want[:limit]
			}
			if len(got) != len(want) {
				t.Fatalf("Events(after %d, limit %d): %d events, want %d", after, limit, len(got), len(want))
			}
			for i := range got {
				if got[i].Seq != want[i].Seq || got[i].Type != want[i].Type || !jsonEqual(got[i].Data, want[i].Data) {
					t.Fatalf("Events(after %d, limit %d)[%d] = %d %s, want %d %s", after, limit, i, got[i].Seq, got[i].Type, want[i].Seq, want[i].Type)
				}
			}
		}
	}
	checkEventsWithin(t, s, all)
	sess, err := s.GetSession(context.Background(), "s")
	if err != nil || sess.LastSeq != n || !sess.UpdatedAt.Equal(maxTime(sess.CreatedAt, all[n-1].Time)) {
		t.Fatalf("header %+v (%v), want last seq %d, updated %v", sess, err, n, all[n-1].Time)
	}
}

// checkEventsWithin reads session "s", whose whole log is all, with
// EventsWithin from every after, with limits and byte bounds that fall
// inside and between runs of events: each read is the longest prefix of
// Events' answer whose data, without its last event, total less than the
// bound.
func checkEventsWithin(t *testing.T, s session.Store, all []session.Event) {
	t.Helper()
	br, ok := s.(session.BoundedReader)
	if !ok {
		t.Logf("%T is not a session.BoundedReader: EventsWithin not checked", s)
		return
	}
	ctx := context.Background()
	n := int64(len(all))
	for after := int64(0); after <= n+1; after++ {
		// Bounds that fall exactly on, just before and just after the ends
		// of the first events read, and some that do not.
		bounds := []int{-1, 0, 1, 100, 1000, 3000, 1 << 20}
		sum := 0
		for _, e := range all[min(after, n):min(after+4, n)] {
			sum += len(e.Data)
			bounds = append(bounds, sum-1, sum, sum+1)
		}
		for _, limit := range []int{0, 1, 3, 65} {
			for _, maxBytes := range bounds {
				got, err := br.EventsWithin(ctx, "s", after, limit, maxBytes)
				if err != nil {
					t.Fatalf("EventsWithin(after %d, limit %d, maxBytes %d): %v", after, limit, maxBytes, err)
				}
				want := all[min(after, n):]
				if limit > 0 && len(want) > limit {
					want = want[:limit]
				}
				total := 0
				for i, e := range want {
					if maxBytes > 0 && total >= maxBytes {
						want = want[:i]
						break
					}
					total += len(e.Data)
				}
				if len(got) != len(want) {
					t.Fatalf("EventsWithin(after %d, limit %d, maxBytes %d): %d events, want %d", after, limit, maxBytes, len(got), len(want))
				}
				for i := range got {
					if got[i].Seq != want[i].Seq || got[i].Type != want[i].Type || !got[i].Time.Equal(want[i].Time) || string(got[i].Data) != string(want[i].Data) {
						t.Fatalf("EventsWithin(after %d, limit %d, maxBytes %d)[%d] = %d %s, want %d %s", after, limit, maxBytes, i, got[i].Seq, got[i].Type, want[i].Seq, want[i].Type)
					}
				}
			}
		}
	}
	if _, err := br.EventsWithin(ctx, "ghost", 0, 0, 100); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("EventsWithin of an unknown session: err = %v, want ErrNotFound", err)
	}
}

func jsonEqual(a, b json.RawMessage) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && reflect.DeepEqual(x, y)
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

func testUnknownSession(t *testing.T, s session.Store) {
	ctx := context.Background()
	if _, err := s.Append(ctx, "ghost", contextEvent("x")); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("Append: err = %v, want ErrNotFound", err)
	}
	if _, err := s.Append(ctx, "ghost"); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("Append of nothing: err = %v, want ErrNotFound", err)
	}
	if _, err := s.Events(ctx, "ghost", 0, 0); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("Events: err = %v, want ErrNotFound", err)
	}
	if err := s.Wait(ctx, "ghost", 0); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("Wait: err = %v, want ErrNotFound", err)
	}
	if _, err := s.GetSession(ctx, "ghost"); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("GetSession: err = %v, want ErrNotFound", err)
	}
}

func testRejectsMalformed(t *testing.T, s session.Store) {
	create(t, s, "s")
	good := contextEvent("ok")
	tests := []struct {
		name string
		e    session.Event
	}{
		{"empty type", session.Event{Data: json.RawMessage(`{}`)}},
		{"type with space", session.Event{Type: "tool call", Data: json.RawMessage(`{}`)}},
		{"data not JSON", session.Event{Type: session.TypeUserContext, Data: json.RawMessage(`{"a":`)}},
		{"data an array", session.Event{Type: session.TypeUserContext, Data: json.RawMessage(`[1]`)}},
		{"data a string", session.Event{Type: session.TypeUserContext, Data: json.RawMessage(`"x"`)}},
		{"data repeats seq", session.Event{Type: session.TypeUserContext, Data: json.RawMessage(`{"seq":3}`)}},
		{"data repeats escaped type", session.Event{Type: session.TypeUserContext, Data: json.RawMessage(`{"typ\u0065":"x"}`)}},
		{"data not UTF-8", session.Event{Type: session.TypeUserContext, Data: json.RawMessage("{\"text\":\"\xff\"}")}},
		{"call without call_id", session.Event{Type: session.TypeToolCall, Data: json.RawMessage(`{"name":"x"}`)}},
		{"call with empty call_id", session.Event{Type: session.TypeToolCall, Data: json.RawMessage(`{"call_id":""}`)}},
		{"result with numeric call_id", session.Event{Type: session.TypeToolResult, Data: json.RawMessage(`{"call_id":7}`)}},
		{"time past year 9999", session.Event{Type: session.TypeUserContext, Time: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}},
	}
	for _, tt := range tests {
		if _, err := s.Append(context.Background(), "s", good, tt.e); err == nil {
			t.Errorf("%s: Append succeeded", tt.name)
		}
	}
	if evs := mustEvents(t, s, "s", 0, 0); len(evs) != 0 {
		t.Fatalf("rejected batches left %d events", len(evs))
	}
}

// roundTripData holds what a store must keep byte for byte: a raw argument
// string with unicode and escapes, numbers beyond float64, -0, odd spacing.
const roundTripData = `{ "turn":1,"step":2,  "call_id":"c-ü",
  "name":"util_echo",
  "arguments":"{\"n\": 123456789012345678901234567890, \"z\": -0, \"s\": \"héllo 🌍 \\u2028 \\\"q\\\"\"}",
  "extra": {"n": 123456789012345678901234567890, "z": -0, "f": 1.50e+300, "e": "\u00e9\ud83c\udf0d<>&"} }`

func testDataRoundTrip(t *testing.T, s session.Store) {
	create(t, s, "s")
	e := session.Event{Type: session.TypeToolCall, Data: json.RawMessage(roundTripData)}
	got := mustAppend(t, s, "s", e)
	if string(got[0].Data) != roundTripData {
		t.Fatalf("Append returned data\n%s\nwant\n%s", got[0].Data, roundTripData)
	}
	stored := mustEvents(t, s, "s", 0, 0)
	if string(stored[0].Data) != roundTripData {
		t.Fatalf("stored data\n%s\nwant\n%s", stored[0].Data, roundTripData)
	}
	var c session.ToolCall
	if err := stored[0].Decode(&c); err != nil {
		t.Fatal(err)
	}
	wantArgs := `{"n": 123456789012345678901234567890, "z": -0, "s": "héllo 🌍 \u2028 \"q\""}`
	if c.Arguments != wantArgs || c.CallID != "c-ü" || c.Turn != 1 || c.Step != 2 {
		t.Fatalf("decoded call %+v; arguments want %s", c, wantArgs)
	}
	// The caller's slice is not retained: changing it changes nothing stored.
	data := []byte(`{"source":"s","text":"before"}`)
	mustAppend(t, s, "s", session.Event{Type: session.TypeUserContext, Data: data})
	copy(data, `{"source":"s","text":"AFTER!"}`)
	if got := mustEvents(t, s, "s", 1, 0); string(got[0].Data) != `{"source":"s","text":"before"}` {
		t.Fatalf("store kept a reference to the caller's data: %s", got[0].Data)
	}
	// Nor is the returned slice shared with the store.
	got = mustEvents(t, s, "s", 1, 0)
	copy(got[0].Data, `XXXXXXXX`)
	if again := mustEvents(t, s, "s", 1, 0); string(again[0].Data) != `{"source":"s","text":"before"}` {
		t.Fatalf("Events returned the store's own memory: %s", again[0].Data)
	}
}

func testIsolation(t *testing.T, s session.Store) {
	create(t, s, "a")
	create(t, s, "b")
	mustAppend(t, s, "a", contextEvent("a1"), contextEvent("a2"))
	mustAppend(t, s, "b", contextEvent("b1"))
	mustAppend(t, s, "a", contextEvent("a3"))
	for id, want := range map[string][]string{"a": {"a1", "a2", "a3"}, "b": {"b1"}} {
		evs := mustEvents(t, s, id, 0, 0)
		var texts []string
		for i, e := range evs {
			if e.Seq != int64(i+1) {
				t.Fatalf("session %s: event %d has seq %d", id, i, e.Seq)
			}
			var c session.UserContext
			if err := e.Decode(&c); err != nil {
				t.Fatal(err)
			}
			texts = append(texts, c.Text)
		}
		if !slices.Equal(texts, want) {
			t.Errorf("session %s holds %v, want %v", id, texts, want)
		}
	}
}

func testConcurrentAppends(t *testing.T, s session.Store) {
	create(t, s, "hot")
	create(t, s, "cold")
	const workers, appends = 8, 50
	concurrently(t, workers, func(w int) error {
		for i := 0; i < appends; i++ {
			batch := []session.Event{contextEvent(fmt.Sprintf("%d.%d", w, i))}
			if i%10 == 9 { // some batches of two
				batch = append(batch, contextEvent(fmt.Sprintf("%d.%d+", w, i)))
			}
			got, err := s.Append(context.Background(), "hot", batch...)
			if err == nil && len(got) == 2 && got[1].Seq != got[0].Seq+1 {
				err = fmt.Errorf("a batch got seqs %d and %d", got[0].Seq, got[1].Seq)
			}
			if err == nil && w == 0 && i%5 == 0 {
				_, err = s.Append(context.Background(), "cold", contextEvent("c"))
			}
			if err != nil {
				return err
			}
		}
		return nil
	})
	checkSeqs(t, s, "hot", workers*appends+workers*appends/10)
	checkSeqs(t, s, "cold", appends/5)
	// Each writer's events are in the order it appended them.
	last := map[string]int{}
	for _, e := range mustEvents(t, s, "hot", 0, 0) {
		var c session.UserContext
		if err := e.Decode(&c); err != nil {
			t.Fatal(err)
		}
		var w, i int
		fmt.Sscanf(c.Text, "%d.%d", &w, &i)
		key := fmt.Sprint(w)
		if prev, ok := last[key]; ok && i < prev {
			t.Fatalf("writer %d: event %d logged after %d", w, i, prev)
		}
		last[key] = i
	}
}

func testWait(t *testing.T, s session.Store) {
	create(t, s, "s")
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	mustAppend(t, s, "s", contextEvent("1"))
	if err := s.Wait(ctx, "s", 0); err != nil {
		t.Fatalf("Wait with an event already there: %v", err)
	}
	for after := int64(1); after <= 3; after++ {
		done := make(chan error, 1)
		go func() { done <- s.Wait(ctx, "s", after) }()
		mustAppend(t, s, "s", contextEvent(fmt.Sprint(after+1)))
		if err := <-done; err != nil {
			t.Fatalf("Wait(after %d): %v", after, err)
		}
	}
	// Many waiters on one session all wake.
	const waiters = 5
	done := make(chan error, waiters)
	for i := 0; i < waiters; i++ {
		go func() { done <- s.Wait(ctx, "s", 4) }()
	}
	mustAppend(t, s, "s", contextEvent("5"))
	for i := 0; i < waiters; i++ {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
}

func testWaitCancel(t *testing.T, s session.Store) {
	create(t, s, "s")
	create(t, s, "other")
	mustAppend(t, s, "s", contextEvent("1"))

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	if err := s.Wait(ctx, "s", 1); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Wait with nothing new: err = %v, want DeadlineExceeded", err)
	}

	// An append to another session does not end the wait.
	ctx, cancel = context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Wait(ctx, "s", 1) }()
	mustAppend(t, s, "other", contextEvent("x"))
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Wait cancelled: err = %v, want Canceled", err)
	}
}

func testOpenCalls(t *testing.T, s session.Store) {
	if got, err := s.OpenCalls(context.Background()); err != nil || len(got) != 0 {
		t.Fatalf("OpenCalls on an empty store = %v, %v", got, err)
	}
	create(t, s, "b")
	create(t, s, "a")
	mustAppend(t, s, "a",
		callEvent(t, 1, 1, "c1", "math_add", `{"a":1,"b":2}`), // 1: closed by 3
		callEvent(t, 1, 1, "c2", "run_code", `{"code":"x"}`),  // 2: open
		resultEvent(t, "c1", false),                           // 3
	)
	mustAppend(t, s, "a",
		event(t, session.TypeCodeDispatchStart, session.CodeDispatchStart{RootCallID: "c2", ParentCallID: "c2", SubCallID: "c2:code:1", Name: "util_echo", Arguments: json.RawMessage(`{}`)}),
		callEvent(t, 2, 1, "c3", "util_echo", `{}`), // 5: closed by 6, reopened by 7
		resultEvent(t, "c3", true),
		callEvent(t, 3, 1, "c3", "util_echo", `{"again":true}`), // 7: open (the earlier result does not close it)
	)
	mustAppend(t, s, "b",
		resultEvent(t, "c9", false),                        // a result before its call closes nothing
		callEvent(t, 1, 4, "c9", "util_sleep", `{"ms":5}`), // 2: open
		callEvent(t, 1, 4, "c2", "util_echo", `{}`),        // 3: open (a's c2 is another call)
	)
	got, err := s.OpenCalls(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	type key struct {
		session, id string
		seq         int64
	}
	var keys []key
	for _, oc := range got {
		keys = append(keys, key{oc.SessionID, oc.Call.CallID, oc.Seq})
	}
	want := []key{{"a", "c2", 2}, {"a", "c3", 7}, {"b", "c9", 2}, {"b", "c2", 3}}
	if !slices.Equal(keys, want) {
		t.Fatalf("OpenCalls = %v, want %v", keys, want)
	}
	if c := got[1].Call; c.Name != "util_echo" || c.Turn != 3 || c.Step != 1 || c.Arguments != `{"again":true}` {
		t.Fatalf("OpenCalls decoded %+v", c)
	}
	// Recovery closes them; then nothing is open.
	for _, oc := range got {
		mustAppend(t, s, oc.SessionID, resultEvent(t, oc.Call.CallID, true))
	}
	if got, err := s.OpenCalls(context.Background()); err != nil || len(got) != 0 {
		t.Fatalf("OpenCalls after closing all = %v, %v", got, err)
	}
}

// testLapsedLeases: a store that is a session.LeaseSweeper lists the
// sessions whose lease expired unreleased, with their open calls, and no
// session whose lease lives, was released, or was never taken; a lease
// taken over is no longer listed.
func testLapsedLeases(t *testing.T, s session.Store) {
	sw, ok := s.(session.LeaseSweeper)
	if !ok {
		t.Skip("not a session.LeaseSweeper")
	}
	ctx := context.Background()
	for _, id := range []string{"lapsed", "closed", "live", "released", "never"} {
		create(t, s, id)
		mustAppend(t, s, id, callEvent(t, 1, 1, id+"-call", "math_add", `{}`))
	}
	mustAppend(t, s, "closed", resultEvent(t, "closed-call", false))
	for _, id := range []string{"lapsed", "closed"} {
		if _, err := s.AcquireLease(ctx, id, "gone", time.Millisecond); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.AcquireLease(ctx, "live", "here", time.Hour); err != nil {
		t.Fatal(err)
	}
	l, err := s.AcquireLease(ctx, "released", "here", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.ReleaseLease(ctx, l); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	ids, open, err := sw.LapsedLeases(ctx)
	if err != nil || !slices.Equal(ids, []string{"closed", "lapsed"}) {
		t.Fatalf("LapsedLeases = %v, %v; want [closed lapsed]", ids, err)
	}
	if len(open) != 1 || open[0].SessionID != "lapsed" || open[0].Call.CallID != "lapsed-call" || open[0].Seq != 1 {
		t.Fatalf("open calls of lapsed leases %+v", open)
	}
	if _, err := s.AcquireLease(ctx, "lapsed", "next", time.Hour); err != nil {
		t.Fatal(err)
	}
	if ids, _, err := sw.LapsedLeases(ctx); err != nil || !slices.Equal(ids, []string{"closed"}) {
		t.Fatalf("after a take-over: LapsedLeases = %v, %v", ids, err)
	}
}

func testClose(t *testing.T, s session.Store) {
	create(t, s, "s")
	waitErr := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
		defer cancel()
		waitErr <- s.Wait(ctx, "s", 1000)
	}()
	// Writes submitted before Close commit.
	ctx := context.Background()
	var tickets []*session.Ticket
	for i := 0; i < 50; i++ {
		tickets = append(tickets, s.Submit(ctx, session.Write{SessionID: "s", Events: []session.Event{contextEvent(fmt.Sprint(i))}}))
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for i, tk := range tickets {
		select {
		case <-tk.Done():
		default:
			t.Fatalf("ticket %d unresolved after Close", i)
		}
		if got, err := tk.Wait(ctx); err != nil || got[0].Seq != int64(i+1) {
			t.Fatalf("write %d submitted before Close = %+v, %v", i, got, err)
		}
	}
	if err := <-waitErr; !errors.Is(err, session.ErrClosed) {
		t.Fatalf("Wait across Close: err = %v, want ErrClosed", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := s.Append(ctx, "s", contextEvent("late")); !errors.Is(err, session.ErrClosed) {
		t.Errorf("Append after Close: err = %v, want ErrClosed", err)
	}
	if _, err := s.Submit(ctx, session.Write{SessionID: "s", Events: []session.Event{contextEvent("late")}}).Wait(ctx); !errors.Is(err, session.ErrClosed) {
		t.Errorf("Submit after Close: err = %v, want ErrClosed", err)
	}
	if _, err := s.Events(ctx, "s", 0, 0); !errors.Is(err, session.ErrClosed) {
		t.Errorf("Events after Close: err = %v, want ErrClosed", err)
	}
	if err := s.CreateSession(ctx, session.Session{ID: "t"}); !errors.Is(err, session.ErrClosed) {
		t.Errorf("CreateSession after Close: err = %v, want ErrClosed", err)
	}
	if _, err := s.GetSession(ctx, "s"); !errors.Is(err, session.ErrClosed) {
		t.Errorf("GetSession after Close: err = %v, want ErrClosed", err)
	}
	if _, err := s.OpenCalls(ctx); !errors.Is(err, session.ErrClosed) {
		t.Errorf("OpenCalls after Close: err = %v, want ErrClosed", err)
	}
	if err := s.Wait(ctx, "s", 0); !errors.Is(err, session.ErrClosed) {
		t.Errorf("Wait after Close: err = %v, want ErrClosed", err)
	}
	if _, err := s.LoadCheckpoint(ctx, "s"); !errors.Is(err, session.ErrClosed) {
		t.Errorf("LoadCheckpoint after Close: err = %v, want ErrClosed", err)
	}
	if _, err := s.AcquireLease(ctx, "s", "o", time.Second); !errors.Is(err, session.ErrClosed) {
		t.Errorf("AcquireLease after Close: err = %v, want ErrClosed", err)
	}
	if err := s.ReleaseLease(ctx, session.Lease{SessionID: "s", Owner: "o", Token: 1}); !errors.Is(err, session.ErrClosed) {
		t.Errorf("ReleaseLease after Close: err = %v, want ErrClosed", err)
	}
	if _, err := s.ListSessions(ctx, session.SessionFilter{}); !errors.Is(err, session.ErrClosed) {
		t.Errorf("ListSessions after Close: err = %v, want ErrClosed", err)
	}
	if err := s.DeleteSession(ctx, "s"); !errors.Is(err, session.ErrClosed) {
		t.Errorf("DeleteSession after Close: err = %v, want ErrClosed", err)
	}
	if _, err := s.Prune(ctx, session.Retention{MaxCount: 1}); !errors.Is(err, session.ErrClosed) {
		t.Errorf("Prune after Close: err = %v, want ErrClosed", err)
	}
}

// concurrently runs work(0) to work(n-1) at once and fails the test with
// the first error any of them returns.
func concurrently(t *testing.T, n int, work func(i int) error) {
	t.Helper()
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- work(i)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}

// waitAsync starts s.Wait(id, after), bounded by waitLimit, and returns
// where its error arrives.
func waitAsync(s session.Store, id string, after int64) <-chan error {
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
		defer cancel()
		done <- s.Wait(ctx, id, after)
	}()
	return done
}

// checkSeqs asserts the session's events are numbered exactly 1..n.
func checkSeqs(t *testing.T, s session.Store, id string, n int) {
	t.Helper()
	evs := mustEvents(t, s, id, 0, 0)
	if len(evs) != n {
		t.Fatalf("session %s has %d events, want %d", id, len(evs), n)
	}
	for i, e := range evs {
		if e.Seq != int64(i+1) {
			t.Fatalf("session %s: event %d has seq %d", id, i, e.Seq)
		}
	}
}

func create(t *testing.T, s session.Store, id string) {
	t.Helper()
	if err := s.CreateSession(context.Background(), session.Session{ID: id, Scope: "default"}); err != nil {
		t.Fatal(err)
	}
}

func mustAppend(t *testing.T, s session.Store, id string, events ...session.Event) []session.Event {
	t.Helper()
	got, err := s.Append(context.Background(), id, events...)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func mustEvents(t *testing.T, s session.Store, id string, after int64, limit int) []session.Event {
	t.Helper()
	got, err := s.Events(context.Background(), id, after, limit)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func event(t *testing.T, typ string, payload any) session.Event {
	t.Helper()
	e, err := session.NewEvent(typ, payload)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// contextEvent builds a user/context event; safe to call from any goroutine.
func contextEvent(text string) session.Event {
	data, _ := json.Marshal(session.UserContext{Source: "test", Text: text}) // cannot fail
	return session.Event{Type: session.TypeUserContext, Data: data}
}

func callEvent(t *testing.T, turn, step int, id, name, args string) session.Event {
	return event(t, session.TypeToolCall, session.ToolCall{Turn: turn, Step: step, CallID: id, Name: name, Arguments: args})
}

func resultEvent(t *testing.T, id string, isError bool) session.Event {
	r := session.ToolResult{CallID: id, Result: session.Result{IsError: isError, Content: []registry.ContentBlock{registry.Text("done")}}}
	if isError {
		r.Error = &session.ErrorInfo{Code: registry.CodeAborted, Message: "stopped"}
	}
	return event(t, session.TypeToolResult, r)
}
