//go:build !unix

package mcp

import "testing"

func stopProcess(t *testing.T, _ int) func() {
	t.Skip("stopping a process needs SIGSTOP")
	return nil
}
