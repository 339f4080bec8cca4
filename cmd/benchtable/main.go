package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"regexp"
	"runtime/pprof"
	"time"

	"github.com/codemode/codemode/internal/gcfloor"
)

// options are the command-line flags.
type options struct {
	rounds         int
	roundTime      time.Duration
	httpTime       time.Duration
	conns          int
	peerIterations int
	node           string
	postgres       string
	tmpfs          string
	only           string
	cpuprofile     string
	json           bool
	markdown       bool
}

// group is a set of figures measured together (their rounds alternate).
type group struct {
	name string
	run  func(*env) ([]Row, error)
}

var groups = []group{
	{"runs", runFigures},
	{"isolation", isolationFigures},
	{"sdk", sdkFigures},
	{"typescript", typescriptFigures},
	{"log", logFigures},
	{"http", httpFigures},
	{"gating", gatingFigures},
	{"history", historyFigures},
	{"catalog", catalogFigures},
	{"interp", interpFigures},
}

func main() {
	var o options
	flag.IntVar(&o.rounds, "rounds", 5, "rounds per figure; each figure is the median of its rounds")
	flag.DurationVar(&o.roundTime, "round", 200*time.Millisecond, "length of one round of a timed op (log rounds are twice this)")
	flag.DurationVar(&o.httpTime, "http", time.Second, "length of one round of HTTP load")
	flag.IntVar(&o.conns, "conns", 8, "connections of the HTTP load generator")
	flag.IntVar(&o.peerIterations, "peer-iterations", 1000, "runs of each program per round of the Node peer")
	flag.StringVar(&o.node, "node", "node", "Node.js executable for the peer; empty skips the peer")
	flag.StringVar(&o.postgres, "postgres", os.Getenv("CODEMODE_TEST_POSTGRES_URL"), "PostgreSQL URL for the log figure; empty skips it")
	flag.StringVar(&o.tmpfs, "tmpfs", defaultTmpfs(), "a tmpfs directory for SQLite without fsync (the split of the log's cost); empty skips it")
	flag.StringVar(&o.only, "only", "", "measure only the groups matching this regexp (runs, isolation, sdk, typescript, log, http, gating, history, catalog, interp)")
	flag.StringVar(&o.cpuprofile, "cpuprofile", "", "write a CPU profile of the measurements to this file")
	flag.BoolVar(&o.json, "json", false, "print JSON instead of the table")
	flag.BoolVar(&o.markdown, "markdown", false, "print the table as Markdown")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: go run ./bench [flags]\n\nMeasures codemode's performance figures beside their floors and prints one table.\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() > 0 || o.rounds < 1 || o.roundTime <= 0 || o.httpTime <= 0 || o.conns < 1 || o.peerIterations < 1 {
		flag.Usage()
		os.Exit(2)
	}
	gcfloor.Start() // as codemode serve does: the service's default configuration
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run(o options) error {
	only, err := regexp.Compile(o.only)
	if err != nil {
		return fmt.Errorf("-only: %w", err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	dir, err := os.MkdirTemp("", "codemode-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)

	m := machine()
	e := &env{ctx: ctx, o: o, dir: dir, machine: &m}
	if o.cpuprofile != "" {
		f, err := os.Create(o.cpuprofile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	var rows []Row
	for _, g := range groups {
		if !only.MatchString(g.name) {
			continue
		}
		start := time.Now()
		rs, err := g.run(e)
		if err != nil {
			return fmt.Errorf("%s: %w", g.name, err)
		}
		fmt.Fprintf(os.Stderr, "bench: %s measured in %.1fs\n", g.name, time.Since(start).Seconds())
		rows = append(rows, rs...)
	}
	m.LoadAfter = loadAverage()
	rep := Report{Machine: m, Rows: rows}
	if o.json {
		return writeJSON(os.Stdout, rep)
	}
	return writeTable(os.Stdout, rep, o.markdown)
}

// defaultTmpfs is /dev/shm when it is a directory.
func defaultTmpfs() string {
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
		return "/dev/shm"
	}
	return ""
}
