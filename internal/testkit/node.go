package testkit

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Missing skips the test for why, or fails it under CI (CI set), so that a
// broken install step cannot pass as skipped tests.
func Missing(t testing.TB, why string) {
	t.Helper()
	if os.Getenv("CI") != "" {
		t.Fatal(why + " (CI is set: this test must run)")
	}
	t.Skip(why)
}

// RequireNode returns the node binary, or calls Missing when Node.js is not
// installed or dir/node_modules lacks one of the npm packages pkgs.
func RequireNode(t testing.TB, dir string, pkgs ...string) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		Missing(t, "node is not installed: "+t.Name()+" needs Node.js")
	}
	for _, pkg := range pkgs {
		modules := filepath.Join(dir, "node_modules")
		if _, err := os.Stat(filepath.Join(modules, pkg, "package.json")); err != nil {
			Missing(t, modules+" lacks "+pkg+": run .ci/node-deps (npm ci)")
		}
	}
	return node
}
