package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestVersionIsStamped builds codemode with the -ldflags of the Makefile
// (read from it, so the two cannot drift) and checks that the binary
// reports the stamped version.
func TestVersionIsStamped(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: this test builds codemode")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is not on PATH: this test builds codemode")
	}
	mk, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^LDFLAGS := -X (\S+)=\$\(VERSION\)$`).FindSubmatch(mk)
	if m == nil {
		t.Fatal("the Makefile has no LDFLAGS := -X …=$(VERSION)")
	}
	for _, target := range []string{"build:", "install:"} {
		i := strings.Index(string(mk), "\n"+target)
		if i < 0 || !strings.Contains(strings.SplitN(string(mk)[i+1:], "\n\n", 2)[0], "-ldflags '$(LDFLAGS)'") {
			t.Errorf("make %s does not stamp the version", strings.TrimSuffix(target, ":"))
		}
	}
	bin := filepath.Join(t.TempDir(), "codemode")
	build := exec.Command(goTool, "build", "-ldflags", "-X "+string(m[1])+"=v9.8.7-test", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	for _, arg := range []string{"version", "--version", "-v"} {
		out, err := exec.Command(bin, arg).Output()
		if err != nil || !strings.HasPrefix(string(out), "codemode v9.8.7-test\n") {
			t.Errorf("codemode %s: %v %q", arg, err, out)
		}
	}
}
