// Package config reads codemode's configuration: a YAML file over the
// defaults, then CODEMODE_* environment variables over the file; each
// command's flags override both (flags > environment > file > defaults).
// Every key is optional, unknown keys are rejected, and every error is one
// line naming the key or variable (an *Error; commands exit with status 2).
// Default is what `codemode serve` runs with no file at all.
//
// Every key is settable from the environment as CODEMODE_ plus its path
// upper-cased with "_" for "." (limits.timeout is CODEMODE_LIMITS_TIMEOUT);
// lists and maps take a YAML value (CODEMODE_SCOPES='{ro: {parent: default}}'),
// lists of strings also a comma-separated one. docs/config.md has the same
// list as a table with the variables.
//
// The keys, with their defaults:
//
//	listen: 127.0.0.1:8080         HOST:PORT of serve
//	store: sqlite://$XDG_DATA_HOME/codemode/codemode.db
//	                               the session log: sqlite://FILE, postgres://… or memory://
//	                               (without XDG_DATA_HOME: ~/.local/share/codemode/codemode.db)
//	durability: full               full (flush per commit) or process (survives a crash of the process)
//	mode: both                     the default scope's mode: native, code or both
//	isolation: process             programs in worker processes, or inproc
//	demo: true                     serve the demo tools in the default scope
//	demo_state:                    the demo tools' per-session state, in memory
//	  max_sessions: 1000           sessions holding state at once
//	  max_total_bytes: 256MiB      all sessions together
//	  max_session_bytes: 8MiB      one session
//	  max_entries: 1000            keys, and files, per session
//	  max_value_bytes: 1MiB        one value or file
//	  idle_ttl: 24h                state unused this long is released (0s: never)
//	limits:                        one run
//	  timeout: 30s                 wall clock
//	  max_sub_calls: 1000          tool calls of a program
//	  max_sub_call_args_bytes: 64MiB  their arguments together
//	  max_parallel_sub_calls: 10   tool calls in flight at once
//	  max_log_bytes: 1MiB          console output
//	  max_result_bytes: 4MiB       the program's value
//	  max_content_bytes: 32KiB     what a model sees of the run (at least 1KiB)
//	  max_sub_call_bytes: 4MiB     the value one tool call hands the program
//	  memory: 512MiB               a run's memory: built-in caps, heap watchdog, a worker's limits (0: 512MiB)
//	  max_tools_per_scope: 10000   tools registered in one scope; past it a tool is refused and reported
//	sdk:                           what a model reads of the tools
//	  prompt_budget: 2000          run_code's description in o200k tokens: the whole SDK while it fits, else a catalog (-1: no bound)
//	server:                        the HTTP service
//	  max_body_bytes: 1MiB         request body
//	  max_inflight_runs: 16        runs at once
//	  max_queued_runs: 64          runs waiting for a slot; beyond, 503
//	  rate_limit: 0                requests per key or address per rate_window (0: none)
//	  rate_window: 1m
//	  request_timeout: 5m          one request
//	  shutdown_grace: 30s          how long a shutdown waits for runs in flight
//	  allow_non_loopback: false    listen beyond loopback without api_keys
//	  memory_budget: 0             memory of admitted runs and bodies (0: 3/4 of the machine's)
//	  allowed_origins: []          other origins whose pages may send writes
//	  allowed_hosts: []            Host names beyond loopback ones (a proxy's name)
//	  max_streams: 256             open event streams in all, shared fairly among API keys
//	  max_streams_per_session: 8   open event streams of one session
//	  stream_write_timeout: 10s    one write to a stream; a slower reader is dropped
//	  write_timeout: 30s           one write (64 KiB at most) of any other reply; a slower reader is cut off
//	  max_mcp_sessions: 1024       MCP sessions open at once over /mcp, in all scopes, shared
//	                               fairly among API keys
//	approvals:
//	  hold: 30s                    a program waiting longer on an ask suspends (HTTP), to resume
//	                               by replay once it is answered
//	  timeout: 5m                  an ask nobody answers is denied
//	scopes: {}                     NAME: {parent, mode, restrict: {allow | deny: [globs]}}
//	policies: []                   {scope, tool (glob), decision: allow|deny|ask, reason}
//	guards: []                     {scope, tool (glob), reason}: an owner's veto
//	mcp_servers: []                {name, command | url, scope, env, timeout, connect_timeout,
//	                                transport, headers, auth: {bearer | client_id, client_secret,
//	                                token_url, scopes}, liveness, max_message_bytes (16MiB),
//	                                max_tools (5000), max_list_pages (100), max_list_bytes (64MiB)}
//	openapi_sources: []            {name, file | url, base_url, scope, headers, auth: {bearer |
//	                                api_key, in, name | client_id, client_secret, token_url, scopes},
//	                                include, exclude, timeout (30s), max_response_bytes (4MiB),
//	                                max_concurrency (8), retries (2), max_document_bytes (64MiB),
//	                                max_operations (5000)}
//	api_keys: []                   {sha256, scopes}
//	log:
//	  format: text                 text or json (standard error)
//	  level: info                  debug, info, warn or error
//	sessions:
//	  retention:                   applied by serve in the background
//	    max_age: 0s                delete sessions not updated for this long (0s: no limit)
//	    max_count: 0               keep at most this many, the most recent (0: no limit)
//	    interval: 10m              how often
//
// Integer keys take integers only (max_sub_calls: 1.5 is an error); sizes
// take 4096, 512KiB, 1MiB or 4MB; durations 30s or 5m. A policy or guard
// glob must match a tool of its scope; that is checked when the tools are
// known, by package app.
package config
