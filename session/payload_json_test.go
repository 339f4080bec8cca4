package session

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/codemode/codemode/registry"
)

// The dispatch payloads' hand-written JSON is json.Marshal's, byte for byte;
// what json.Marshal refuses they leave to it.
func FuzzDispatchJSON(f *testing.F) {
	f.Add("run_1", "run_1:code:1", "math_add", 1, []byte(`{"a":1,"b":2}`), false, "text", "3", "", "", "", int64(0), int64(0), 0, false)
	f.Add("r<&>", "r\u2028", "t\x00\"\\", 0, []byte(" { \"a\" : [1, 2] } "), true, "text", "<b>\xff", "TOOL_ERROR", "k", "m&", int64(-1), int64(1<<40), 3600, true)
	f.Add("", "", "", -7, []byte(nil), false, "", "", "", "", "", int64(253402300800), int64(0), 59, false)
	f.Add("a", "b", "c", 2, []byte(`{"x":"\u2028<"}`), false, "image", "", "", "", "", int64(0), int64(0), -86400, false)
	f.Add("a", "b", "c", 2, []byte(`{"x":`), false, "text", "t", "", "", "", int64(0), int64(0), 0, false)
	f.Add("a", "b", "c", 2, []byte{}, false, "text", "t", "", "", "", int64(0), int64(0), 0, false)
	f.Fuzz(func(t *testing.T, root, sub, name string, number int, args []byte, isError bool, blockType, text, code, kind, message string, startSec, endNano int64, offset int, extra bool) {
		start := CodeDispatchStart{RootCallID: root, ParentCallID: root, SubCallID: sub, Number: number, Name: name, Arguments: json.RawMessage(args)}
		zone := time.FixedZone("z", offset)
		d := CodeDispatch{CodeDispatchStart: start, IsError: isError,
			StartedAt: time.Unix(startSec, 0).In(zone), EndedAt: time.Unix(0, endNano).UTC()}
		if blockType != "" {
			d.Content = []registry.ContentBlock{{Type: blockType, Text: text}}
			if extra {
				d.Content = append(d.Content, registry.ContentBlock{Type: "image", Data: "AAAA", MimeType: "image/png"})
			}
		}
		if code != "" {
			d.Error = &ErrorInfo{Code: registry.Code(code), Kind: kind, Message: message}
		}
		if extra { // what a run that may suspend adds
			start.Journal, d.Journal = kind, kind
			d.Value = json.RawMessage(args)
			d.Thrown = &Thrown{Tool: name, Code: code, Message: message}
			d.ConcludesTurn = isError
		}
		check := func(v any, got []byte, ok bool) {
			want, err := json.Marshal(v)
			if err != nil {
				if ok {
					t.Fatalf("%#v: written as %s, but json.Marshal refuses it: %v", v, got, err)
				}
				return
			}
			if ok && !bytes.Equal(got, want) {
				t.Fatalf("%#v:\n got %s\nwant %s", v, got, want)
			}
		}
		got, ok := start.appendJSON(nil)
		check(start, got, ok)
		got, ok = d.appendJSON(nil)
		check(d, got, ok)
		y := d.StartedAt.Year()
		plain := !extra && y >= 0 && y <= 9999 && offset%60 == 0 && offset > -86400 && offset < 86400
		if plain && ok != (args == nil || json.Valid(args)) {
			t.Fatalf("%#v: left to json.Marshal (ok=%v) without a reason", d, ok)
		}
	})
}
