// Command codemode runs Code Mode programs against a scoped tool registry:
// as an HTTP service (serve), an MCP server (mcp), or one program at a time
// (run). See README.md.
//
// Exit status: 0 on success, 1 when the work failed (a run that failed, a
// store that cannot be opened, a session not in the log), 2 for a bad
// command line or a configuration error, in every command.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"sync/atomic"
	"syscall"

	"github.com/codemode/codemode/app"
	"github.com/codemode/codemode/config"
)

// usageError is a bad command line: one clear line and exit 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }

// exitError carries an exit status without more output.
type exitError int

func (e exitError) Error() string { return fmt.Sprintf("exit %d", int(e)) }

// helpRequest is -h or --help: the command's usage, on standard output.
type helpRequest struct{ fs *flag.FlagSet }

func (helpRequest) Error() string { return "help requested" }

type command struct {
	name, summary string // a command without a summary is not listed in the usage
	args          string // what follows the flags in the usage line
	run           func(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error
}

func commands() []command {
	return []command{
		{"serve", "run the HTTP service (and /mcp)", "", cmdServe},
		{"run", "run one program in-process", "FILE|-", cmdRun},
		{"sdk", "print the generated SDK for a scope", "", cmdSDK},
		{"tools", "list the tools a scope resolves to", "", cmdTools},
		{"mcp", "serve MCP on stdio", "", cmdMCP},
		{"replay", "print a session's timeline from the log", "SESSION", cmdReplay},
		{"version", "print version and build info", "", cmdVersion},
		{"worker", "", "", cmdWorker}, // a sandbox worker process, started by the pool
	}
}

func main() { os.Exit(runMain(os.Args[1:])) }

// runMain runs a command with the process's signals: the first SIGINT or
// SIGTERM ends the command's context (serve drains, mcp closes); a second
// one exits at once with status 1.
func runMain(args []string) int {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	go func() {
		s, ok := <-sigs
		if !ok {
			return
		}
		processLog().Info("signal received: stopping (a second signal exits at once)", "signal", s.String())
		cancel()
		s = <-sigs
		processLog().Error("second signal: exiting now, without waiting", "signal", s.String())
		os.Exit(1)
	}()
	return run(ctx, args, os.Stdin, os.Stdout, os.Stderr)
}

// logger is the process's logger once a command has made it; the signal
// handler logs through it.
var logger atomic.Pointer[slog.Logger]

func processLog() *slog.Logger {
	if l := logger.Load(); l != nil {
		return l
	}
	return slog.New(slog.NewTextHandler(os.Stderr, nil))
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		printUsage(stderr)
		return 2
	}
	switch args[0] {
	case "-h", "--help", "help":
		if len(args) > 1 && args[0] == "help" {
			// codemode help CMD is codemode CMD -h.
			return run(ctx, []string{args[1], "-h"}, stdin, stdout, stderr)
		}
		printUsage(stdout)
		return 0
	case "-v", "--version":
		args = []string{"version"}
	}
	for _, c := range commands() {
		if c.name != args[0] {
			continue
		}
		err := c.run(ctx, args[1:], stdin, stdout, stderr)
		var ue usageError
		var ee exitError
		var ce *config.Error
		var help helpRequest
		switch {
		case err == nil:
			return 0
		case errors.As(err, &help):
			printCommandUsage(stdout, c, help.fs)
			return 0
		case errors.As(err, &ue):
			fmt.Fprintf(stderr, "codemode %s: %s\n", c.name, ue.msg)
			return 2
		case errors.As(err, &ce):
			fmt.Fprintf(stderr, "codemode %s: %v\n", c.name, ce)
			return 2
		case errors.As(err, &ee):
			return int(ee)
		default:
			fmt.Fprintf(stderr, "codemode %s: %v\n", c.name, err)
			return 1
		}
	}
	fmt.Fprintf(stderr, "codemode: unknown command %q (try codemode help)\n", args[0])
	return 2
}

func printUsage(w io.Writer) {
	fmt.Fprint(w, "usage: codemode <command> [flags]\n\n")
	for _, c := range commands() {
		if c.summary != "" {
			fmt.Fprintf(w, "  %-8s %s\n", c.name, c.summary)
		}
	}
	fmt.Fprintln(w, "\nRun 'codemode help <command>' for a command's flags, codemode --version for the version.")
	fmt.Fprintln(w, "Configuration: --config FILE and CODEMODE_* variables (docs/config.md).")
}

