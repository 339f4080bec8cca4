// Command codemode runs Code Mode programs against a scoped tool registry:
// as an HTTP service (serve), an MCP server (mcp), or one program at a time
// (run). See README.md.
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

type command struct {
	name, summary string // a command without a summary is not listed in the usage
	run           func(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error
}

func commands() []command {
	return []command{
		{"serve", "run the HTTP service (and /mcp)", cmdServe},
		{"run", "run one program in-process", cmdRun},
		{"sdk", "print the generated SDK for a scope", cmdSDK},
		{"tools", "list the tools a scope resolves to", cmdTools},
		{"mcp", "serve MCP on stdio", cmdMCP},
		{"replay", "print a session's timeline from the log", cmdReplay},
		{"version", "print version and build info", cmdVersion},
		{"worker", "", cmdWorker}, // a sandbox worker process, started by the pool
	}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		printUsage(stderr)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	for _, c := range commands() {
		if c.name != args[0] {
			continue
		}
		err := c.run(ctx, args[1:], stdin, stdout, stderr)
		var ue usageError
		var ee exitError
		switch {
		case err == nil:
			return 0
		case errors.Is(err, flag.ErrHelp):
			return 0
		case errors.As(err, &ue):
			fmt.Fprintf(stderr, "codemode %s: %s\n", c.name, ue.msg)
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
	fmt.Fprintln(w, "usage: codemode <command> [flags]")
	fmt.Fprintln(w)
	for _, c := range commands() {
		if c.summary != "" {
			fmt.Fprintf(w, "  %-8s %s\n", c.name, c.summary)
		}
	}
	fmt.Fprintln(w, "\nRun 'codemode <command> -h' for a command's flags.")
}

// newFlags returns a flag set whose errors become usage errors.
func newFlags(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("codemode "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

// parse parses flags, allowing positional arguments before flags too.
func parse(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, usageError{err.Error()}
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

func newLogger(w io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelInfo}))
}

// startApp assembles the service; a configuration it rejects (such as a
// restriction naming an unknown tool) is a usage error, anything else a
// start-up failure.
func startApp(ctx context.Context, cfg config.Config, log *slog.Logger) (*app.App, error) {
	a, err := app.New(ctx, cfg, app.Options{Logger: log})
	if err != nil {
		if strings.HasPrefix(err.Error(), "config: ") {
			return nil, usageError{err.Error()}
		}
		return nil, fmt.Errorf("start: %w", err)
	}
	return a, nil
}
