package session

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
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
	var b timelineBuilder
	for _, e := range events {
		b.add(e)
	}
	var out []TimelineEntry
	var walk func(ns []*timelineNode, depth int)
	walk = func(ns []*timelineNode, depth int) {
		for _, n := range ns {
			n.Depth = depth
			out = append(out, n.TimelineEntry)
			walk(n.children, depth+1)
		}
	}
	walk(b.roots, 0)
	return out
}

// timelineNode is an entry with the entries under it. waiting says its
// outcome is still to come; open counts the waiting entries of its subtree,
// itself included; last is the latest seq of an event that touched the
// subtree.
type timelineNode struct {
	TimelineEntry
	parent   *timelineNode
	children []*timelineNode
	waiting  bool
	open     int
	last     int64
}

// timelineBuilder folds events, in log order, into a forest of entries.
// Roots and children are kept in the order of their first events, which is
// seq order.
type timelineBuilder struct {
	roots     []*timelineNode
	calls     map[string]*timelineNode // call id or sub_call_id → latest entry
	approvals map[string]*timelineNode // approval id → entry
}

// node adds an entry under the entry of parentID when there is one, else at
// the top level. An entry that has an outcome to come counts as open.
func (b *timelineBuilder) node(e TimelineEntry, parentID string, open bool) *timelineNode {
	n := &timelineNode{TimelineEntry: e, waiting: open}
	if p := b.calls[parentID]; parentID != "" && p != nil {
		n.parent = p
		p.children = append(p.children, n)
	} else {
		b.roots = append(b.roots, n)
	}
	if open {
		for a := n; a != nil; a = a.parent {
			a.open++
		}
	}
	b.touch(n, e.Seq)
	return n
}

// end records the event that gave n its outcome.
func (b *timelineBuilder) end(n *timelineNode, seq int64, t time.Time) {
	if n.waiting {
		n.waiting = false
		for a := n; a != nil; a = a.parent {
			a.open--
		}
	}
	n.EndSeq, n.EndTime = seq, t
	b.touch(n, seq)
}

func (b *timelineBuilder) touch(n *timelineNode, seq int64) {
	for a := n; a != nil; a = a.parent {
		a.last = max(a.last, seq)
	}
}

func (b *timelineBuilder) add(e Event) {
	if b.calls == nil {
		b.calls, b.approvals = map[string]*timelineNode{}, map[string]*timelineNode{}
	}
	switch p := e.Payload().(type) {
	case *ToolCall:
		b.calls[p.CallID] = b.node(TimelineEntry{Kind: KindCall, Seq: e.Seq, Time: e.Time, CallID: p.CallID,
			Name: p.Name, Turn: p.Turn, Step: p.Step, Arguments: p.Arguments, Outcome: OutcomeOpen}, "", true)
	case *ToolResult:
		n := b.calls[p.CallID]
		if n == nil || n.Kind != KindCall || n.EndSeq != 0 {
			n = b.node(TimelineEntry{Kind: KindResult, Seq: e.Seq, Time: e.Time, CallID: p.CallID}, "", false)
		} else {
			n.Duration = e.Time.Sub(n.Time)
		}
		b.end(n, e.Seq, e.Time)
		n.Outcome, n.Error, n.Content = outcome(p.IsError), p.Error, p.Content
	case *CodeDispatchStart:
		b.calls[p.SubCallID] = b.node(TimelineEntry{Kind: KindDispatch, Seq: e.Seq, Time: e.Time, CallID: p.SubCallID,
			ParentCallID: p.ParentCallID, Name: p.Name, Arguments: string(p.Arguments), Outcome: OutcomeOpen}, p.ParentCallID, true)
	case *CodeDispatch:
		n := b.calls[p.SubCallID]
		if n == nil || n.Kind != KindDispatch || n.EndSeq != 0 {
			n = b.node(TimelineEntry{Kind: KindDispatch, Seq: e.Seq, Time: e.Time, CallID: p.SubCallID,
				ParentCallID: p.ParentCallID, Name: p.Name, Arguments: string(p.Arguments)}, p.ParentCallID, false)
			b.calls[p.SubCallID] = n
		}
		b.end(n, e.Seq, e.Time)
		n.Outcome, n.Error, n.Content = outcome(p.IsError), p.Error, p.Content
		if !p.StartedAt.IsZero() && !p.EndedAt.IsZero() {
			n.Duration = p.EndedAt.Sub(p.StartedAt)
		}
	case *ApprovalAsked:
		b.approvals[p.ApprovalID] = b.node(TimelineEntry{Kind: KindApproval, Seq: e.Seq, Time: e.Time, CallID: p.CallID,
			ApprovalID: p.ApprovalID, Name: p.Tool, Arguments: string(p.Arguments), Reason: p.Reason, Outcome: OutcomePending}, p.CallID, true)
	case *ApprovalAnswered:
		n := b.approvals[p.ApprovalID]
		if n == nil || n.EndSeq != 0 {
			n = b.node(TimelineEntry{Kind: KindApproval, Seq: e.Seq, Time: e.Time, CallID: p.CallID,
				ApprovalID: p.ApprovalID}, p.CallID, false)
		}
		b.end(n, e.Seq, e.Time)
		n.Outcome, n.DecisionReason = p.Decision, p.Reason
	case *UserContext:
		b.node(TimelineEntry{Kind: KindContext, Seq: e.Seq, Time: e.Time, CallID: p.CallID,
			Source: p.Source, Text: p.Text}, "", false)
	}
}

