package mcp

import (
	"context"
	"encoding/json"
	"strconv"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// Upstream tools that require task-augmented calls (execution.taskSupport
// "required", MCP 2025-11-25) are registered like any other and called as
// tasks. The go-sdk client knows nothing of tasks (v1.8.0), so the
// upstream's connection (watchConn) makes a call to such a tool one: it adds
// "task" to the tools/call it writes, takes the CreateTaskResult that
// answers it, asks tasks/result for the task's result (which the server
// answers when the task ends), and hands that to the go-sdk as the answer to
// its tools/call. When the call is cancelled (its run ends, its timeout
// passes), the go-sdk's notifications/cancelled becomes tasks/cancel.

// upstreamTasks is a connection's calls made as tasks.
type upstreamTasks struct {
	needsTask func(tool string) bool // nil: no tool needs one

	mu    sync.Mutex
	seq   int                      // numbers the requests the connection makes itself
	calls map[jsonrpc.ID]*taskCall // by the go-sdk's tools/call id; guarded by mu
	ours  map[jsonrpc.ID]*taskCall // by the id of our tasks/result request; guarded by mu
	drops map[jsonrpc.ID]bool      // our requests whose answers nobody awaits (tasks/cancel); guarded by mu
}

// taskCall is one tools/call made as a task.
type taskCall struct {
	callID jsonrpc.ID // the go-sdk's
	taskID string     // the server's, once it answered
	result jsonrpc.ID // our tasks/result request, once sent
}

// augment adds "task" to a tools/call of a tool that needs one, and
// remembers the call. It returns the request to write.
func (ts *upstreamTasks) augment(r *jsonrpc.Request) *jsonrpc.Request {
	if ts.needsTask == nil || !r.IsCall() || r.Method != "tools/call" {
		return r
	}
	var params map[string]json.RawMessage
	if json.Unmarshal(r.Params, &params) != nil {
		return r
	}
	var name string
	if json.Unmarshal(params["name"], &name) != nil || !ts.needsTask(name) {
		return r
	}
	params["task"] = json.RawMessage(`{}`)
	raw, err := json.Marshal(params)
	if err != nil {
		return r
	}
	ts.mu.Lock()
	if ts.calls == nil {
		ts.calls, ts.ours, ts.drops = map[jsonrpc.ID]*taskCall{}, map[jsonrpc.ID]*taskCall{}, map[jsonrpc.ID]bool{}
	}
	ts.calls[r.ID] = &taskCall{callID: r.ID}
	ts.mu.Unlock()
	out := *r
	out.Params = raw
	return &out
}

// cancelled turns the go-sdk's cancellation of a task call into the requests
// that cancel the task and stop awaiting its result; nil when it is not one.
func (ts *upstreamTasks) cancelled(r *jsonrpc.Request) []*jsonrpc.Request {
	if r.IsCall() || r.Method != "notifications/cancelled" {
		return nil
	}
	var p struct {
		RequestID any `json:"requestId"`
	}
	if json.Unmarshal(r.Params, &p) != nil {
		return nil
	}
	id, err := jsonrpc.MakeID(p.RequestID) // a float64 or a string, as JSON decodes it
	if err != nil {
		return nil
	}
	ts.mu.Lock()
	defer ts.mu.Unlock()
	c := ts.calls[id]
	if c == nil || c.taskID == "" {
		return nil
	}
	delete(ts.calls, id)
	cancel := ts.request("tasks/cancel", c.taskID)
	ts.drops[cancel.ID] = true
	out := []*jsonrpc.Request{cancel}
	if c.result.IsValid() {
		delete(ts.ours, c.result)
		params, _ := json.Marshal(map[string]any{"requestId": c.result.Raw(), "reason": "the call was cancelled"})
		out = append(out, &jsonrpc.Request{Method: "notifications/cancelled", Params: params})
	}
	return out
}

// request makes a request of ours about a task. Callers hold mu.
func (ts *upstreamTasks) request(method, taskID string) *jsonrpc.Request {
	ts.seq++
	id, _ := jsonrpc.MakeID("codemode-task-" + strconv.Itoa(ts.seq))
	params, _ := json.Marshal(map[string]string{"taskId": taskID})
	return &jsonrpc.Request{ID: id, Method: method, Params: params}
}

// answer looks at a response read from the server. It returns what the
// go-sdk is to read in its place (nil: nothing, read on) and a request to
// write first (the tasks/result a created task needs).
func (ts *upstreamTasks) answer(r *jsonrpc.Response) (deliver *jsonrpc.Response, write *jsonrpc.Request) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.drops[r.ID] {
		delete(ts.drops, r.ID)
		return nil, nil
	}
	if c := ts.ours[r.ID]; c != nil { // the task's result: the go-sdk's call's answer
		delete(ts.ours, r.ID)
		delete(ts.calls, c.callID)
		out := *r
		out.ID = c.callID
		return &out, nil
	}
	c := ts.calls[r.ID]
	if c == nil || c.taskID != "" {
		return r, nil
	}
	var created struct {
		Task *struct {
			TaskID string `json:"taskId"`
		} `json:"task"`
	}
	if r.Error != nil || json.Unmarshal(r.Result, &created) != nil || created.Task == nil || created.Task.TaskID == "" {
		delete(ts.calls, r.ID) // an error, or a server that answered at once
		return r, nil
	}
	c.taskID = created.Task.TaskID
	req := ts.request("tasks/result", c.taskID)
	c.result = req.ID
	ts.ours[req.ID] = c
	return nil, req
}

// readTasks makes the task calls' answers out of the server's: it returns
// the message the go-sdk is to read for msg, and false when there is none.
// A created task's tasks/result is written apart from the reading goroutine:
// over streamable HTTP a write may wait for its answer's headers, which a
// server may send only when the task ends. Should that write fail, the call
// ends at its timeout, and its cancellation cancels the task.
func (c *watchConn) readTasks(ctx context.Context, msg jsonrpc.Message) (jsonrpc.Message, bool) {
	r, ok := msg.(*jsonrpc.Response)
	if !ok {
		return msg, true
	}
	deliver, write := c.tasks.answer(r)
	if write != nil {
		wctx := context.WithoutCancel(ctx)
		go func() { _ = c.Connection.Write(wctx, write) }()
	}
	if deliver == nil {
		return nil, false
	}
	return deliver, true
}

// setTaskTools records the tools of the last listing that need task calls.
func (u *upstream) setTaskTools(tools map[string]bool) {
	u.mu.Lock()
	u.taskTools = tools
	u.mu.Unlock()
}

// needsTask reports whether a call of the upstream's tool (its own name)
// must be made as a task.
func (u *upstream) needsTask(tool string) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.taskTools[tool]
}
