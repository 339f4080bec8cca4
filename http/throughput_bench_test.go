package httpapi_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/codemode/codemode/app"
	"github.com/codemode/codemode/config"
	httpapi "github.com/codemode/codemode/http"
)

// throughputServer serves the real service (app.New with a SQLite store and
// the given isolation, httpapi.New, Serve on a loopback listener) until the
// benchmark ends, and returns its base URL, or "" and the reason when the
// build refuses the isolation.
func throughputServer(b *testing.B, isolation string) (string, error) {
	b.Helper()
	cfg := config.Default()
	cfg.Store = "sqlite://" + filepath.Join(b.TempDir(), "bench.db")
	cfg.Isolation = isolation
	if err := cfg.Validate(); err != nil {
		b.Fatal(err)
	}
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	a, err := app.New(context.Background(), cfg, app.Options{Logger: logger})
	if err != nil {
		return "", err
	}
	srv, err := httpapi.New(a, httpapi.Options{Logger: logger})
	if err != nil {
		a.Close()
		b.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		a.Close()
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, ln) }()
	b.Cleanup(func() {
		cancel()
		if err := <-served; err != nil {
			b.Error(err)
		}
		a.Close()
	})
	return "http://" + ln.Addr().String(), nil
}

// BenchmarkThroughput drives the real service with parallel keep-alive
// clients: path=run/isolation=* is POST /v1/run of a trivial program (a new
// session per run, SQLite log), and the floor, path=healthz, is GET /healthz
// over the same client. Compare ns/op (the inverse of requests per second);
// target: in-process run throughput ≥ 25% of healthz throughput. RunParallel
// uses GOMAXPROCS clients; vary them with -cpu.
func BenchmarkThroughput(b *testing.B) {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64, DisableCompression: true}}
	defer client.CloseIdleConnections()
	drive := func(b *testing.B, method, url, body string) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				req, err := http.NewRequest(method, url, strings.NewReader(body))
				if err != nil {
					b.Error(err)
					return
				}
				req.Header.Set("Content-Type", "application/json")
				resp, err := client.Do(req)
				if err != nil {
					b.Error(err)
					return
				}
				out, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if err != nil || resp.StatusCode != http.StatusOK {
					b.Errorf("%s %s: %d %s %v", method, url, resp.StatusCode, out, err)
					return
				}
			}
		})
	}
	urls := map[string]string{}
	reasons := map[string]error{}
	for _, iso := range []string{"inproc", "process"} {
		urls[iso], reasons[iso] = throughputServer(b, iso)
	}
	if reasons["inproc"] != nil {
		b.Fatal(reasons["inproc"])
	}
	for _, iso := range []string{"inproc", "process"} {
		b.Run("path=run/isolation="+iso, func(b *testing.B) {
			if reasons[iso] != nil {
				b.Skipf("isolation %s: %v", iso, reasons[iso])
			}
			drive(b, http.MethodPost, urls[iso]+"/v1/run", `{"code": "return 1"}`)
		})
	}
	b.Run("path=healthz", func(b *testing.B) {
		drive(b, http.MethodGet, urls["inproc"]+"/healthz", "")
	})
}
