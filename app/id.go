package app

import (
	"crypto/rand"
	"encoding/hex"
)

// NewID returns a random 128-bit id in hex.
func NewID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
