package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/codemode/codemode/agent"
	"github.com/codemode/codemode/internal/requestid"
	"github.com/codemode/codemode/registry"
	"github.com/codemode/codemode/session"
)

// Tasks (MCP 2025-11-25): over /mcp a client may augment a run_code
// tools/call with a task ({"task": {"ttl": ms}} in its params). The call
// then answers at once with the task, runs on in the background, and the
// client polls it (tasks/get), waits for its result (tasks/result), lists
// its session's tasks (tasks/list) or cancels one (tasks/cancel). A client
// that asks for no task waits for the result as before. The go-sdk knows
// nothing of tasks (v1.8.0), so HTTPHandler serves these requests before it,
// and adds the tasks capability to initialize's answer and run_code's
// execution.taskSupport "optional" to tools/list's. A task lives in the
// process that runs its call, as the MCP session that made it does; it is
// kept for its ttl after it was created (DefaultTaskTTL when the client
// names none, at most MaxTaskTTL).

// Task lifetimes.
const (
	DefaultTaskTTL = time.Hour
	MaxTaskTTL     = 24 * time.Hour
	// taskPollInterval is what tasks tell clients to wait between polls.
	taskPollInterval = 500 * time.Millisecond
	// maxTasksPerSession bounds the tasks one MCP session keeps; the oldest
	// ended ones go first.
	maxTasksPerSession = 1000
	// relatedTaskKey is the _meta key naming a result's task.
	relatedTaskKey = "io.modelcontextprotocol/related-task"
)

// The statuses of a task.
const (
	taskWorking   = "working"
	taskCompleted = "completed"
	taskFailed    = "failed"
	taskCancelled = "cancelled"
)

// taskMethods are the requests taskStore serves.
var taskMethods = map[string]bool{"tasks/get": true, "tasks/result": true, "tasks/list": true, "tasks/cancel": true}

// taskStore holds the tasks of one HTTPHandler, by id.
type taskStore struct {
	mu    sync.Mutex
	tasks map[string]*task // guarded by mu
}

// task is one task-augmented call.
type task struct {
	id         string
	mcpSession string
	created    time.Time
	ttl        time.Duration
	cancel     context.CancelFunc
	done       chan struct{} // closed when the call has ended

	mu                sync.Mutex
	status            string               // guarded by mu
	updated           time.Time            // guarded by mu
	sessionID, callID string               // codemode's, once the call started; guarded by mu
	asks              *agent.ApprovalWatch // the session's asks, once the call started; guarded by mu
	result            json.RawMessage      // the CallToolResult when completed; guarded by mu
	failure           *jsonrpc.Error       // why it failed; guarded by mu
}

// taskJSON is a task on the wire (MCP's Task).
type taskJSON struct {
	TaskID        string `json:"taskId"`
	Status        string `json:"status"`
	StatusMessage string `json:"statusMessage,omitempty"`
	CreatedAt     string `json:"createdAt"`
	LastUpdatedAt string `json:"lastUpdatedAt"`
	TTL           int64  `json:"ttl"`
	PollInterval  int64  `json:"pollInterval"`
}

// wants reports whether req is one the task store serves: a task method, or
// a task-augmented tools/call.
func wantsTask(req *jsonrpc.Request) bool {
	if taskMethods[req.Method] {
		return true
	}
	if req.Method != "tools/call" {
		return false
	}
	var p struct {
		Task json.RawMessage `json:"task"`
	}
	return json.Unmarshal(req.Params, &p) == nil && len(p.Task) > 0 && string(p.Task) != "null"
}

