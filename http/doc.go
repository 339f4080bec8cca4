// Package httpapi is codemode's HTTP service: the REST API of docs/contract.md
// over an assembled app.App, on a chi router.
//
// A request passes, in order: metrics and panic recovery; for /v1 the body
// limit, API-key identification, per-key rate limiting and authentication;
// then its handler. Runs (POST /v1/run and POST /v1/sessions/{id}/steps)
// also take a slot from a bounded FIFO queue before they reach the agent
// loop, which executes them through the runtime pipeline and logs them in the
// session store. Event streams (text/event-stream) follow the store with
// Store.Wait, so events appended by other replicas arrive too.
//
// The service holds no state between requests beyond counters and the
// limiter: every session lives in the log, so several replicas can share a
// PostgreSQL store behind any load balancer.
package httpapi
