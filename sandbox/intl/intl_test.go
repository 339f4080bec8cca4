package intl

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/dop251/goja"
)

type recordedCase struct {
	Expr    string `json:"expr"`
	Value   string `json:"value"`
	Error   string `json:"error"`
	Message string `json:"message"`
}

// knownDifferences reads the "## known:" marks of cases.txt.
func knownDifferences(t *testing.T) map[string]string {
	b, err := os.ReadFile("testdata/cases.txt")
	if err != nil {
		t.Fatal(err)
	}
	known := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		expr, reason, ok := strings.Cut(strings.TrimSpace(line), "  ## known:")
		if ok {
			known[strings.TrimSpace(expr)] = strings.TrimSpace(reason)
		}
	}
	return known
}

func newRuntime(t testing.TB) *goja.Runtime {
	rt := goja.New()
	if err := Install(rt, nil); err != nil {
		t.Fatal(err)
	}
	return rt
}

// TestAgainstNode runs every case of testdata/cases.txt and compares it with what Node
// gave (testdata/expected.json, written by testdata/record.mjs).
func TestAgainstNode(t *testing.T) {
	b, err := os.ReadFile("testdata/expected.json")
	if err != nil {
		t.Fatal(err)
	}
	var rec struct {
		Cases []recordedCase `json:"cases"`
	}
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatal(err)
	}
	prelude, err := os.ReadFile("testdata/prelude.js")
	if err != nil {
		t.Fatal(err)
	}
	prog, err := goja.Compile("prelude.js", string(prelude), false)
	if err != nil {
		t.Fatal(err)
	}
	known := knownDifferences(t)
	failed := 0
	for _, c := range rec.Cases {
		rt := newRuntime(t)
		if _, err := rt.RunProgram(prog); err != nil {
			t.Fatal(err)
		}
		var got, gotErr string
		v, err := rt.RunString("__show(" + c.Expr + ")")
		if err != nil {
			if ex, ok := err.(*goja.Exception); ok {
				if o, ok := ex.Value().(*goja.Object); ok {
					gotErr = o.Get("name").String()
				} else {
					gotErr = ex.Value().String()
				}
				got = ex.Error()
			} else {
				t.Errorf("%s: %v", c.Expr, err)
				continue
			}
		} else {
			// goja's JSON.stringify escapes U+202F, which Node's writes as is.
			got = strings.ReplaceAll(v.String(), `\u202f`, "\u202f")
		}
		same := gotErr == c.Error && (c.Error != "" || got == c.Value)
		reason, isKnown := known[c.Expr]
		switch {
		case isKnown && same:
			t.Errorf("%s: marked as a known difference (%s) but now matches Node: drop the mark", c.Expr, reason)
		case isKnown:
			t.Logf("known difference: %s (%s): node %s%s, goja %s", c.Expr, reason, c.Value, c.Error, got)
		case !same:
			failed++
			want := c.Value
			if c.Error != "" {
				want = c.Error + ": " + c.Message
			}
			t.Errorf("%s\n  node: %s\n  goja: %s", c.Expr, want, got)
		}
	}
	if failed > 0 {
		t.Logf("%d of %d cases differ from Node", failed, len(rec.Cases))
	}
}

func TestBuiltinsFor(t *testing.T) {
	cases := []struct {
		src  string
		want Builtins
	}{
		{`return 1`, 0},
		{`return Intl.NumberFormat`, 0},
		{`return n.toLocaleString('de')`, BuiltinNumber | BuiltinBigInt | BuiltinDate | BuiltinArray},
		{`return d.toLocaleDateString()`, BuiltinDate},
		{`return a.localeCompare(b)`, BuiltinString},
		{`return s.toLocaleUpperCase('tr')`, BuiltinString},
		{`return eval(src)`, AllBuiltins},
		{`return new Function(src)()`, AllBuiltins},
	}
	for _, c := range cases {
		if got := BuiltinsFor(c.src); got != c.want {
			t.Errorf("BuiltinsFor(%q) = %b, want %b", c.src, got, c.want)
		}
	}
	// Only the chosen built-ins are replaced.
	rt := goja.New()
	if err := Install(rt, &Options{Builtins: BuiltinString}); err != nil {
		t.Fatal(err)
	}
	v, err := rt.RunString(`['a'.localeCompare('b', 'en'), typeof Intl, (1234.5).toLocaleString === Object.getPrototypeOf(1).toLocaleString]`)
	if err != nil {
		t.Fatal(err)
	}
	if got := v.String(); got != "-1,object,true" {
		t.Errorf("got %s", got)
	}
}

func TestDefaults(t *testing.T) {
	rt := goja.New()
	if err := Install(rt, &Options{Locale: "de-DE", TimeZone: "Europe/Berlin"}); err != nil {
		t.Fatal(err)
	}
	v, err := rt.RunString(`[(1234.5).toLocaleString(), new Date(Date.UTC(2024, 0, 2, 15, 4, 5)).toLocaleString(), new Intl.DateTimeFormat().resolvedOptions().timeZone, new Intl.NumberFormat().resolvedOptions().locale].join('|')`)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := v.String(), "1.234,5|2.1.2024, 16:04:05|Europe/Berlin|de-DE"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestZoneLongName: the zone names V8 ends Date.prototype.toString with (Node 24, en-US).
func TestZoneLongName(t *testing.T) {
	winter := time.Date(2024, 1, 15, 12, 0, 0, 0, time.UTC)
	summer := time.Date(2024, 7, 15, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		zone string
		at   time.Time
		want string
	}{
		{"UTC", winter, "Coordinated Universal Time"},
		{"Etc/UTC", winter, "Coordinated Universal Time"},
		{"America/New_York", winter, "Eastern Standard Time"},
		{"America/New_York", summer, "Eastern Daylight Time"},
		{"Europe/Berlin", summer, "Central European Summer Time"},
		{"Asia/Kolkata", winter, "India Standard Time"},
		{"Asia/Kathmandu", winter, "Nepal Time"},
		{"Nowhere/Else", winter, ""},
	}
	for _, tt := range tests {
		if got := ZoneLongName(tt.zone, tt.at); got != tt.want {
			t.Errorf("ZoneLongName(%q, %v) = %q, want %q", tt.zone, tt.at, got, tt.want)
		}
	}
}
