package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"

	"github.com/codemode/codemode/config"
	httpapi "github.com/codemode/codemode/http"
	"github.com/codemode/codemode/internal/version"
	"github.com/codemode/codemode/mcp"
	"github.com/codemode/codemode/playground"
)

// cmdServe runs the HTTP service until ctx ends (SIGINT or SIGTERM), then
// shuts down gracefully and closes the store. Flags override the
// configuration file; a bad flag or configuration is one line and exit 2.
func cmdServe(ctx context.Context, args []string, _ io.Reader, _, stderr io.Writer) error {
	def := config.Default()
	fs := newFlags("serve", stderr)
	addr := fs.String("addr", "", "listen address HOST:PORT (default: listen from the config file, else "+def.Listen+")")
	configFile := fs.String("config", "", "configuration file (YAML)")
	storeURL := fs.String("store", "", "session store: sqlite://FILE, postgres://… or memory:// (default: store from the config file, else "+def.Store+")")
	mode := fs.String("mode", "", "the default scope's mode: native, code or both (default: mode from the config file, else "+def.Mode+")")
	noUpstreams := fs.Bool("no-upstreams", false, "do not start the configured mcp_servers")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("unexpected argument %q (serve takes only flags)", pos[0])
	}
	cfg, err := config.Load(*configFile)
	if err != nil {
		return usageError{err.Error()}
	}
	if *addr != "" {
		if _, _, err := net.SplitHostPort(*addr); err != nil {
			return usagef("--addr: want HOST:PORT, got %q", *addr)
		}
		cfg.Listen = *addr
	}
	if *mode != "" {
		if *mode != "native" && *mode != "code" && *mode != "both" {
			return usagef("--mode: want native, code or both, got %q", *mode)
		}
		cfg.Mode = *mode
	}
	if *storeURL != "" {
		cfg.Store = *storeURL
	}
	if err := cfg.Validate(); err != nil {
		return usageError{err.Error()}
	}
	loopbackOnly, err := httpapi.CheckListen(cfg.Listen, cfg)
	if err != nil {
		return usageError{err.Error()}
	}

	log := newLogger(stderr)
	a, err := startApp(ctx, cfg, log)
	if err != nil {
		return err
	}
	closeApp := func() error {
		if err := a.Close(); err != nil {
			return fmt.Errorf("close the store: %w", err)
		}
		return nil
	}
	// Upstreams connect in the background: the service is up at once, and
	// GET /v1/upstreams says how each is doing.
	ups, err := startUpstreams(ctx, a, log, *noUpstreams)
	if err != nil {
		closeApp()
		return err
	}
	mh := mcp.Handler(a, mcp.HandlerOptions{Logger: log, Version: version.String(), Upstreams: ups,
		ScopeAllowed: func(r *http.Request, s string) bool { return httpapi.ScopeAllowed(r.Context(), s) }})
	// shutdown stops the MCP sessions and upstreams before the store closes.
	shutdown := func() error {
		mh.Close()
		ups.Close()
		return closeApp()
	}
	hopts := httpapi.Options{Logger: log, MCP: mh, Playground: playground.Handler()}
	if ups != nil {
		hopts.Upstreams = ups
	}
	srv, err := httpapi.New(a, hopts)
	if err != nil {
		shutdown()
		return usageError{err.Error()}
	}
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		shutdown()
		return fmt.Errorf("listen: %w", err)
	}
	log.Info("listening", "addr", ln.Addr().String(), "store", redactURL(cfg.Store), "mode", cfg.Mode, "api_keys", len(cfg.APIKeys))
	switch {
	case loopbackOnly:
		log.Info("no api_keys configured: listening on loopback only")
	case len(cfg.APIKeys) == 0:
		log.Warn("no api_keys configured and server.allow_non_loopback is set: the API is open to anyone who can connect")
	}
	serveErr := srv.Serve(ctx, ln)
	closeErr := shutdown()
	if serveErr != nil {
		return serveErr
	}
	return closeErr
}

// redactURL hides a password in a store URL for the log.
func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "(unparsable store URL)"
	}
	return u.Redacted()
}
