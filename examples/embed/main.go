// Command embed runs a code-mode program over two typed tools; a refund is approved in Go.
package main

import (
	"context"
	"fmt"
	"log"
	"strings"

	"github.com/codemode/codemode/agent"
	"github.com/codemode/codemode/app"
	"github.com/codemode/codemode/config"
	"github.com/codemode/codemode/registry"
)

type order struct {
	ID    string `json:"id" jsonschema:"order id" schema:"pattern=^o-[0-9]+$"`
	Total int    `json:"total,omitempty" jsonschema:"cents"`
}
type refund struct {
	ID     string `json:"id"`
	Amount int    `json:"amount" jsonschema:"cents" schema:"minimum=1"`
}

const settings = `{isolation: inproc, store: "memory://", demo: false, mode: code,
  policies: [{tool: refund, decision: ask, reason: refunds move money}]}`
const program = `const o = await tools.get_order({id: "o-17"});
const r = await tools.refund({id: o.id, amount: o.total / 2});
return {order: o.id, refunded: r.amount};`

func main() {
	ctx := context.Background()
	getOrder := registry.MustTyped("get_order", "Looks up an order.", func(_ context.Context, _ registry.Exec, in order) (order, error) {
		return order{ID: in.ID, Total: 4200}, nil
	}, &registry.Behavior{Hints: registry.Hints{ReadOnly: true}})
	doRefund := registry.MustTyped("refund", "Refunds part of an order.", func(_ context.Context, _ registry.Exec, in refund) (refund, error) {
		return in, nil // the payment provider's call goes here
	}, nil)
	approve := agent.ApproverFunc(func(_ context.Context, ask agent.Ask) (agent.Verdict, error) {
		fmt.Printf("approve %s %s (%s)? yes\n", ask.Tool, ask.Arguments, ask.Reason)
		return agent.Allow("under 50 EUR"), nil // or agent.Reject(why), or agent.Defer()
	})
	cfg, err := config.Parse(strings.NewReader(settings))
	if err != nil {
		log.Fatal(err)
	}
	a, err := app.New(ctx, cfg, app.Options{Tools: []*registry.Tool{getOrder, doRefund}, Approver: approve})
	if err != nil {
		log.Fatal(err)
	}
	defer a.Close()
	res, err := a.Run(ctx, app.RunRequest{Code: program}) // as a model's run_code call
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("result: %s\n", res.Value)
	for _, c := range res.Calls {
		fmt.Printf("call %d: %s(%s) error=%v\n", c.Number, c.Name, c.Arguments, c.IsError)
	}
}
