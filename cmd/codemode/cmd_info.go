package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"

	"github.com/codemode/codemode/app"
	"github.com/codemode/codemode/bridge"
	"github.com/codemode/codemode/config"
	"github.com/codemode/codemode/internal/version"
	"github.com/codemode/codemode/registry"
	"github.com/codemode/codemode/sdkgen"
	"github.com/codemode/codemode/session"
)

func cmdVersion(_ context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) error {
	fs := newFlags("version", stderr)
	if _, err := parse(fs, args); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "codemode %s\n", version.String())
	if bi, ok := debug.ReadBuildInfo(); ok {
		fmt.Fprintf(stdout, "go: %s\n", bi.GoVersion)
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" || s.Key == "vcs.time" || s.Key == "vcs.modified" {
				fmt.Fprintf(stdout, "%s: %s\n", s.Key, s.Value)
			}
		}
		for _, d := range bi.Deps {
			if strings.Contains(d.Path, "goja") {
				fmt.Fprintf(stdout, "%s %s\n", d.Path, d.Version)
			}
		}
	}
	return nil
}

// scopeView loads the configuration, starts its mcp_servers (unless
// noUpstreams) and waits for their first attempt, and resolves a scope.
func scopeView(ctx context.Context, com *common, scope string, noUpstreams bool, stderr io.Writer) (*app.App, *registry.View, func(), error) {
	cfg, err := com.load(nil)
	if err != nil {
		return nil, nil, nil, err
	}
	a, err := loadApp(ctx, cfg, "", stderr)
	if err != nil {
		return nil, nil, nil, err
	}
	if !a.Registry.HasScope(scope) {
		a.Close()
		return nil, nil, nil, usagef("unknown scope %q", scope)
	}
	ups, err := startUpstreams(ctx, a, a.Logger, noUpstreams)
	if err != nil {
		a.Close()
		return nil, nil, nil, err
	}
	settleUpstreams(ctx, ups, a.Logger)
	done := func() {
		ups.Close()
		a.Close()
	}
	v, err := a.Registry.View(scope)
	if err != nil {
		done()
		return nil, nil, nil, usagef("unknown scope %q", scope)
	}
	return a, v, done, nil
}

func cmdSDK(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) error {
	fs := newFlags("sdk", stderr)
	scope := fs.String("scope", config.DefaultScope, "the scope")
	format := fs.String("format", "ts", "ts (TypeScript declarations), js (the same as JSDoc, for JavaScript readers) or prompt (model instructions)")
	com := addCommon(fs)
	noUpstreams := addNoUpstreams(fs, " (their tools are left out)")
	if _, err := parse(fs, args); err != nil {
		return err
	}
	switch *format {
	case "ts", "js", "prompt":
	default:
		return usagef("--format: want ts, js or prompt, got %q", *format)
	}
	a, v, done, err := scopeView(ctx, com, *scope, *noUpstreams, stderr)
	if err != nil {
		return err
	}
	defer done()
	var text []byte
	switch *format {
	case "ts":
		text = sdkgen.TypeScript(bridge.SDK(v))
	case "js":
		text = sdkgen.JavaScript(bridge.SDK(v))
	default:
		text = a.Bridge.Prompt(v)
	}
	printWithheld(stderr, v) // beside the SDK, not in it
	_, err = stdout.Write(text)
	return err
}

