package agent

import "context"

// Gate holds back what a step's caller shows until the step's log is
// durable (output gating). A step's results are known before its last
// writes have reached stable storage; a caller with a reply to build builds
// it meanwhile and sends it once Wait returns nil, so the flush and the
// reply's own work overlap instead of following each other. When Wait
// returns an error the step failed as Step would have reported it, and
// nothing that depends on its results may be shown.
type Gate struct{ w *logWriter }

// Wait blocks until every write of the step is durable and returns the
// first that failed. When ctx ends first it returns ctx.Err(); the writes go
// on. A nil Gate is open.
func (g *Gate) Wait(ctx context.Context) error {
	if g == nil {
		return nil
	}
	return g.w.durable(ctx)
}
