package mcp

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// A Peer is the MCP client on whose behalf a call runs. An upstream server's
// sampling and elicitation requests made during a call are forwarded to it;
// a call without one (an HTTP run, `codemode run`) refuses them clearly.
// The MCP server (server.go) sets one for every tools/call, built from the
// client's session and its declared capabilities.
type Peer interface {
	// CreateMessage asks the client to sample from its model
	// (sampling/createMessage).
	CreateMessage(ctx context.Context, p *sdk.CreateMessageParams) (*sdk.CreateMessageResult, error)
	// Elicit asks the client's user for input (elicitation/create).
	Elicit(ctx context.Context, p *sdk.ElicitParams) (*sdk.ElicitResult, error)
}

type peerKey struct{}

// WithPeer returns a context whose calls forward their upstreams' sampling
// and elicitation requests to p.
func WithPeer(ctx context.Context, p Peer) context.Context {
	return context.WithValue(ctx, peerKey{}, p)
}

func peerFrom(ctx context.Context) Peer {
	p, _ := ctx.Value(peerKey{}).(Peer)
	return p
}

// peerFor finds where an upstream's request goes: the peer of the one call
// in flight. Requests name no call, so with several calls in flight (which
// may serve different clients) codemode cannot tell whose it is and refuses
// it rather than ask the wrong person.
func (u *upstream) peerFor(what string) (*inflight, Peer, error) {
	u.mu.Lock()
	n := len(u.calls)
	u.mu.Unlock()
	c := u.onlyCall()
	switch {
	case n == 0:
		return nil, nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: fmt.Sprintf("codemode forwards %s requests only during a tool call, and none of %s's is in flight", what, u.cfg.Name)}
	case c == nil:
		return nil, nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: fmt.Sprintf("codemode cannot tell which of the %d calls in flight on %s this %s request belongs to, so it refuses it", n, u.cfg.Name, what)}
	}
	p := peerFrom(c.ctx)
	if p == nil {
		return nil, nil, &jsonrpc.Error{Code: sdk.CodeMissingRequiredClientCapabilities, Message: fmt.Sprintf("%s is not available: the call (%s) was not made by an MCP client that could answer it", what, c.tool)}
	}
	return c, p, nil
}

// within is ctx (the upstream request's) also ended by the call's end.
func within(ctx context.Context, c *inflight) (context.Context, func()) {
	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(c.ctx, cancel)
	return ctx, func() { stop(); cancel() }
}

func (u *upstream) createMessage(ctx context.Context, p *sdk.CreateMessageParams) (*sdk.CreateMessageResult, error) {
	return toPeer(ctx, u, "sampling", Peer.CreateMessage, p)
}

func (u *upstream) elicit(ctx context.Context, p *sdk.ElicitParams) (*sdk.ElicitResult, error) {
	return toPeer(ctx, u, "elicitation", Peer.Elicit, p)
}

// toPeer forwards an upstream's request of a kind ("sampling") by send to
// the MCP client whose call it serves, within that call, and logs it; one
// peerFor refuses is logged and answered with its error.
func toPeer[P, R any](ctx context.Context, u *upstream, kind string, send func(Peer, context.Context, P) (R, error), p P) (R, error) {
	c, peer, err := u.peerFor(kind)
	if err != nil {
		u.log.Warn("upstream "+kind+" request refused", "error", err)
		var zero R
		return zero, err
	}
	u.log.Info("forwarding an upstream "+kind+" request to the MCP client", "tool", c.tool, "call", c.callID)
	ctx, done := within(ctx, c)
	defer done()
	return send(peer, ctx, p)
}

// sessionPeer is the Peer of a call made by a client of codemode's MCP
// server. Requests go out in the context of the client's tools/call (reqCtx),
// so that over streamable HTTP they travel on that request's stream.
type sessionPeer struct {
	ss     *sdk.ServerSession
	reqCtx context.Context
}

func (p sessionPeer) capabilities() *sdk.ClientCapabilities {
	if ip := p.ss.InitializeParams(); ip != nil && ip.Capabilities != nil {
		return ip.Capabilities
	}
	return &sdk.ClientCapabilities{}
}

func (p sessionPeer) clientName() string {
	if ip := p.ss.InitializeParams(); ip != nil && ip.ClientInfo != nil && ip.ClientInfo.Name != "" {
		return ip.ClientInfo.Name
	}
	return "the MCP client"
}

// in is ctx's cancellation with reqCtx's values.
func (p sessionPeer) in(ctx context.Context) (context.Context, func()) {
	out, cancel := context.WithCancel(p.reqCtx)
	stop := context.AfterFunc(ctx, cancel)
	return out, func() { stop(); cancel() }
}

func (p sessionPeer) CreateMessage(ctx context.Context, params *sdk.CreateMessageParams) (*sdk.CreateMessageResult, error) {
	return ask(p, ctx, p.capabilities().Sampling != nil, "sampling", p.ss.CreateMessage, params)
}

func (p sessionPeer) Elicit(ctx context.Context, params *sdk.ElicitParams) (*sdk.ElicitResult, error) {
	return ask(p, ctx, p.capabilities().Elicitation != nil, "elicitation", p.ss.Elicit, params)
}

// ask sends the client a request of the capability it declared (or fails
// with the code MCP gives a missing one), cancelled with ctx and carrying
// the values of the client's request.
func ask[P, R any](p sessionPeer, ctx context.Context, declared bool, capability string, send func(context.Context, P) (R, error), params P) (R, error) {
	if !declared {
		var zero R
		return zero, &jsonrpc.Error{Code: sdk.CodeMissingRequiredClientCapabilities, Message: fmt.Sprintf("%s is not available: %s did not declare the %s capability", capability, p.clientName(), capability)}
	}
	ctx, done := p.in(ctx)
	defer done()
	return send(ctx, params)
}
