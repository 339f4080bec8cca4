package mcp

import (
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// sessionRetryAfter is the Retry-After, in seconds, of a refused session.
const sessionRetryAfter = "10"

// codeTooManySessions is the JSON-RPC error of an initialize refused for
// want of room: an implementation-defined server error.
const codeTooManySessions = -32000

// sessionCap counts the MCP sessions open over an HTTPHandler, in all its
// scopes, each from its initialize until it ends, and refuses one beyond
// max (<= 0: no bound).
type sessionCap struct {
	max  int
	mu   sync.Mutex
	open map[*sdk.ServerSession]struct{}
}

func newSessionCap(max int) *sessionCap {
	return &sessionCap{max: max, open: map[*sdk.ServerSession]struct{}{}}
}

// count is how many sessions are open.
func (c *sessionCap) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.open)
}

// full reports whether a new session would be refused now.
func (c *sessionCap) full() bool { return c.max > 0 && c.count() >= c.max }

// take counts ss as open until it ends, or reports false when max sessions
// are open already.
func (c *sessionCap) take(ss *sdk.ServerSession) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.open[ss]; ok {
		return true
	}
	if c.max > 0 && len(c.open) >= c.max {
		return false
	}
	c.open[ss] = struct{}{}
	go func() {
		_ = ss.Wait()
		c.mu.Lock()
		delete(c.open, ss)
		c.mu.Unlock()
	}()
	return true
}

// tooManySessions is the error of an initialize refused for want of room.
func tooManySessions() *jsonrpc.Error {
	return &jsonrpc.Error{Code: codeTooManySessions,
		Message: "too many MCP sessions are open (server.max_mcp_sessions); end idle ones with DELETE /mcp, or retry later"}
}
