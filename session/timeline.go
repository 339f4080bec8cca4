package session

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/codemode/codemode/registry"
)

// The kinds of TimelineEntry.
const (
	KindCall     = "call"     // a top-level tool/call and its tool/result
	KindDispatch = "dispatch" // a nested Code Mode SDK call: start and settlement
	KindApproval = "approval" // an approval/asked and its approval/answered
	KindContext  = "context"  // a user/context
	KindResult   = "result"   // a tool/result whose tool/call is not in the log
)

// The outcomes of calls and dispatches; approvals use their decision, or
// OutcomePending.
const (
	OutcomeOK      = "ok"
	OutcomeError   = "error"
	OutcomeOpen    = "open"    // no result logged (yet, or ever: a crash)
	OutcomePending = "pending" // an approval with no answer logged
)

// TimelineEntry is one line of a session's human timeline: a call with its
// outcome, a nested dispatch, an approval or a context.
type TimelineEntry struct {
	Kind  string
	Depth int // 0 for top level; a nested entry is one deeper than its parent

	Seq     int64     // the event that opened the entry
	Time    time.Time // its time
	EndSeq  int64     // the event that closed it; 0 while open
	EndTime time.Time // its time

	// CallID is the call's id (a dispatch's sub_call_id); for an approval or a
	// context, the call it belongs to. ParentCallID is a dispatch's parent.
	CallID       string
	ParentCallID string
	Name         string // the tool
	Turn, Step   int    // calls
	Arguments    string // calls: the raw string; dispatches and approvals: the JSON

	Outcome  string     // OutcomeOK, OutcomeError, OutcomeOpen; an approval's decision or OutcomePending
	Error    *ErrorInfo // a failed call or dispatch
	Content  []registry.ContentBlock
	Duration time.Duration // calls: result time - call time; dispatches: ended_at - started_at

	ApprovalID     string
	Reason         string // an approval's ask reason
	DecisionReason string // the reason given with the answer

	Source string // contexts
	Text   string // contexts
}

// Timeline builds the human timeline of a session's events: entries in log
// order, each nested dispatch directly under its parent call (by
// parent_call_id, recursively), each approval under the call it asked about,
// and each call's outcome folded into its entry. Undecodable events and types
// this package does not know are left out.
func Timeline(events []Event) []TimelineEntry {
	type node struct {
		TimelineEntry
		parent   *node
		children []*node
	}
	var roots []*node
	calls := map[string]*node{}     // call id or sub_call_id → latest entry
	approvals := map[string]*node{} // approval id → entry
	add := func(n *node, parentID string) {
		if p := calls[parentID]; parentID != "" && p != nil {
			n.parent = p
			p.children = append(p.children, n)
			return
		}
		roots = append(roots, n)
	}
	for _, e := range events {
		switch p := e.Payload().(type) {
		case *ToolCall:
			n := &node{TimelineEntry: TimelineEntry{Kind: KindCall, Seq: e.Seq, Time: e.Time, CallID: p.CallID,
				Name: p.Name, Turn: p.Turn, Step: p.Step, Arguments: p.Arguments, Outcome: OutcomeOpen}}
			add(n, "")
			calls[p.CallID] = n
		case *ToolResult:
			n := calls[p.CallID]
			if n == nil || n.Kind != KindCall || n.EndSeq != 0 {
				n = &node{TimelineEntry: TimelineEntry{Kind: KindResult, Seq: e.Seq, Time: e.Time, CallID: p.CallID}}
				add(n, "")
			} else {
				n.Duration = e.Time.Sub(n.Time)
			}
			n.EndSeq, n.EndTime = e.Seq, e.Time
			n.Outcome, n.Error, n.Content = outcome(p.IsError), p.Error, p.Content
		case *CodeDispatchStart:
			n := &node{TimelineEntry: TimelineEntry{Kind: KindDispatch, Seq: e.Seq, Time: e.Time, CallID: p.SubCallID,
				ParentCallID: p.ParentCallID, Name: p.Name, Arguments: string(p.Arguments), Outcome: OutcomeOpen}}
			add(n, p.ParentCallID)
			calls[p.SubCallID] = n
		case *CodeDispatch:
			n := calls[p.SubCallID]
			if n == nil || n.Kind != KindDispatch || n.EndSeq != 0 {
				n = &node{TimelineEntry: TimelineEntry{Kind: KindDispatch, Seq: e.Seq, Time: e.Time, CallID: p.SubCallID,
					ParentCallID: p.ParentCallID, Name: p.Name, Arguments: string(p.Arguments)}}
				add(n, p.ParentCallID)
				calls[p.SubCallID] = n
			}
			n.EndSeq, n.EndTime = e.Seq, e.Time
			n.Outcome, n.Error, n.Content = outcome(p.IsError), p.Error, p.Content
			if !p.StartedAt.IsZero() && !p.EndedAt.IsZero() {
				n.Duration = p.EndedAt.Sub(p.StartedAt)
			}
		case *ApprovalAsked:
			n := &node{TimelineEntry: TimelineEntry{Kind: KindApproval, Seq: e.Seq, Time: e.Time, CallID: p.CallID,
				ApprovalID: p.ApprovalID, Name: p.Tool, Arguments: string(p.Arguments), Reason: p.Reason, Outcome: OutcomePending}}
			add(n, p.CallID)
			approvals[p.ApprovalID] = n
		case *ApprovalAnswered:
			n := approvals[p.ApprovalID]
			if n == nil || n.EndSeq != 0 {
				n = &node{TimelineEntry: TimelineEntry{Kind: KindApproval, Seq: e.Seq, Time: e.Time, CallID: p.CallID,
					ApprovalID: p.ApprovalID}}
				add(n, p.CallID)
			}
			n.EndSeq, n.EndTime = e.Seq, e.Time
			n.Outcome, n.DecisionReason = p.Decision, p.Reason
		case *UserContext:
			add(&node{TimelineEntry: TimelineEntry{Kind: KindContext, Seq: e.Seq, Time: e.Time, CallID: p.CallID,
				Source: p.Source, Text: p.Text}}, "")
		}
	}
	var out []TimelineEntry
	var walk func(ns []*node, depth int)
	walk = func(ns []*node, depth int) {
		sort.SliceStable(ns, func(i, j int) bool { return ns[i].Seq < ns[j].Seq })
		for _, n := range ns {
			n.Depth = depth
			out = append(out, n.TimelineEntry)
			walk(n.children, depth+1)
		}
	}
	walk(roots, 0)
	return out
}

