// Package playground serves the web page at GET / of the HTTP service (it is
// httpapi.Options.Playground): tool authors preview the SDK a scope's model
// sees, with its size per tool and its changes over time; anyone can run a
// program, watch its nested calls, follow a session's events live and answer
// its approvals. The page talks only to the public /v1 API, from the browser,
// with the API key the user types (kept in the tab, never on the server).
//
// The page is plain HTML, CSS and JavaScript under static/, embedded in the
// binary; there is no build step. Handler assembles it once into a single
// document (styles and scripts inline, the example programs of
// examples/scripts as JSON data) served under a Content-Security-Policy that
// admits exactly those inline scripts and styles and lets the page reach
// nothing but its own origin.
package playground
