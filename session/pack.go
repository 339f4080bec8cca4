package session

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/codemode/codemode/internal/jsontext"
)

// PackEvents encodes events as a pack: a JSON array of [type, time, data]
// triples (time in unix microseconds), which a backend may store as the
// data of one row instead of a row per event (see session/sqlite).
// UnpackEvents reads it back.
func PackEvents(events []Prepared) []byte {
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

// UnpackEvents appends to out the events of a pack (see PackEvents) of n
// events whose first is seq, skipping those up to after and stopping at
// limit events in out in all (< 0: no limit). It trusts the data of each
// event to be the JSON object the store wrote, and never panics whatever
// the bytes.
func UnpackEvents(out []Event, seq, n int64, data []byte, after int64, limit int) ([]Event, error) {
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
