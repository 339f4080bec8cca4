// Package httpsource makes HTTP APIs tool sources: each operation an
// OpenAPI document describes (package openapi) becomes the tool
// "<source>.<operation>", called through the same policy pipeline, log and
// SDK as every other tool.
//
// The host keeps the credentials. A program's arguments are the
// operation's path, query, header and body inputs and nothing else: the
// configured headers and auth (bearer, API key, OAuth client credentials)
// are added to each request here, so they never reach a program, the
// session log or an error text (errors and body excerpts are redacted).
//
// Requests are safe by default: only the base URL's scheme, host and port
// are requested (a path can not leave it, and a redirect off it is
// refused), responses are read up to max_response_bytes and no further,
// max_concurrency requests are in flight per source, and only idempotent
// operations are retried. An HTTP error status fails the call with
// TOOL_FAILED, its kind "http_<status>" and a redacted excerpt of the body.
package httpsource
