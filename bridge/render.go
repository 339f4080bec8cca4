package bridge

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/codemode/codemode/internal/bytesize"
	"github.com/codemode/codemode/registry"
	"github.com/codemode/codemode/registry/frozen"
	"github.com/codemode/codemode/sandbox"
)

// NoOutput is the content of a run that printed and returned nothing.
const NoOutput = "(run_code completed with no output)"

// NoOutputHint follows NoOutput in the content: what usually causes it.
const NoOutputHint = "The program printed nothing and returned undefined. `return` the value you want to see (or console.log it). " +
	"The code is itself the body of an async function: write the statements at the top level, and `await` every tool call " +
	"(a function or promise that is never called or awaited does nothing)."

// The states of an unfinished sub-call.
const (
	StateCancelled = "cancelled" // it was running: the run cancelled it
	StateAbandoned = "abandoned" // it had not started: it never ran
)

// Unfinished is a sub-call that had not settled when the program did.
type Unfinished struct {
	Tool  string `json:"tool"`
	Line  int    `json:"line,omitempty"` // in the program's source; 0 when unknown
	State string `json:"state"`
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// render shows logs, then the result (strings raw, other JSON
// pretty-printed), then the calls the program left unfinished; all within
// MaxContentBytes.
func (b *Bridge) render(_, value frozen.Value) []registry.ContentBlock {
	var v runValue
	if err := value.Unmarshal(&v); err != nil {
		return capContent(registry.DefaultRender(value), b.opts.MaxContentBytes)
	}
	var parts []string
	if len(v.Logs) > 0 {
		parts = append(parts, strings.Join(v.Logs, "\n"))
	}
	if v.Result != nil {
		if r, err := frozen.Parse(v.Result); err == nil {
			parts = append(parts, registry.DefaultRender(r)[0].Text)
		}
	}
	if len(parts) == 0 {
		parts = append(parts, NoOutput+"\n"+NoOutputHint)
	}
	note := unfinishedNote(v.Unfinished, true)
	text := capText(strings.Join(parts, "\n\n"), b.opts.MaxContentBytes-len(note))
	if note != "" {
		text += "\n\n" + note
	}
	return []registry.ContentBlock{registry.Text(text)}
}

// maxListedCalls bounds how many unfinished calls the note names.
const maxListedCalls = 10

// unfinishedNote tells the model which calls the program left running or
// queued; "" when none. returned says the program settled on its own (so a
// missing await is the likely cause).
func unfinishedNote(calls []Unfinished, returned bool) string {
	if len(calls) == 0 {
		return ""
	}
	var items []string
	for i, c := range calls {
		if i == maxListedCalls {
			items = append(items, fmt.Sprintf("and %d more", len(calls)-maxListedCalls))
			break
		}
		where := ""
		if c.Line > 0 {
			where = fmt.Sprintf(" (line %d)", c.Line)
		}
		state := "cancelled while running"
		if c.State == StateAbandoned {
			state = "never started"
		}
		items = append(items, fmt.Sprintf("%s%s, %s", c.Tool, where, state))
	}
	calls1 := "calls had"
	if len(calls) == 1 {
		calls1 = "call had"
	}
	note := fmt.Sprintf("Warning: %d tool %s not finished when the program ended: %s.", len(calls), calls1, strings.Join(items, "; "))
	if returned {
		note += " Did you forget `await`? Await every call before returning (for a list: `await Promise.all(items.map(async (i) => …))`, not `items.forEach(async …)`)."
	}
	return note
}

// failure is the CODE_RUN_FAILED error of a failed run; its content states
// the kind and message, the calls it left unfinished and the captured logs,
// within MaxContentBytes.
func (b *Bridge) failure(err error, logs []string, left []Unfinished) *registry.Error {
	kind, msg := sandbox.KindRuntime, registry.SafeString(err)
	var f *sandbox.Failure
	if errors.As(err, &f) {
		kind, msg = f.Kind, f.Message
	}
	text := fmt.Sprintf("run_code failed (%s): %s", kind, msg)
	if note := unfinishedNote(left, false); note != "" {
		text += "\n\n" + note
	}
	if len(logs) > 0 {
		text += "\n\nLogs:\n" + strings.Join(logs, "\n")
	}
	return &registry.Error{Code: registry.CodeCodeRunFailed, Kind: kind, Message: capText(msg, b.opts.MaxContentBytes), Content: []registry.ContentBlock{registry.Text(capText(text, b.opts.MaxContentBytes))}}
}

// capText cuts text to about limit bytes (on a rune boundary) with a marker
// saying how much was cut and how to show less.
func capText(text string, limit int) string {
	limit = max(limit, 1<<10)
	if len(text) <= limit {
		return text
	}
	cut := limit
	for cut > 0 && !utf8.RuneStart(text[cut]) {
		cut--
	}
	return text[:cut] + fmt.Sprintf("\n… [output cut: %s of %s shown. Return or print less: select the fields you need, summarise, or page through the data]",
		bytesize.Approx(int64(cut)), bytesize.Approx(int64(len(text))))
}

// capContent bounds the text of content blocks to limit bytes in all; images
// are kept.
func capContent(blocks []registry.ContentBlock, limit int) []registry.ContentBlock {
	total := 0
	for _, blk := range blocks {
		total += len(blk.Text)
	}
	if total <= limit {
		return blocks
	}
	out := make([]registry.ContentBlock, 0, len(blocks))
	left := limit
	for _, blk := range blocks {
		if blk.IsImage() || blk.Text == "" {
			out = append(out, blk)
			continue
		}
		if left <= 0 {
			continue
		}
		if len(blk.Text) > left {
			blk.Text = capText(blk.Text, left)
		}
		left -= len(blk.Text)
		out = append(out, blk)
	}
	return out
}

// presentCall is run_code's call card: its description, derived from the
// code when the model gave none.
func presentCall(args frozen.Value) any {
	var in struct{ Code, Description string }
	if args.Unmarshal(&in) != nil {
		return nil
	}
	return map[string]string{"description": DescribeRun(in.Code, in.Description)}
}

// maxDescription bounds a derived description.
const maxDescription = 80

// DescribeRun returns a run's one-line description: description when it is
// not blank, else one derived from the code (its first comment, or its first
// line of code), at most 80 characters.
func DescribeRun(code, description string) string {
	if d := strings.TrimSpace(description); d != "" {
		return d
	}
	for _, line := range strings.Split(code, "\n") {
		line = strings.TrimSpace(line)
		if c, ok := strings.CutPrefix(line, "//"); ok {
			line = strings.TrimSpace(c)
		} else if strings.HasPrefix(line, "/*") || strings.HasPrefix(line, "*") {
			line = strings.TrimSpace(strings.Trim(line, "/* "))
		}
		if line == "" || strings.HasPrefix(line, "```") {
			continue
		}
		if r := []rune(line); len(r) > maxDescription {
			line = string(r[:maxDescription-1]) + "…"
		}
		return line
	}
	return "an empty program"
}
