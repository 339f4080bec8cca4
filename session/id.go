package session

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"time"
)

// NewID returns a new id, the one generator of the ids codemode mints
// (sessions, runs, calls, approvals): 128 bits in hex, laid out as a
// UUIDv7's are, 48 bits of Unix milliseconds then 80 random bits. Ids minted later
// sort later, so a log's indexes take new sessions at their ends: with
// random ids, each new session's rows went to a different page of every
// index, and a run wrote nearly twice the bytes it does with these
// (BENCHMARKS.md, "Figures behind the code's choices"). The random bits keep ids unguessable.
func NewID() string {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], uint64(time.Now().UnixMilli())<<16)
	_, _ = rand.Read(b[6:])
	return hex.EncodeToString(b[:])
}
