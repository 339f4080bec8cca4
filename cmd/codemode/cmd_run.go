package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/codemode/codemode/app"
	"github.com/codemode/codemode/config"
	"github.com/codemode/codemode/session"
)

// loadApp builds an in-process app from cfg, with an in-memory store
// unless storeURL is set.
func loadApp(ctx context.Context, cfg config.Config, storeURL string, stderr io.Writer) (*app.App, error) {
	cfg.Isolation = "inproc"
	opts := app.Options{Logger: newLogger(stderr, cfg.Log)}
	if storeURL == "" {
		opts.Store = session.NewMemory()
	} else {
		cfg.Store = storeURL
	}
	return startApp(ctx, cfg, opts)
}

// cmdRun runs one program. An ask of a policy is answered by --deny, then
// --approve, then the person at the terminal (standard input, when it is
// one and does not carry the program, else the controlling terminal when
// stderr is one); with none of them it is denied at once, saying how to
// answer.
func cmdRun(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlags("run", stderr)
	scope := fs.String("scope", config.DefaultScope, "the scope whose tools the program can call")
	com := addCommon(fs)
	asJSON := fs.Bool("json", false, "print the full run result as JSON")
	timeout := fs.Duration("timeout", 0, "wall-clock limit for the run (default: limits.timeout)")
	noUpstreams := addNoUpstreams(fs, "")
	var ap approvals
	fs.Var(&ap.approve, "approve", "approve the asks of tools matching this glob (repeatable; '*' approves every ask)")
	fs.Var(&ap.deny, "deny", "deny the asks of tools matching this glob (repeatable; wins over --approve)")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("want one program: a FILE or - for standard input")
	}
	var code []byte
	if pos[0] == "-" {
		code, err = io.ReadAll(io.LimitReader(stdin, 16<<20))
	} else {
		code, err = os.ReadFile(pos[0])
	}
	if err != nil {
		return usagef("read program: %v", err)
	}
	cfg, err := com.load(nil)
	if err != nil {
		return err
	}
	a, err := loadApp(ctx, cfg, "", stderr)
	if err != nil {
		return err
	}
	defer a.Close()
	if !a.Registry.HasScope(*scope) {
		return usagef("unknown scope %q", *scope)
	}
	ups, err := startUpstreams(ctx, a, a.Logger, *noUpstreams)
	if err != nil {
		return err
	}
	defer ups.Close()
	settleUpstreams(ctx, ups, a.Logger)
	s, err := a.NewSession(ctx, *scope)
	if err != nil {
		return err
	}
	ap.term, ap.stderr = findTerminal(stdin, stderr, pos[0] == "-"), stderr
	actx, stopAnswering := context.WithCancel(ctx)
	answered := make(chan struct{})
	go func() {
		defer close(answered)
		ap.answer(actx, a, s.ID)
	}()
	res, err := a.Run(ctx, app.RunRequest{Code: string(code), Description: "codemode run " + pos[0], SessionID: s.ID, Timeout: *timeout})
	stopAnswering()
	<-answered
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(res); err != nil {
			return err
		}
	} else {
		printRun(stdout, stderr, res)
	}
	if res.IsError {
		return exitError(1)
	}
	return nil
}

// printRun prints logs, then the result (strings raw, other JSON indented);
// a failure goes to stderr with its logs.
func printRun(stdout, stderr io.Writer, res app.RunResult) {
	if res.IsError {
		for _, c := range res.Content {
			if c.Type == "text" {
				fmt.Fprintln(stderr, c.Text)
			}
		}
		return
	}
	var v struct {
		Logs   []string        `json:"logs"`
		Result json.RawMessage `json:"result"`
	}
	_ = json.Unmarshal(res.Value, &v)
	for _, l := range v.Logs {
		fmt.Fprintln(stdout, l)
	}
	if v.Result == nil {
		return
	}
	var s string
	if json.Unmarshal(v.Result, &s) == nil {
		fmt.Fprintln(stdout, s)
		return
	}
	var buf bytes.Buffer
	if json.Indent(&buf, v.Result, "", "  ") != nil {
		buf.Reset()
		buf.Write(v.Result)
	}
	fmt.Fprintln(stdout, buf.String())
}
