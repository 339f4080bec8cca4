// Package mcp connects codemode to the Model Context Protocol both ways,
// with the official Go SDK (github.com/modelcontextprotocol/go-sdk) as the
// transport only.
//
// As a server (server.go, http.go), codemode offers one scope's model tools
// to an MCP host: run_code only in code mode, the native tools in native
// mode, both in both, with the scope's SDK instructions and TypeScript
// declarations in run_code's description. Every tools/call is a one-call
// step of the agent loop in a codemode session bound to the MCP session, so
// it runs the whole pipeline and is logged like any model call; the
// request's context is the run's, so a client's cancellation stops it.
// Registry changes that alter the list send notifications/tools/list_changed.
// ServeStdio is `codemode mcp`; Handler is the HTTP service's /mcp
// (streamable HTTP).
//
// As a client (client.go), StartUpstreams turns the configured mcp_servers
// into tool sources: each upstream tool joins its scope as "<server>.<tool>"
// through a raw registration, so programs call it through the SDK like any
// other tool and every call passes the pipeline.
//
// content.go holds the mapping rules between the two worlds: schemas made
// acceptable to strict clients, results to MCP content and structured
// content, and upstream results to codemode values.
package mcp
