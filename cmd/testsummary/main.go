// Command testsummary reads `go test -json` on standard input and prints
// what a reader of `go test` wants: each package's ok or FAIL line, the
// whole output of failing tests and build errors, and at the end every
// skipped test with its skip message. `make test` pipes into it; its exit
// status is 0 whatever the tests did, so the pipeline's status (with
// pipefail) is go test's.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
)

func main() {
	if err := summarize(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "testsummary:", err)
	}
}

// event is one line of test2json output.
type event struct {
	Action     string
	Package    string
	ImportPath string // build-output events
	Test       string
	Output     string
}

// skip is a skipped test and why.
type skip struct {
	pkg, test, why string
}

// summarize copies the interesting part of r's test events to w and ends
// with the skipped tests. A line that is not JSON (go vet or build output
// on old toolchains) is copied as it is.
func summarize(r io.Reader, w io.Writer) error {
	out := map[string][]string{} // pending output of each running test, by package and test
	var skips []skip
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if json.Unmarshal(line, &e) != nil || e.Action == "" {
			fmt.Fprintf(w, "%s\n", line)
			continue
		}
		key := e.Package + " " + e.Test
		switch {
		case e.Action == "build-output":
			fmt.Fprint(w, e.Output)
		case e.Test == "":
			// Package lines: "ok  pkg 1s", "FAIL pkg", "? pkg [no test files]";
			// the bare PASS of -v adds nothing.
			if e.Action == "output" && e.Output != "PASS\n" {
				fmt.Fprint(w, e.Output)
			}
		case e.Action == "output":
			out[key] = append(out[key], e.Output)
		case e.Action == "fail":
			for _, l := range out[key] {
				fmt.Fprint(w, l)
			}
			delete(out, key)
		case e.Action == "skip":
			skips = append(skips, skip{e.Package, e.Test, skipMessage(out[key])})
			delete(out, key)
		case e.Action == "pass":
			delete(out, key)
		}
	}
	if len(skips) > 0 {
		fmt.Fprintf(w, "\nskipped %d tests:\n", len(skips))
		for _, s := range skips {
			fmt.Fprintf(w, "  %s %s: %s\n", s.pkg, s.test, s.why)
		}
	}
	return sc.Err()
}
