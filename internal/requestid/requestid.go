// Package requestid carries the id of the request that started some work in
// its context, so that the log lines and session events the work produces
// can name it. The HTTP service mints or accepts the id (X-Request-Id); the
// agent records it in the tool/call events a request starts.
package requestid

import (
	"context"
	"crypto/rand"
	"encoding/hex"
)

// MaxLen bounds an id a client may choose.
const MaxLen = 128

type key struct{}

// New mints an id: 96 random bits in hex.
func New() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Valid reports whether a client's id may be used as is: 1 to MaxLen
// printable ASCII characters (so it is safe in a header, a log line and a
// JSON string without escaping surprises).
func Valid(id string) bool {
	if id == "" || len(id) > MaxLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; c < 0x21 || c > 0x7e {
			return false
		}
	}
	return true
}

// With returns ctx carrying id.
func With(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, key{}, id)
}

// From returns the id ctx carries, or "".
func From(ctx context.Context) string {
	id, _ := ctx.Value(key{}).(string)
	return id
}
