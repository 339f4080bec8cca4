package mcp

import (
	"fmt"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/codemode/codemode/admission"
)

// sessionRetryAfter is the Retry-After, in seconds, of a refused session.
const sessionRetryAfter = "10"

// codeTooManySessions is the JSON-RPC error of an initialize refused for
// want of room: an implementation-defined server error.
const codeTooManySessions = -32000

// sessionCap counts the MCP sessions open over an HTTPHandler, in all its
// scopes, each from its initialize until it ends, in a pool shared among
// tenants (API keys; admission.Pool): a tenant alone may open them all,
// and when they are all open another tenant under its share takes the
// longest idle session of the tenant most over its share, which is closed.
// A session is busy, never evicted, while a request of it is handled.
type sessionCap struct {
	pool *admission.Pool
	mu   sync.Mutex
	open map[*sdk.ServerSession]*admission.Slot // guarded by mu
}

func newSessionCap(max int) *sessionCap {
	return &sessionCap{pool: admission.NewPool("server.max_mcp_sessions", max), open: map[*sdk.ServerSession]*admission.Slot{}}
}

// count is how many sessions are open.
func (c *sessionCap) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.open)
}

// admissible reports whether a new session of tenant would be admitted now.
func (c *sessionCap) admissible(tenant string) bool { return c.pool.Admissible(tenant) }

// take counts ss as tenant's until it ends, or fails when the pool has no
// room for it (admission.FullError).
func (c *sessionCap) take(ss *sdk.ServerSession, tenant string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.open[ss]; ok {
		return nil
	}
	slot, err := c.pool.Take(tenant, func() { ss.Close() })
	if err != nil {
		return err
	}
	c.open[ss] = slot
	go func() {
		_ = ss.Wait()
		slot.Release()
		c.mu.Lock()
		delete(c.open, ss)
		c.mu.Unlock()
	}()
	return nil
}

// busy marks ss in use until done is called; nil-safe for a session it
// does not count.
func (c *sessionCap) busy(ss *sdk.ServerSession) (done func()) {
	c.mu.Lock()
	slot := c.open[ss]
	c.mu.Unlock()
	if slot == nil {
		return func() {}
	}
	return slot.Busy()
}

// tooManySessions is the error of an initialize refused for want of room;
// why, when not nil, says which room.
func tooManySessions(why error) *jsonrpc.Error {
	msg := "too many MCP sessions are open (server.max_mcp_sessions); end idle ones with DELETE /mcp, or retry later"
	if why != nil {
		msg = fmt.Sprintf("too many MCP sessions are open: %v; end idle ones with DELETE /mcp, or retry later", why)
	}
	return &jsonrpc.Error{Code: codeTooManySessions, Message: msg}
}

// tenantHeader carries, inside the server, the tenant (API key) of a
// request to its initialize (HTTPHandler.SetTenant); a client's is dropped.
const tenantHeader = "Codemode-Tenant"