// serveTask answers a task request of the MCP session sid in scope.
func (h *HTTPHandler) serveTask(w http.ResponseWriter, r *http.Request, req *jsonrpc.Request, scope string) {
	sid := r.Header.Get(sessionHeader)
	var result any
	var rerr *jsonrpc.Error
	switch req.Method {
	case "tools/call":
		result, rerr = h.startTask(r, req, scope, sid)
	case "tasks/list":
		result = map[string]any{"tasks": h.tasks.list(sid, h)}
	default:
		var p struct {
			TaskID string `json:"taskId"`
		}
		_ = json.Unmarshal(req.Params, &p)
		t := h.tasks.get(p.TaskID, sid)
		if t == nil {
			rerr = &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown task %q", p.TaskID)}
			break
		}
		switch req.Method {
		case "tasks/get":
			result = h.taskView(t)
		case "tasks/cancel":
			result, rerr = h.cancelTask(t)
		case "tasks/result":
			result, rerr = t.await(r.Context())
		}
	}
	if rerr != nil {
		writeRPCError(w, http.StatusOK, req.ID, rerr.Code, rerr.Message)
		return
	}
	raw, err := json.Marshal(result)
	if err != nil {
		writeRPCError(w, http.StatusOK, req.ID, jsonrpc.CodeInternalError, err.Error())
		return
	}
	data, err := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: req.ID, Result: raw})
	if err != nil {
		writeRPCError(w, http.StatusOK, req.ID, jsonrpc.CodeInternalError, err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(data)
}

// startTask starts a task-augmented tools/call of run_code in the MCP
// session sid and answers with its task.
func (h *HTTPHandler) startTask(r *http.Request, req *jsonrpc.Request, scope, sid string) (any, *jsonrpc.Error) {
	var p struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
		Meta      sdk.Meta        `json:"_meta"`
		Task      struct {
			TTL *float64 `json:"ttl"`
		} `json:"task"`
	}
	if err := json.Unmarshal(req.Params, &p); err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "tools/call: " + err.Error()}
	}
	if p.Name != registry.RunCode {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("tool %q does not run as a task: only run_code does (its execution.taskSupport)", p.Name)}
	}
	srv, err := h.server(scope)
	if err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
	}
	var ss *sdk.ServerSession
	for s := range srv.MCP().Sessions() {
		if s.ID() == sid {
			ss = s
			break
		}
	}
	if ss == nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: fmt.Sprintf("unknown MCP session %q", sid)}
	}
	release := func() {}
	if srv.admission != nil {
		done, ok := srv.admission(r.Header)
		if !ok {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the call was not admitted: its request ended before it could start"}
		}
		release = done
	}
	ttl := DefaultTaskTTL
	if p.Task.TTL != nil && *p.Task.TTL > 0 {
		ttl = min(time.Duration(*p.Task.TTL)*time.Millisecond, MaxTaskTTL)
	}
	ctx, cancel := context.WithCancel(requestid.With(context.Background(), requestid.From(r.Context())))
	now := time.Now()
	t := &task{id: "task_" + session.NewID(), mcpSession: sid, created: now, ttl: ttl, cancel: cancel,
		done: make(chan struct{}), status: taskWorking, updated: now}
	h.tasks.add(t)
	call := &sdk.CallToolRequest{Session: ss, Params: &sdk.CallToolParamsRaw{Name: p.Name, Arguments: p.Arguments, Meta: p.Meta},
		Extra: &sdk.RequestExtra{Header: r.Header.Clone()}}
	go func() {
		defer release()
		defer cancel()
		res, err := srv.run(ctx, call, func(sessionID, callID string) {
			t.mu.Lock()
			t.sessionID, t.callID = sessionID, callID
			t.asks = h.app.Agent.WatchApprovals(sessionID)
			t.mu.Unlock()
		})
		t.end(res, err)
	}()
	return map[string]any{"task": h.taskView(t)}, nil
}

// end records how the task's call ended.
func (t *task) end(res *sdk.CallToolResult, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	defer close(t.done)
	t.updated = time.Now()
	if t.status == taskCancelled {
		return
	}
	if err == nil && res != nil {
		if res.Meta == nil {
			res.Meta = sdk.Meta{}
		}
		res.Meta[relatedTaskKey] = map[string]string{"taskId": t.id}
		t.result, err = json.Marshal(res)
	}
	if err != nil || res == nil {
		t.status = taskFailed
		t.failure = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("the task's call failed: %v", err)}
		return
	}
	t.status = taskCompleted
}

// await waits for the task's call to end and returns its result.
func (t *task) await(ctx context.Context) (any, *jsonrpc.Error) {
	select {
	case <-t.done:
	case <-ctx.Done():
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the request ended before the task did"}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	switch t.status {
	case taskCompleted:
		return t.result, nil
	case taskCancelled:
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("task %q was cancelled", t.id)}
	}
	return nil, t.failure
}

// cancelTask cancels a task that has not ended.
func (h *HTTPHandler) cancelTask(t *task) (any, *jsonrpc.Error) {
	t.mu.Lock()
	if t.status != taskWorking {
		status := t.status
		t.mu.Unlock()
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("task %q has ended (%s)", t.id, status)}
	}
	t.status, t.updated = taskCancelled, time.Now()
	t.mu.Unlock()
	t.cancel()
	return h.taskView(t), nil
}

// taskView is the task on the wire; a working task's message says when its
// call waits for a person.
func (h *HTTPHandler) taskView(t *task) taskJSON {
	t.mu.Lock()
	v := taskJSON{TaskID: t.id, Status: t.status, CreatedAt: t.created.UTC().Format(time.RFC3339Nano),
		LastUpdatedAt: t.updated.UTC().Format(time.RFC3339Nano), TTL: t.ttl.Milliseconds(), PollInterval: taskPollInterval.Milliseconds()}
	sessionID, callID, watch := t.sessionID, t.callID, t.asks
	if t.failure != nil {
		v.StatusMessage = t.failure.Message
	}
	t.mu.Unlock()
	if v.Status != taskWorking || watch == nil {
		return v
	}
	// Each poll reads only what the session logged since the last.
	pending, err := watch.Pending(context.Background())
	if asks := agent.AsksOf(pending, callID); err == nil && len(asks) > 0 {
		tools := make([]string, len(asks))
		for i, a := range asks {
			tools[i] = a.Tool
		}
		v.StatusMessage = fmt.Sprintf("waiting for approval: %s (session %s)", strings.Join(tools, ", "), sessionID)
	}
	return v
}

