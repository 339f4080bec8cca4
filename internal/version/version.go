// Package version is the one source of the build's version: set by the
// linker (make build/install pass -ldflags "-X …/version.value=v1.2.3"),
// else the main module's version when built with go install module@version,
// else "dev" with the VCS revision when the build recorded one.
package version

import (
	"runtime/debug"
	"sync"
)

// value is overridden at link time: -X github.com/codemode/codemode/internal/version.value=v1.2.3
var value string

var once = sync.OnceValue(func() string {
	if value != "" {
		return value
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "dev"
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	rev, dirty := "", false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return "dev"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if dirty {
		rev += "-dirty"
	}
	return "dev+" + rev
})

// String is the build's version, for example "v0.3.0" or "dev+1a2b3c4d5e6f".
func String() string { return once() }

// GoVersion is the Go release the binary was built with.
func GoVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		return bi.GoVersion
	}
	return "unknown"
}