func outcome(isError bool) string {
	if isError {
		return OutcomeError
	}
	return OutcomeOK
}

// clipLen bounds the text of arguments and content on a timeline line.
const clipLen = 160

// WriteTimeline writes the timeline of events for people, as `codemode
// replay` prints it: one line per entry, indented two spaces per level, a
// call's or dispatch's outcome on the line after its nested entries. Times
// are UTC; long arguments and content are clipped.
//
//	#1 09:00:00.000 call run_code c1 (turn 1, step 1) {"code":"…","description":"…"}
//	  #2 09:00:00.010 sdk math_add c1:code:1 {"a":2,"b":3}
//	     → ok in 5ms: "{\"sum\":5}"
//	   → ok in 40ms: "5"
func WriteTimeline(w io.Writer, events []Event) error {
	bw := bufio.NewWriter(w)
	var open []TimelineEntry // entries whose outcome line is still to come, by depth
	closeTo := func(depth int) {
		for len(open) > 0 && open[len(open)-1].Depth >= depth {
			e := open[len(open)-1]
			open = open[:len(open)-1]
			fmt.Fprintf(bw, "%s   → %s\n", strings.Repeat("  ", e.Depth), outcomeLine(e))
		}
	}
	for _, e := range Timeline(events) {
		closeTo(e.Depth)
		fmt.Fprintf(bw, "%s#%d %s %s\n", strings.Repeat("  ", e.Depth), e.Seq, e.Time.UTC().Format("15:04:05.000"), headline(e))
		if e.Kind != KindContext {
			open = append(open, e)
		}
	}
	closeTo(0)
	return bw.Flush()
}

// headline is an entry's first line, after its seq and time.
func headline(e TimelineEntry) string {
	switch e.Kind {
	case KindCall:
		return fmt.Sprintf("call %s %s (turn %d, step %d) %s", e.Name, e.CallID, e.Turn, e.Step, oneLine(e.Arguments))
	case KindDispatch:
		return fmt.Sprintf("sdk %s %s %s", e.Name, e.CallID, oneLine(e.Arguments))
	case KindApproval:
		if e.Name == "" && e.Reason == "" {
			return fmt.Sprintf("approval %s for %s (ask not logged)", e.ApprovalID, e.CallID)
		}
		return fmt.Sprintf("approval %s for %s %s %s: %s", e.ApprovalID, e.Name, e.CallID, oneLine(e.Arguments), e.Reason)
	case KindContext:
		via := ""
		if e.CallID != "" {
			via = " via " + e.CallID
		}
		return fmt.Sprintf("context from %s%s: %s", e.Source, via, quote(e.Text))
	default:
		return fmt.Sprintf("result %s (call not logged)", e.CallID)
	}
}

// outcomeLine describes how an entry ended.
func outcomeLine(e TimelineEntry) string {
	if e.Kind == KindApproval {
		if e.DecisionReason != "" {
			return e.Outcome + ": " + e.DecisionReason
		}
		return e.Outcome
	}
	var b strings.Builder
	b.WriteString(e.Outcome)
	if e.Outcome == OutcomeOpen {
		b.WriteString(": no result logged")
		return b.String()
	}
	if e.Error != nil {
		b.WriteString(" " + string(e.Error.Code))
		if e.Error.Kind != "" {
			b.WriteString("/" + e.Error.Kind)
		}
	}
	if e.EndSeq != e.Seq || e.Duration != 0 {
		b.WriteString(" in " + e.Duration.Round(time.Millisecond).String())
	}
	if e.Error != nil && e.Error.Message != "" {
		b.WriteString(": " + quote(e.Error.Message))
	} else if len(e.Content) > 0 {
		b.WriteString(": " + contentSummary(e.Content))
	}
	return b.String()
}

// contentSummary renders content blocks on one line: text quoted and
// clipped, images by type and size.
func contentSummary(blocks []registry.ContentBlock) string {
	parts := make([]string, len(blocks))
	for i, c := range blocks {
		switch {
		case c.IsImage():
			parts[i] = fmt.Sprintf("[image %s, %d bytes]", c.MimeType, len(c.Data)*3/4)
		case c.Type == "text":
			parts[i] = quote(c.Text)
		default:
			parts[i] = "[" + c.Type + "]"
		}
	}
	return strings.Join(parts, " + ")
}

// oneLine renders arguments on one line: JSON compacted, anything else quoted.
func oneLine(s string) string {
	var buf bytes.Buffer
	if json.Compact(&buf, []byte(s)) == nil {
		return clip(buf.String())
	}
	return quote(s)
}

// quote renders text as a clipped Go-quoted string.
func quote(s string) string { return strconv.Quote(clip(s)) }

// clip cuts s to clipLen runes, marking the cut with "…".
func clip(s string) string {
	if utf8.RuneCountInString(s) <= clipLen {
		return s
	}
	r := []rune(s)
	return string(r[:clipLen]) + "…"
}
