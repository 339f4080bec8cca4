package main

import (
	"context"
	"fmt"
	"io"

	"github.com/codemode/codemode/config"
	"github.com/codemode/codemode/mcp"
)

// cmdMCP serves MCP on standard input and output for one scope, until the
// client closes standard input or ctx ends (SIGINT, SIGTERM); both are a
// clean exit. Standard output carries only the protocol: logs go to
// standard error.
//
// The configured mcp_servers are started first, so their tools are listed
// from the first tools/list. Tool calls are logged like every other step,
// one codemode session per MCP connection, in the store of --store, else
// the configuration file's store, else sqlite://codemode.db in the working
// directory (memory:// keeps nothing); `codemode replay` reads them back.
func cmdMCP(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	def := config.Default()
	fs := newFlags("mcp", stderr)
	configFile := fs.String("config", "", "configuration file (YAML)")
	scope := fs.String("scope", config.DefaultScope, "the scope whose tools are served")
	storeURL := fs.String("store", "", "session store: sqlite://FILE, postgres://… or memory:// (default: store from the config file, else "+def.Store+")")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("unexpected argument %q (mcp takes only flags)", pos[0])
	}
	cfg, err := config.Load(*configFile)
	if err != nil {
		return usageError{err.Error()}
	}
	if *storeURL != "" {
		cfg.Store = *storeURL
		if err := cfg.Validate(); err != nil {
			return usageError{err.Error()}
		}
	}
	if !cfg.HasScope(*scope) {
		return usagef("--scope: unknown scope %q", *scope)
	}

	log := newLogger(stderr)
	a, err := startApp(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer a.Close()
	stop, err := mcp.StartUpstreams(ctx, a, cfg.MCPServers, log)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("start mcp_servers: %w", err)
	}
	defer stop()
	log.Info("serving MCP on stdio", "scope", *scope)
	if err := mcp.ServeStdio(ctx, a, *scope, stdin, stdout, mcp.Options{Logger: log, Version: version}); err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	return nil
}