func (s *taskStore) add(t *task) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tasks == nil {
		s.tasks = map[string]*task{}
	}
	s.expire(time.Now())
	var mine []*task
	for _, o := range s.tasks {
		if o.mcpSession == t.mcpSession {
			mine = append(mine, o)
		}
	}
	if len(mine) >= maxTasksPerSession {
		slices.SortFunc(mine, func(a, b *task) int { return a.created.Compare(b.created) })
		for _, o := range mine[:len(mine)-maxTasksPerSession+1] {
			delete(s.tasks, o.id)
		}
	}
	s.tasks[t.id] = t
}

// get returns the MCP session's task id; nil for another session's.
func (s *taskStore) get(id, sid string) *task {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expire(time.Now())
	if t := s.tasks[id]; t != nil && t.mcpSession == sid {
		return t
	}
	return nil
}

// list returns the MCP session's tasks, oldest first.
func (s *taskStore) list(sid string, h *HTTPHandler) []taskJSON {
	s.mu.Lock()
	s.expire(time.Now())
	var mine []*task
	for _, t := range s.tasks {
		if t.mcpSession == sid {
			mine = append(mine, t)
		}
	}
	s.mu.Unlock()
	slices.SortFunc(mine, func(a, b *task) int { return a.created.Compare(b.created) })
	out := make([]taskJSON, len(mine))
	for i, t := range mine {
		out[i] = h.taskView(t)
	}
	return out
}

// expire forgets the tasks past their ttl (a running one is cancelled).
// Callers hold mu.
func (s *taskStore) expire(now time.Time) {
	for id, t := range s.tasks {
		if now.Sub(t.created) > t.ttl {
			t.cancel()
			delete(s.tasks, id)
		}
	}
}

// taskAnnouncer takes the go-sdk's answer to initialize or tools/list
// whole and adds what the go-sdk does not know of tasks: the tasks
// capability, and run_code's execution.taskSupport "optional". The answer is
// JSON, or an SSE stream whose events' data are JSON-RPC messages; both end
// with the one response.
type taskAnnouncer struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (a *taskAnnouncer) Header() http.Header { return a.header }

func (a *taskAnnouncer) WriteHeader(code int) {
	if a.status == 0 {
		a.status = code
	}
}

func (a *taskAnnouncer) Write(b []byte) (int, error) {
	a.WriteHeader(http.StatusOK)
	return a.body.Write(b)
}

// Flush keeps the answer until flushTo: it is short, and ends with its
// request.
func (a *taskAnnouncer) Flush() {}

// flushTo writes the answer, tasks announced, to w.
func (a *taskAnnouncer) flushTo(w http.ResponseWriter) {
	a.WriteHeader(http.StatusOK)
	body := a.body.Bytes()
	if a.status == http.StatusOK {
		switch ct := a.header.Get("Content-Type"); {
		case strings.HasPrefix(ct, "text/event-stream"):
			lines := bytes.SplitAfter(body, []byte("\n"))
			for i, l := range lines {
				if data, ok := bytes.CutPrefix(l, []byte("data: ")); ok {
					end := len(data) - len(bytes.TrimRight(data, "\r\n"))
					lines[i] = slices.Concat([]byte("data: "), announceTasks(data[:len(data)-end]), data[len(data)-end:])
				}
			}
			body = bytes.Join(lines, nil)
		case strings.HasPrefix(ct, "application/json"):
			body = announceTasks(body)
		}
	}
	for k, v := range a.header {
		w.Header()[k] = v
	}
	w.Header().Del("Content-Length")
	w.WriteHeader(a.status)
	_, _ = w.Write(body)
}

// tasksCapability is the server's tasks capability: task-augmented
// tools/call, tasks/list and tasks/cancel.
var tasksCapability = map[string]any{"list": map[string]any{}, "cancel": map[string]any{}, "requests": map[string]any{"tools": map[string]any{"call": map[string]any{}}}}

// announceTasks adds tasks to a JSON-RPC response: to an initialize
// result's capabilities, and to run_code's entry of a tools/list result. Any
// other message is returned as it is.
func announceTasks(msg []byte) []byte {
	var m map[string]json.RawMessage
	if json.Unmarshal(msg, &m) != nil || m["result"] == nil {
		return msg
	}
	d := json.NewDecoder(bytes.NewReader(m["result"]))
	d.UseNumber()
	var result map[string]any
	if d.Decode(&result) != nil {
		return msg
	}
	changed := false
	if caps, ok := result["capabilities"].(map[string]any); ok {
		caps["tasks"] = tasksCapability
		changed = true
	}
	if tools, ok := result["tools"].([]any); ok {
		for _, t := range tools {
			if tool, ok := t.(map[string]any); ok && tool["name"] == registry.RunCode {
				tool["execution"] = map[string]any{"taskSupport": "optional"}
				changed = true
			}
		}
	}
	if !changed {
		return msg
	}
	raw, err := json.Marshal(result)
	if err != nil {
		return msg
	}
	m["result"] = raw
	out, err := json.Marshal(m)
	if err != nil {
		return msg
	}
	return out
}
