package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strconv"
	"strings"

	"github.com/codemode/codemode/app"
	"github.com/codemode/codemode/config"
	"github.com/codemode/codemode/session"
	"golang.org/x/term"
)

// globList is a repeatable flag of tool globs.
type globList []string

func (g *globList) String() string { return strings.Join(*g, ",") }

func (g *globList) Set(s string) error {
	if s == "" {
		return errors.New("want a tool name or glob")
	}
	if _, err := path.Match(s, ""); err != nil {
		return fmt.Errorf("bad glob %q: %v", s, err)
	}
	*g = append(*g, s)
	return nil
}

// terminal is where `codemode run` asks a person: a reader of answers and
// a writer of questions. It is nil when nobody is there.
type terminal struct {
	in  *bufio.Reader
	out io.Writer
}

// controllingTTY is the terminal findTerminal asks on when stdin cannot be
// used.
var controllingTTY = "/dev/tty"

// findTerminal returns where a person can answer: stdin when it is a
// terminal and does not carry the program; otherwise,
// as sudo and git do, the process's controlling terminal, when stderr (where
// the question goes) is a terminal too. It returns nil when there is none.
var findTerminal = func(stdin io.Reader, stderr io.Writer, programFromStdin bool) *terminal {
	if f, ok := stdin.(*os.File); ok && !programFromStdin && isTerminal(f) {
		return &terminal{in: bufio.NewReader(f), out: stderr}
	}
	if f, ok := stderr.(*os.File); !ok || !isTerminal(f) {
		return nil
	}
	tty, err := os.Open(controllingTTY)
	if err != nil {
		return nil
	}
	if !isTerminal(tty) {
		tty.Close()
		return nil
	}
	return &terminal{in: bufio.NewReader(tty), out: stderr}
}

// isTerminal is a variable so that tests can stand a file in for a terminal.
var isTerminal = func(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }

// approvals answers the asks of one `codemode run`: --deny globs first,
// then --approve globs, then the person at the terminal; with none of
// those an ask is denied at once, with a reason that says how to answer.
type approvals struct {
	approve, deny globList
	term          *terminal
	stderr        io.Writer
}

func (p *approvals) decide(tool, args, reason string) (allow bool, why string) {
	for _, g := range p.deny {
		if config.MatchTool(g, tool) {
			return false, "denied by --deny " + g
		}
	}
	for _, g := range p.approve {
		if config.MatchTool(g, tool) {
			return true, "approved by --approve " + g
		}
	}
	if p.term == nil {
		msg := fmt.Sprintf("%s needs approval and nobody can answer here: run codemode run on a terminal to be asked, or pass --approve %q (or --approve '*') or --deny %q", tool, tool, tool)
		fmt.Fprintf(p.stderr, "codemode run: %s\n", msg)
		return false, msg
	}
	// What the program chose (the arguments, an upstream's tool name) is
	// printed with control characters escaped: it must not drive the terminal.
	fmt.Fprintf(p.term.out, "approval needed: %s", printable(tool))
	if reason != "" {
		fmt.Fprintf(p.term.out, " (%s)", printable(reason))
	}
	fmt.Fprintf(p.term.out, "\n  arguments: %s\nallow? [y/N] ", printable(args))
	line, err := p.term.in.ReadString('\n')
	if err != nil && line == "" {
		return false, "denied: the terminal closed"
	}
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return true, "approved at the terminal"
	}
	return false, "denied at the terminal"
}

// printable escapes the control characters of s (C0, DEL and C1, which
// include the terminal's escape and CSI), as Go quotes them.
func printable(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// answer watches a session's log and answers each approval it asks until
// ctx ends.
func (p *approvals) answer(ctx context.Context, a *app.App, sessionID string) {
	var after int64
	for {
		events, err := a.Store.Events(ctx, sessionID, after, 0)
		if err != nil && !errors.Is(err, session.ErrNotFound) {
			return
		}
		for _, e := range events {
			after = e.Seq
			if e.Type != session.TypeApprovalAsked {
				continue // not decoded: most of a run's events are its nested dispatches
			}
			ask, ok := e.Payload().(*session.ApprovalAsked)
			if !ok {
				continue
			}
			allow, why := p.decide(ask.Tool, string(ask.Arguments), ask.Reason)
			if err := a.Agent.Answer(ctx, sessionID, ask.ApprovalID, allow, why); err != nil && ctx.Err() == nil {
				a.Logger.Warn("approval not answered", "approval_id", ask.ApprovalID, "err", err)
			}
		}
		if err := a.Store.Wait(ctx, sessionID, after); err != nil {
			return
		}
	}
}
