package main

import (
	"strings"
	"testing"
)

const sample = `{"Action":"start","Package":"example/a"}
{"Action":"run","Package":"example/a","Test":"TestPass"}
{"Action":"output","Package":"example/a","Test":"TestPass","Output":"=== RUN   TestPass\n"}
{"Action":"output","Package":"example/a","Test":"TestPass","Output":"--- PASS: TestPass (0.00s)\n"}
{"Action":"pass","Package":"example/a","Test":"TestPass"}
{"Action":"run","Package":"example/a","Test":"TestDB"}
{"Action":"output","Package":"example/a","Test":"TestDB","Output":"=== RUN   TestDB\n"}
{"Action":"output","Package":"example/a","Test":"TestDB","Output":"    db_test.go:9: PostgreSQL tests skipped: nothing on 127.0.0.1:5432\n"}
{"Action":"output","Package":"example/a","Test":"TestDB","Output":"--- SKIP: TestDB (0.00s)\n"}
{"Action":"skip","Package":"example/a","Test":"TestDB"}
{"Action":"output","Package":"example/a","Output":"PASS\n"}
{"Action":"output","Package":"example/a","Output":"ok  \texample/a\t0.01s\n"}
{"Action":"pass","Package":"example/a"}
{"Action":"run","Package":"example/b","Test":"TestBad"}
{"Action":"output","Package":"example/b","Test":"TestBad","Output":"=== RUN   TestBad\n"}
{"Action":"output","Package":"example/b","Test":"TestBad","Output":"    b_test.go:3: got 1, want 2\n"}
{"Action":"output","Package":"example/b","Test":"TestBad","Output":"--- FAIL: TestBad (0.00s)\n"}
{"Action":"fail","Package":"example/b","Test":"TestBad"}
{"Action":"output","Package":"example/b","Output":"FAIL\n"}
{"Action":"output","Package":"example/b","Output":"FAIL\texample/b\t0.01s\n"}
{"Action":"fail","Package":"example/b"}
{"ImportPath":"example/c","Action":"build-output","Output":"c.go:1:1: syntax error\n"}
not json at all
`

func TestSummarize(t *testing.T) {
	var b strings.Builder
	if err := summarize(strings.NewReader(sample), &b); err != nil {
		t.Fatal(err)
	}
	got := b.String()
	for _, want := range []string{
		"ok  \texample/a\t0.01s\n",
		"    b_test.go:3: got 1, want 2\n--- FAIL: TestBad",
		"FAIL\texample/b\t0.01s\n",
		"c.go:1:1: syntax error\n",
		"not json at all\n",
		"\nskipped 1 tests:\n  example/a TestDB: db_test.go:9: PostgreSQL tests skipped: nothing on 127.0.0.1:5432\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	for _, absent := range []string{"TestPass", "\nPASS\n"} {
		if strings.Contains(got, absent) {
			t.Errorf("output has %q:\n%s", absent, got)
		}
	}
	if !strings.HasSuffix(got, "127.0.0.1:5432\n") {
		t.Errorf("the skip list is not last:\n%s", got)
	}
}
