// Package httpapi is codemode's HTTP service: the REST API of docs/contract.md
// over an assembled app.App, on a chi router.
//
// Routes:
//
//	GET    /healthz                              liveness: 200 {"status":"ok"} while the process serves
//	GET    /readyz                               readiness: 200 {"status":"ready","checks":{…}} or 503 "not_ready" (store, upstreams, shutdown)
//	GET    /metrics                              Prometheus text format (with API keys configured: needs a key)
//	GET    /                                     the playground (or a page listing the API)
//	*      /mcp                                  MCP over streamable HTTP (when mounted)
//	GET    /v1/scopes                            the scopes the caller may use
//	GET    /v1/upstreams                         each upstream MCP server's state
//	GET    /v1/openapi_sources                   each OpenAPI source's state
//	GET    /v1/tools?scope=                      what the scope's model is offered
//	GET    /v1/tools/search?scope=&q=&limit=&group=  the scope's SDK tools ranked for q, as tools.$search
//	GET    /v1/sdk?scope=&format=ts|js|prompt    the generated SDK text, with an ETag
//	GET    /v1/sdk/tokens?scope=                 the SDK's o200k_base token counts, per tool and in total
//	GET    /openapi.json                         the OpenAPI 3.1 description of this API
//	POST   /v1/run                               a client's program; without session_id it creates a session ("ephemeral": true deletes it after the run)
//	GET    /v1/sessions?scope=&limit=&cursor=    {"sessions":[…],"next_cursor"?}, newest first, within the key's scopes
//	POST   /v1/sessions                          201 a new session
//	GET    /v1/sessions/{id}                     the session's header {"id","scope","created_at","last_seq","updated_at"}
//	DELETE /v1/sessions/{id}                     204: the session and its log are deleted
//	POST   /v1/sessions/{id}/steps               one model response's tool calls
//	GET    /v1/sessions/{id}/events?after=&limit= {"events":[…],"more","next_after"?} (default 1000, at most 10000), or a text/event-stream
//	GET    /v1/sessions/{id}/messages            the model-facing messages rebuilt from the log
//	GET    /v1/sessions/{id}/approvals           {"approvals":[…]}, the pending asks
//	POST   /v1/sessions/{id}/approvals/{aid}     allow or deny one; 409 APPROVAL_ANSWERED when answered already
//	GET    /v1/sessions/{id}/calls/{call_id}     one call's state and result from the log (?wait=D for an open one)
//
// A request passes, in order: naming (X-Request-Id, honoured when a client
// sends a valid one, else minted; echoed, carried in the request's context
// into its log lines, error bodies and the tool/call events it starts), the
// Server header, metrics, the access log line and panic recovery; the write
// deadlines (server.write_timeout); the Host check while the server listens
// on loopback; for /v1 (and /mcp) the cross-origin and content-type checks,
// the body limit, API-key identification, per-key rate limiting and
// authentication; for every /v1 route but event streams the request timeout
// (server.request_timeout); then its handler. Runs (POST /v1/run and POST
// /v1/sessions/{id}/steps) also take a slot from a bounded FIFO queue and
// their memory from the service's budget before they reach the agent loop,
// which executes them through the runtime pipeline and logs them in the
// session store. Event streams (text/event-stream) follow the store with
// Store.Wait, so events appended by other replicas arrive too.
//
// The service holds no state between requests beyond counters, limiters and
// the reservations of requests in flight: every session lives in the log,
// so several replicas can share a PostgreSQL store behind any load balancer.
// New trusts its App's configuration to be valid (config.Validate).
package httpapi