func printCommandUsage(w io.Writer, c command, fs *flag.FlagSet) {
	line := "usage: codemode " + c.name + " [flags]"
	if c.args != "" {
		line += " " + c.args
	}
	fmt.Fprintln(w, line)
	if c.summary != "" {
		fmt.Fprintf(w, "\n%s.\n", strings.ToUpper(c.summary[:1])+c.summary[1:])
	}
	if fs == nil {
		return
	}
	fmt.Fprintln(w, "\nflags:")
	fs.SetOutput(w)
	fs.PrintDefaults()
}

// newFlags returns a flag set that prints nothing itself: parse turns its
// errors into usage errors and -h into a helpRequest.
func newFlags(name string, _ io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("codemode "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

// parse parses flags, allowing positional arguments before flags too.
func parse(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, helpRequest{fs}
			}
			name := strings.TrimPrefix(fs.Name(), "codemode ")
			return nil, usagef("%v (see codemode help %s)", err, name)
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

// common are the flags of every command that reads the configuration.
type common struct {
	config, logFormat, logLevel *string
	store                       *string // --store, of the commands that addStore
}

func addCommon(fs *flag.FlagSet) *common {
	return &common{
		config:    fs.String("config", "", "configuration file (YAML); CODEMODE_* variables override it"),
		logFormat: fs.String("log-format", "", "log format on standard error: text or json (default: log.format, text)"),
		logLevel:  fs.String("log-level", "", "lowest level logged: debug, info, warn or error (default: log.level, info)"),
	}
}

// addStore adds --store, which load applies over the configured store.
func (c *common) addStore(fs *flag.FlagSet, usage string) {
	c.store = fs.String("store", "", usage)
}

// addNoUpstreams adds --no-upstreams; more says what else it means.
func addNoUpstreams(fs *flag.FlagSet, more string) *bool {
	return fs.Bool("no-upstreams", false, "do not start the configured mcp_servers and openapi_sources"+more)
}

// load reads the configuration (defaults, file, environment) and applies
// the log flags and --store; apply, when set, applies the command's other flags. The
// result is validated; an error is a *config.Error or a usage error.
func (c *common) load(apply func(*config.Config) error) (config.Config, error) {
	cfg, err := config.Load(*c.config)
	if err != nil {
		return config.Config{}, err
	}
	if *c.logFormat != "" {
		cfg.Log.Format = *c.logFormat
	}
	if *c.logLevel != "" {
		cfg.Log.Level = *c.logLevel
	}
	if c.store != nil && *c.store != "" {
		cfg.Store = *c.store
	}
	if apply != nil {
		if err := apply(&cfg); err != nil {
			return config.Config{}, err
		}
	}
	if err := cfg.Validate(); err != nil {
		return config.Config{}, err
	}
	return cfg, nil
}

// newLogger makes the command's logger on w as the configuration's log
// section says, and makes it the process's.
func newLogger(w io.Writer, lc config.Log) *slog.Logger {
	opts := &slog.HandlerOptions{Level: slog.LevelInfo}
	switch lc.Level {
	case "debug":
		opts.Level = slog.LevelDebug
	case "warn":
		opts.Level = slog.LevelWarn
	case "error":
		opts.Level = slog.LevelError
	}
	var h slog.Handler
	if lc.Format == "json" {
		h = slog.NewJSONHandler(w, opts)
	} else {
		h = slog.NewTextHandler(w, opts)
	}
	l := slog.New(h)
	logger.Store(l)
	return l
}

// startApp assembles the service; a configuration it rejects (such as a
// policy glob that matches no tool) is a *config.Error, a store that cannot
// be opened an *app.StoreError (one line naming it and the fix).
func startApp(ctx context.Context, cfg config.Config, opts app.Options) (*app.App, error) {
	a, err := app.New(ctx, cfg, opts)
	if err != nil {
		var ce *config.Error
		var se *app.StoreError
		if errors.As(err, &ce) || errors.As(err, &se) {
			return nil, err
		}
		return nil, fmt.Errorf("start: %w", err)
	}
	return a, nil
}
