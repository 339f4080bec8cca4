// Package mcp connects codemode to the Model Context Protocol both ways,
// with the official Go SDK (github.com/modelcontextprotocol/go-sdk) as the
// transport only.
//
// As a server (server.go, http.go), codemode offers one scope's model tools
// to an MCP host: run_code only in code mode, the native tools in native
// mode, both in both, with the scope's SDK instructions and TypeScript
// declarations in run_code's description and each tool's hints as MCP
// annotations. Every tools/call is a one-call step of the agent loop in a
// codemode session bound to the MCP session, so it runs the whole pipeline
// and is logged like any model call; the request's context is the run's, so
// a client's cancellation stops it, and it carries the client as a Peer and
// a notifier (notify.go) that forwards the call's progress and log notices.
// Registry changes that alter the list send notifications/tools/list_changed.
// ServeStdio is `codemode mcp`; Handler is the HTTP service's /mcp
// (streamable HTTP), which answers what the go-sdk would not by the letter
// of the specification (unknown methods, missing sessions, priming events).
//
// As a client, StartUpstreams turns the configured mcp_servers into tool
// sources (upstream.go: connection, states and reconnection; dial.go: the
// stdio, streamable-HTTP and HTTP+SSE transports with headers and OAuth;
// tools.go: names, definitions, resources and prompts as tools; peer.go:
// sampling and elicitation forwarded to the call's MCP client). Each
// upstream tool joins its scope as "<server>.<tool>" through a raw
// registration that enforces its input schema, so programs call it through
// the SDK like any other tool and every call passes the pipeline.
//
// content.go holds the mapping rules between the two worlds: schemas made
// acceptable to strict clients, results to MCP content and structured
// content, and upstream results to codemode values.
package mcp
