package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"

	"github.com/codemode/codemode/app"
	"github.com/codemode/codemode/config"
	"github.com/codemode/codemode/internal/gcfloor"
	"github.com/codemode/codemode/internal/version"
	"github.com/codemode/codemode/mcp"
)

// startUpstreams starts the configured mcp_servers in the background, or,
// with skip (--no-upstreams), starts none and says so in the log when some
// are configured. A configuration it cannot start (an unset ${VAR}) is a
// usage error.
func startUpstreams(ctx context.Context, a *app.App, log *slog.Logger, skip bool) (*mcp.Upstreams, error) {
	servers := a.Config.MCPServers
	if skip {
		if len(servers) > 0 {
			log.Warn(fmt.Sprintf("--no-upstreams: the %d mcp_servers are not started, and their tools are missing", len(servers)))
		}
		return nil, nil
	}
	ups, err := mcp.StartUpstreams(ctx, a, servers, mcp.UpstreamOptions{Logger: log, Version: version.String()})
	if err != nil {
		return nil, usagef("config: %v", err)
	}
	return ups, nil
}

// settleUpstreams waits for every upstream's first connection attempt
// (each bounded by its connect_timeout) and logs which ones are not there,
// so that a command that shows or runs a scope once sees their tools, or
// says why not. (Tools an upstream did not register are logged as it lists
// them.)
func settleUpstreams(ctx context.Context, ups *mcp.Upstreams, log *slog.Logger) {
	if ups == nil {
		return
	}
	if err := ups.Settle(ctx); err != nil {
		return
	}
	for _, st := range ups.States() {
		if st.State != mcp.StateReady {
			log.Warn("upstream MCP server is not ready: its tools are missing", "upstream", st.Name, "state", st.State, "error", st.LastError)
		}
	}
}

// cmdMCP serves MCP on standard input and output for one scope, until the
// client closes standard input or ctx ends (SIGINT, SIGTERM); both are a
// clean exit. Standard output carries only the protocol: logs go to
// standard error.
//
// The configured mcp_servers start in the background; the first tools/list
// waits for each one's first connection attempt (at most its
// connect_timeout), so their tools are listed from the start. With
// --no-upstreams none is started. Tool calls are logged like every other step,
// one codemode session per MCP connection, in the store of --store, else
// the configured store, else codemode.db in the user's data directory
// (memory:// keeps nothing); `codemode replay` reads them back.
func cmdMCP(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	def := config.Default()
	fs := newFlags("mcp", stderr)
	com := addCommon(fs)
	scope := fs.String("scope", config.DefaultScope, "the scope whose tools are served")
	storeURL := fs.String("store", "", "session store: sqlite://FILE, postgres://… or memory:// (default: store, else "+def.Store+")")
	noUpstreams := fs.Bool("no-upstreams", false, "do not start the configured mcp_servers")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("unexpected argument %q (mcp takes only flags)", pos[0])
	}
	cfg, err := com.load(func(cfg *config.Config) error {
		if *storeURL != "" {
			cfg.Store = *storeURL
		}
		return nil
	})
	if err != nil {
		return err
	}
	if !cfg.HasScope(*scope) {
		return usagef("--scope: unknown scope %q", *scope)
	}

	log := newLogger(stderr, cfg.Log)
	gcfloor.Start()
	a, err := startApp(ctx, cfg, app.Options{Logger: log})
	if err != nil {
		return err
	}
	defer a.Close()
	ups, err := startUpstreams(ctx, a, log, *noUpstreams)
	if err != nil {
		return err
	}
	defer ups.Close()
	log.Info("serving MCP on stdio", "scope", *scope, "store", app.RedactURL(cfg.Store))
	if err := mcp.ServeStdio(ctx, a, *scope, stdin, stdout, mcp.Options{Logger: log, Version: version.String(), Upstreams: ups}); err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	return nil
}
