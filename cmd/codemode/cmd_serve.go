package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/codemode/codemode/app"
	"github.com/codemode/codemode/config"
	httpapi "github.com/codemode/codemode/http"
	"github.com/codemode/codemode/internal/gcfloor"
	"github.com/codemode/codemode/internal/version"
	"github.com/codemode/codemode/mcp"
	"github.com/codemode/codemode/playground"
	"github.com/codemode/codemode/session"
)

// cmdServe runs the HTTP service until ctx ends (the first SIGINT or
// SIGTERM), then shuts down gracefully, logging what it waits for, and
// closes the store; a second signal exits at once (see runMain). Flags
// override the environment and the configuration file; a bad flag or
// configuration is one line and exit 2.
func cmdServe(ctx context.Context, args []string, _ io.Reader, _, stderr io.Writer) error {
	cfg, noUpstreams, err := serveConfig(args, stderr)
	if err != nil {
		return err
	}
	loopbackOnly, err := httpapi.CheckListen(cfg.Listen, cfg)
	if err != nil {
		return usageError{err.Error()}
	}

	log := newLogger(stderr, cfg.Log)
	gc := "GOGC=" + os.Getenv("GOGC") // set: the runtime paces collections
	if gcfloor.Start() {
		gc = "floor 64MiB"
	}
	a, err := startApp(ctx, cfg, app.Options{Logger: log})
	if err != nil {
		return err
	}
	srv, shutdown, err := newServer(ctx, a, log, noUpstreams)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		shutdown()
		return fmt.Errorf("listen: %w", err)
	}
	log.Info("listening", "addr", ln.Addr().String(), "store", app.RedactURL(cfg.Store), "mode", cfg.Mode, "api_keys", len(cfg.APIKeys), "gc", gc, "version", version.String())
	switch {
	case loopbackOnly:
		log.Info("no api_keys configured: listening on loopback only")
	case len(cfg.APIKeys) == 0:
		log.Warn("no api_keys configured and server.allow_non_loopback is set: the API is open to anyone who can connect")
	}
	bg, stopBG := context.WithCancel(ctx)
	defer stopBG()
	go pruneSessions(bg, a.Store, cfg.Sessions.Retention, log)
	serveErr := serve(ctx, srv, ln, cfg.Server, log)
	closeErr := shutdown()
	if serveErr != nil {
		return serveErr
	}
	return closeErr
}

// serveConfig reads serve's flags and the configuration they override;
// noUpstreams is --no-upstreams.
func serveConfig(args []string, stderr io.Writer) (_ config.Config, noUpstreams bool, _ error) {
	def := config.Default()
	fs := newFlags("serve", stderr)
	addr := fs.String("addr", "", "listen address HOST:PORT (default: listen, else "+def.Listen+")")
	com := addCommon(fs)
	com.addStore(fs, "session store: sqlite://FILE, postgres://… or memory:// (default: store, else "+def.Store+")")
	mode := fs.String("mode", "", "the default scope's mode: native, code or both (default: mode, else "+def.Mode+")")
	skip := addNoUpstreams(fs, "")
	pos, err := parse(fs, args)
	if err != nil {
		return config.Config{}, false, err
	}
	if len(pos) > 0 {
		return config.Config{}, false, usagef("unexpected argument %q (serve takes only flags)", pos[0])
	}
	cfg, err := com.load(func(cfg *config.Config) error {
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
		return nil
	})
	return cfg, *skip, err
}

// newServer starts the upstreams (in the background: the service is up at
// once, and GET /v1/upstreams says how each is doing) and builds the HTTP
// service with /mcp and the playground. shutdown stops the MCP sessions
// and upstreams, then closes the app; on an error newServer has done it.
func newServer(ctx context.Context, a *app.App, log *slog.Logger, noUpstreams bool) (_ *httpapi.Server, shutdown func() error, _ error) {
	closeApp := func() error {
		if err := a.Close(); err != nil {
			return fmt.Errorf("close the store: %w", err)
		}
		return nil
	}
	ups, err := startUpstreams(ctx, a, log, noUpstreams)
	if err != nil {
		closeApp()
		return nil, nil, err
	}
	mh := mcp.Handler(a, mcp.HandlerOptions{Logger: log, Version: version.String(), Upstreams: ups.mcpUpstreams(),
		ScopeAllowed: func(r *http.Request, s string) bool { return httpapi.ScopeAllowed(r.Context(), s) },
		MaxSessions:  a.Config.Server.MaxMCPSessions})
	shutdown = func() error {
		mh.Close()
		ups.Close()
		return closeApp()
	}
	hopts := httpapi.Options{Logger: log, MCP: mh, Playground: playground.Handler()}
	if ups != nil && ups.mcp != nil {
		hopts.Upstreams = ups.mcp
	}
	if ups != nil && ups.apis != nil {
		hopts.OpenAPISources = ups.apis
	}
	srv, err := httpapi.New(a, hopts)
	if err != nil {
		shutdown()
		return nil, nil, usageError{err.Error()}
	}
	return srv, shutdown, nil
}

// serve serves on ln until ctx ends and the shutdown is done. The shutdown
// line is written whenever a signal stopped the service, even when Serve
// returns at once (nothing in flight): Serve's return does not race it out.
func serve(ctx context.Context, srv *httpapi.Server, ln net.Listener, sc config.Server, log *slog.Logger) error {
	served, logged := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(logged)
		select {
		case <-ctx.Done():
		case <-served:
			if ctx.Err() == nil {
				return
			}
		}
		runs, streams := srv.Pending()
		log.Info("shutdown: waiting for the runs in flight and closing event streams",
			"runs", runs, "streams", streams, "grace", sc.ShutdownGrace.Std().String())
	}()
	err := srv.Serve(ctx, ln)
	close(served)
	<-logged
	return err
}

// pruneSessions applies the retention at once and then every interval
// until ctx ends; with no limit set it does nothing.
func pruneSessions(ctx context.Context, st session.Store, r config.Retention, log *slog.Logger) {
	keep := session.Retention{MaxAge: r.MaxAge.Std(), MaxCount: r.MaxCount}
	if keep.MaxAge <= 0 && keep.MaxCount <= 0 {
		return
	}
	log.Info("session retention", "max_age", keep.MaxAge.String(), "max_count", keep.MaxCount, "interval", r.Interval.Std().String())
	t := time.NewTicker(r.Interval.Std())
	defer t.Stop()
	for {
		n, err := st.Prune(ctx, keep)
		switch {
		case ctx.Err() != nil:
			return
		case err != nil:
			log.Warn("session retention failed", "err", err)
		case n > 0:
			log.Info("session retention: deleted sessions", "sessions", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
