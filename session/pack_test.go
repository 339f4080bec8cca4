package session

import (
	"encoding/json"
	"testing"
)

// Unpacking never panics, whatever the bytes (it trusts the data of each event to be the JSON
// object the store wrote, as a row of one event is trusted); what PackEvents wrote reads back
// whole.
func FuzzUnpackEvents(f *testing.F) {
	f.Add([]byte(`[["a",1,{}],["b\"c",-2,{"x":[1,{"y":"]"}]}]]`), int64(2), int64(0), 5)
	f.Add([]byte(`[["a",1,{}]`), int64(2), int64(0), -1)
	f.Add([]byte(`[ [ "a" , 1 , { } ] , [ "b" , 2 , {"k":"v"} ] ]`), int64(2), int64(1), 1)
	f.Fuzz(func(t *testing.T, data []byte, n, after int64, limit int) {
		if n < 2 || n > 64 {
			return
		}
		out, err := UnpackEvents(nil, 10, n, data, 10+after, limit)
		if err != nil {
			return
		}
		var events []Prepared
		for _, e := range out {
			if !json.Valid(e.Data) {
				return // not what a store writes
			}
			events = append(events, Prepared{Event: e})
		}
		if len(events) < 2 {
			return
		}
		again, err := UnpackEvents(nil, 1, int64(len(events)), PackEvents(events), 0, -1)
		if err != nil || len(again) != len(events) {
			t.Fatalf("round trip: %v, %d of %d", err, len(again), len(events))
		}
		for i := range again {
			if again[i].Type != events[i].Type || !again[i].Time.Equal(events[i].Time) || string(again[i].Data) != string(events[i].Data) {
				t.Fatalf("round trip %d: %+v != %+v", i, again[i], events[i])
			}
		}
	})
}
