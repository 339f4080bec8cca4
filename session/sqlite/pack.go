package sqlite

import (
	"unsafe"

	"github.com/codemode/codemode/session"
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
func appendEventRows(rows []any, sessionID string, base int64, events []session.Prepared) []any {
	fits := func(n, size int, e session.Prepared) bool {
		return n < maxPackEvents && size+len(e.Data) <= maxPackBytes
	}
	for i := 0; i < len(events); {
		n, size := 1, len(events[i].Data)
		if events[i].CallID == "" {
			for i+n < len(events) && events[i+n].CallID == "" && fits(n, size, events[i+n]) {
				size += len(events[i+n].Data)
				n++
			}
			if i+n < len(events) && events[i+n].Type == session.TypeToolResult && fits(n, size, events[i+n]) {
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
			data = session.PackEvents(events[i : i+n])
		}
		rows = append(rows, sessionID, base+int64(i+n), e.Type, e.Time.UnixMicro(), callID, bytesString(data), int64(n))
		i += n
	}
	return rows
}

// bytesString views b as a string without copying: the store's own copy of
// an event's data, which nothing changes, and which the driver copies again.
func bytesString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }
