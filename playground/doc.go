// Package playground serves the web page at GET / of the HTTP service (it is
// httpapi.Options.Playground): tool authors preview the SDK a scope's model
// sees, with its size per tool in bytes and in tokens (counted by the
// server, GET /v1/sdk/tokens) and its changes over time with their token
// delta (a prompt that is a catalog says so); anyone can find tools by what
// they do (GET /v1/tools/search) and insert a call of one, or its
// tools.$describe, at the editor's cursor, write a program (the editor
// completes the SDK's tool names and argument keys), run it, watch its nested calls (time waiting for
// an approval drawn apart from tool time), attach to any session by id or
// from GET /v1/sessions, follow its events and messages live and answer its
// approvals. Scope, session and program live in the URL's fragment, so a
// reload keeps them. The page talks only to the public /v1 API, from the
// browser, with the API key the user types (kept in the tab, never on the
// server).
//
// The page is plain HTML, CSS and JavaScript under static/, embedded in the
// binary; there is no build step. Handler assembles it once into a single
// document (styles and scripts inline, the example programs of
// examples/scripts as JSON data) served under a Content-Security-Policy that
// admits exactly those inline scripts and styles and lets the page reach
// nothing but its own origin.
package playground
