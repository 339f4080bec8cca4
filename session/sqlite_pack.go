package session

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"
	"unsafe"

	"github.com/codemode/codemode/internal/jsontext"
)

// Packing (SQLite): a write's consecutive events without a call id, with the
// tool/result that may follow them, share one row of the events table,
// n > 1, whose data is a JSON array of [type, time, data] triples and whose
// seq, type and call id are the last event's (migration 0003). Each row
// costs a commit a B-tree insert and index entries, and the statement its
// bound parameters, so a run whose nested dispatch events pack with its
// result costs as many rows to log as one without calls. A tool/call always
// has a row of its own: recovery reads its data by its call id.

const (
	// sqliteColumns are the columns of an events row: session_id, seq, type,
	// time, call_id, data, n.
	sqliteColumns = 7
	// maxPackEvents and maxPackBytes bound a pack, so that a read that
	// starts in its middle reads little of it in vain.
	maxPackEvents = 64
	maxPackBytes  = 256 << 10
)

// appendEventRows appends the rows of a write's events, numbered after base.
func appendEventRows(rows []any, sessionID string, base int64, events []Prepared) []any {
	fits := func(n, size int, e Prepared) bool {
		return n < maxPackEvents && size+len(e.Data) <= maxPackBytes
	}
	for i := 0; i < len(events); {
		n, size := 1, len(events[i].Data)
		if events[i].CallID == "" {
			for i+n < len(events) && events[i+n].CallID == "" && fits(n, size, events[i+n]) {
				size += len(events[i+n].Data)
				n++
			}
			if i+n < len(events) && events[i+n].Type == TypeToolResult && fits(n, size, events[i+n]) {
				n++ // the result the nested events lead to
			}
		}
		e := events[i+n-1] // the row's seq, type, time and call id are its last event's
		var callID any
		if e.CallID != "" {
			callID = e.CallID
		}
		data := e.Data
		if n > 1 {
			data = packEvents(events[i : i+n])
		}
		rows = append(rows, sessionID, base+int64(i+n), e.Type, e.Time.UnixMicro(), callID, bytesString(data), int64(n))
		i += n
	}
	return rows
}

// bytesString views b as a string without copying: the store's own copy of
// an event's data, which nothing changes, and which the driver copies again.
func bytesString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// packEvents encodes events as a pack's data.
func packEvents(events []Prepared) []byte {
	size := 2
	for _, e := range events {
		size += len(e.Data) + len(e.Type) + 32
	}
	b := make([]byte, 0, size)
	b = append(b, '[')
	for i, e := range events {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '[')
		b = jsontext.AppendString(b, e.Type)
		b = append(b, ',')
		b = strconv.AppendInt(b, e.Time.UnixMicro(), 10)
		b = append(b, ',')
		b = append(b, e.Data...)
		b = append(b, ']')
	}
	return append(b, ']')
}

var errPack = errors.New("malformed packed events")

// unpackEvents appends the events of a pack of n events whose first is
// seq, skipping those up to after and stopping at limit events in all
// (< 0: no limit).
func unpackEvents(out []Event, seq, n int64, data []byte, after int64, limit int) ([]Event, error) {
	i := jsontext.SkipSpace(data, 0)
	if i >= len(data) || data[i] != '[' {
		return out, errPack
	}
	i++
	for k := int64(0); k < n; k++ {
		if k > 0 {
			if i = jsontext.SkipSpace(data, i); i >= len(data) || data[i] != ',' {
				return out, errPack
			}
			i++
		}
		e, next, err := unpackEvent(data, jsontext.SkipSpace(data, i))
		if err != nil {
			return out, fmt.Errorf("%w: event %d: %w", errPack, k+1, err)
		}
		i = next
		if e.Seq = seq + k; e.Seq <= after {
			continue
		}
		if limit >= 0 && len(out) >= limit {
			return out, nil
		}
		out = append(out, e)
	}
	if i = jsontext.SkipSpace(data, i); i >= len(data) || data[i] != ']' || jsontext.SkipSpace(data, i+1) != len(data) {
		return out, errPack
	}
	return out, nil
}

// unpackEvent reads one [type, time, data] triple at data[i].
func unpackEvent(data []byte, i int) (Event, int, error) {
	var e Event
	if i >= len(data) || data[i] != '[' {
		return e, 0, errMalformed
	}
	// type
	i = jsontext.SkipSpace(data, i+1)
	if i >= len(data) || data[i] != '"' {
		return e, 0, errMalformed
	}
	end, err := skipString(data, i)
	if err != nil {
		return e, 0, err
	}
	e.Type = string(data[i+1 : end-1]) // types are printable ASCII without quotes or backslashes
	if err := checkType(e.Type); err != nil {
		return e, 0, err
	}
	// time
	if i = jsontext.SkipSpace(data, end); i >= len(data) || data[i] != ',' {
		return e, 0, errMalformed
	}
	i = jsontext.SkipSpace(data, i+1)
	if end, err = skipValue(data, i); err != nil {
		return e, 0, err
	}
	t, err := strconv.ParseInt(string(data[i:end]), 10, 64)
	if err != nil {
		return e, 0, err
	}
	e.Time = time.UnixMicro(t).UTC()
	// data
	if i = jsontext.SkipSpace(data, end); i >= len(data) || data[i] != ',' {
		return e, 0, errMalformed
	}
	i = jsontext.SkipSpace(data, i+1)
	if i >= len(data) || data[i] != '{' {
		return e, 0, errMalformed
	}
	if end, err = skipValue(data, i); err != nil {
		return e, 0, err
	}
	e.Data = json.RawMessage(data[i:end:end])
	if i = jsontext.SkipSpace(data, end); i >= len(data) || data[i] != ']' {
		return e, 0, errMalformed
	}
	return e, i + 1, nil
}