func cmdTools(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) error {
	fs := newFlags("tools", stderr)
	scope := fs.String("scope", config.DefaultScope, "the scope")
	asJSON := fs.Bool("json", false, "print the model-facing schemas as JSON")
	com := addCommon(fs)
	noUpstreams := addNoUpstreams(fs, " (their tools are left out)")
	if _, err := parse(fs, args); err != nil {
		return err
	}
	_, v, done, err := scopeView(ctx, com, *scope, *noUpstreams, stderr)
	if err != nil {
		return err
	}
	defer done()
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		out := map[string]any{"scope": *scope, "mode": v.Mode(), "tools": v.Schemas()}
		if w := v.Withheld(); len(w) > 0 {
			out["withheld"] = w
		}
		return enc.Encode(out)
	}
	fmt.Fprintf(stdout, "scope %s (mode %s)\n", *scope, v.Mode())
	for _, t := range v.ModelTools() {
		fmt.Fprintf(stdout, "  %-14s %s\n", t.Name(), firstLine(t.Description()))
	}
	if v.Mode() == registry.ModeCode {
		fmt.Fprintln(stdout, "reachable from run_code programs:")
		for _, t := range v.SDKTools() {
			fmt.Fprintf(stdout, "  %-14s %s\n", t.Name(), firstLine(t.Description()))
		}
	}
	printWithheld(stdout, v)
	return nil
}

// printWithheld lists the tools the scope leaves out of its lists and SDK, and why.
func printWithheld(w io.Writer, v *registry.View) {
	held := v.Withheld()
	if len(held) == 0 {
		return
	}
	fmt.Fprintln(w, "withheld (every call would be refused):")
	for _, h := range held {
		fmt.Fprintf(w, "  %-14s %s\n", h.Name, h.Reason)
	}
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// cmdReplay prints a session from the log of --store, else the configured
// store (--config, CODEMODE_STORE), else the default one. It only reads: a
// SQLite file that does not exist is an error, never a new empty database.
// With --json it prints the events as JSON Lines, one event object per
// line ({"seq", "type", "time", and the event's members}, as GET
// /v1/sessions/{id}/events gives them), for jq and scripts.
func cmdReplay(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) error {
	fs := newFlags("replay", stderr)
	com := addCommon(fs)
	com.addStore(fs, "session store URL (default: store, else "+config.Default().Store+")")
	asJSON := fs.Bool("json", false, "print the events as JSON Lines: one JSON object per event")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("want one SESSION id")
	}
	cfg, err := com.load(nil)
	if err != nil {
		return err
	}
	newLogger(stderr, cfg.Log)
	if p, ok := config.SQLitePath(cfg.Store); ok {
		if _, err := os.Stat(p); err != nil {
			return fmt.Errorf("no log at %s (set --config or --store, or the store key or CODEMODE_STORE, to the store serve or mcp wrote)", p)
		}
	}
	app.RegisterStores()
	st, err := session.Open(ctx, cfg.Store, session.Options{Durability: session.Durability(cfg.Durability)})
	if err != nil {
		return &app.StoreError{Store: app.RedactURL(cfg.Store), Err: err}
	}
	defer st.Close()
	if _, err := st.GetSession(ctx, pos[0]); err != nil {
		return fmt.Errorf("session %s in %s: %w", pos[0], app.RedactURL(cfg.Store), err)
	}
	if *asJSON {
		return writeJSONLines(ctx, stdout, st, pos[0])
	}
	tw := session.NewTimelineWriter(stdout)
	var werr error
	err = session.Pages(ctx, st, pos[0], 0, replayPage, replayPageBytes, func(events []session.Event) bool {
		werr = tw.Add(events)
		return werr == nil
	})
	return errors.Join(err, werr, tw.Close())
}

// A replay reads the log in pages of at most replayPage events and, from a
// store that bounds its reads, replayPageBytes of event data.
const (
	replayPage      = 4096
	replayPageBytes = 4 << 20
)

// writeJSONLines prints a session's events a page at a time.
func writeJSONLines(ctx context.Context, w io.Writer, st session.Store, id string) error {
	enc := json.NewEncoder(w)
	var werr error
	err := session.Pages(ctx, st, id, 0, replayPage, replayPageBytes, func(events []session.Event) bool {
		for _, e := range events {
			if werr = enc.Encode(e); werr != nil {
				return false
			}
		}
		return true
	})
	return errors.Join(err, werr)
}