// forget drops a written subtree from the builder's indexes, so that a
// later event about one of its entries starts a new one.
func (b *timelineBuilder) forget(n *timelineNode) {
	switch n.Kind {
	case KindApproval:
		if b.approvals[n.ApprovalID] == n {
			delete(b.approvals, n.ApprovalID)
		}
	case KindCall, KindDispatch:
		if b.calls[n.CallID] == n {
			delete(b.calls, n.CallID)
		}
	}
	for _, c := range n.children {
		b.forget(c)
	}
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
	tw := NewTimelineWriter(w)
	if err := tw.Add(events); err != nil {
		return err
	}
	return tw.Close()
}

// TimelineWindow is how many events a TimelineWriter reads past a
// top-level entry whose subtree has ended before it writes the entry: an
// event about one of its entries that comes later (a settlement logged long
// after its run's result) starts an entry of its own at the top level.
const TimelineWindow = 4096

// A TimelineWriter writes a session's timeline, as WriteTimeline does, from
// its events added a page at a time in log order, holding only what it has
// not written: a top-level entry is written once every entry under it has
// its outcome, TimelineWindow events have followed its last one, and every
// earlier top-level entry is written. Close writes the rest, open entries
// included.
type TimelineWriter struct {
	bw      *bufio.Writer
	b       timelineBuilder
	lastSeq int64
}

// NewTimelineWriter returns a TimelineWriter that writes to w.
func NewTimelineWriter(w io.Writer) *TimelineWriter {
	return &TimelineWriter{bw: bufio.NewWriter(w)}
}

// Add folds the next events of the log and writes the top-level entries
// that are done.
func (t *TimelineWriter) Add(events []Event) error {
	for _, e := range events {
		t.b.add(e)
		t.lastSeq = max(t.lastSeq, e.Seq)
	}
	done := 0
	for _, n := range t.b.roots {
		if n.open > 0 || t.lastSeq-n.last < TimelineWindow {
			break
		}
		t.write(n, 0)
		t.b.forget(n)
		done++
	}
	t.b.roots = t.b.roots[done:]
	if done > 0 {
		return t.bw.Flush()
	}
	return nil
}

// Close writes every entry not yet written and flushes.
func (t *TimelineWriter) Close() error {
	for _, n := range t.b.roots {
		t.write(n, 0)
	}
	t.b.roots = nil
	return t.bw.Flush()
}

// write writes n's headline, the entries under it, then its outcome.
func (t *TimelineWriter) write(n *timelineNode, depth int) {
	n.Depth = depth
	indent := strings.Repeat("  ", depth)
	fmt.Fprintf(t.bw, "%s#%d %s %s\n", indent, n.Seq, n.Time.UTC().Format("15:04:05.000"), headline(n.TimelineEntry))
	for _, c := range n.children {
		t.write(c, depth+1)
	}
	if n.Kind != KindContext {
		fmt.Fprintf(t.bw, "%s   → %s\n", indent, outcomeLine(n.TimelineEntry))
	}
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
