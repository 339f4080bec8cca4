package mcp

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// A client that declared neither sampling nor elicitation is not asked for
// either: the upstream's request fails with MCP's code for a missing
// capability, naming the client and the capability.
func TestSessionPeerWithoutCapabilities(t *testing.T) {
	ctx := context.Background()
	server := sdk.NewServer(&sdk.Implementation{Name: "s", Version: "1"}, nil)
	ct, st := sdk.NewInMemoryTransports()
	ss, err := server.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "bare-client", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	p := sessionPeer{ss: ss, reqCtx: ctx}
	_, errSampling := p.CreateMessage(ctx, &sdk.CreateMessageParams{})
	_, errElicit := p.Elicit(ctx, &sdk.ElicitParams{Message: "?"})
	for capability, err := range map[string]error{"sampling": errSampling, "elicitation": errElicit} {
		var je *jsonrpc.Error
		if !errors.As(err, &je) || je.Code != sdk.CodeMissingRequiredClientCapabilities {
			t.Fatalf("%s: got %v, want code %d", capability, err, sdk.CodeMissingRequiredClientCapabilities)
		}
		if want := capability + " is not available: bare-client did not declare the " + capability + " capability"; !strings.Contains(je.Message, want) {
			t.Errorf("%s: message %q, want %q", capability, je.Message, want)
		}
	}
}
