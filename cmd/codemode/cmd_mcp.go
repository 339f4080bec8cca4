package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/codemode/codemode/app"
	"github.com/codemode/codemode/config"
	"github.com/codemode/codemode/httpsource"
	"github.com/codemode/codemode/internal/gcfloor"
	"github.com/codemode/codemode/internal/version"
	"github.com/codemode/codemode/mcp"
)

// upstreams are the tool sources a command starts from the configuration:
// the mcp_servers (connecting in the background) and the openapi_sources
// (loaded before startUpstreams returns).
type upstreams struct {
	mcp  *mcp.Upstreams      // nil when none run
	apis *httpsource.Sources // nil when none run
}

// mcpUpstreams is the MCP upstreams, nil when none run.
func (u *upstreams) mcpUpstreams() *mcp.Upstreams {
	if u == nil {
		return nil
	}
	return u.mcp
}

// Close stops both; a nil *upstreams is a no-op.
func (u *upstreams) Close() {
	if u == nil {
		return
	}
	u.mcp.Close()
	u.apis.Close()
}

// startUpstreams starts the configured mcp_servers in the background and
// loads the openapi_sources, or, with skip (--no-upstreams), starts none and
// says so in the log when some are configured. A configuration it cannot
// start (an unset ${VAR}, an OpenAPI document that is not one) is a usage
// error.
func startUpstreams(ctx context.Context, a *app.App, log *slog.Logger, skip bool) (*upstreams, error) {
	servers, apis := a.Config.MCPServers, a.Config.OpenAPISources
	if skip {
		var what []string
		if len(servers) > 0 {
			what = append(what, fmt.Sprintf("%d mcp_servers", len(servers)))
		}
		if len(apis) > 0 {
			what = append(what, fmt.Sprintf("%d openapi_sources", len(apis)))
		}
		if len(what) > 0 {
			log.Warn(fmt.Sprintf("--no-upstreams: the %s are not started, and their tools are missing", strings.Join(what, " and ")))
		}
		return nil, nil
	}
	u := &upstreams{}
	var err error
	if u.mcp, err = mcp.StartUpstreams(ctx, a, servers, mcp.UpstreamOptions{Logger: log, Version: version.String()}); err != nil {
		return nil, usagef("config: %v", err)
	}
	if len(apis) > 0 {
		if u.apis, err = httpsource.Start(ctx, a.Registry, apis, httpsource.Options{Logger: log, UserAgent: "codemode/" + version.String()}); err != nil {
			u.mcp.Close()
			return nil, usagef("config: %v", err)
		}
	}
	return u, nil
}

// settleUpstreams waits for every upstream's first connection attempt
// (each bounded by its connect_timeout) and logs which ones are not there,
// so that a command that shows or runs a scope once sees their tools, or
// says why not. (Tools an upstream did not register are logged as it lists
// them.)
func settleUpstreams(ctx context.Context, u *upstreams, log *slog.Logger) {
	if u == nil || u.mcp == nil {
		return
	}
	ups := u.mcp
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
	com.addStore(fs, "session store: sqlite://FILE, postgres://… or memory:// (default: store, else "+def.Store+")")
	noUpstreams := addNoUpstreams(fs, "")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("unexpected argument %q (mcp takes only flags)", pos[0])
	}
	cfg, err := com.load(nil)
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
	if err := mcp.ServeStdio(ctx, a, *scope, stdin, stdout, mcp.Options{Logger: log, Version: version.String(), Upstreams: ups.mcpUpstreams()}); err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	return nil
}
