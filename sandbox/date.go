package sandbox

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/dop251/goja"

	"github.com/codemode/codemode/sandbox/intl"
)

// Where goja's Date prints otherwise than V8: toISOString of years before 0 or after 9999
// (V8 writes six digits and a sign, +010000-01-01T00:00:00.000Z, -000001-…; goja five and
// four) and the zone name toString and toTimeString end with (V8 writes ICU's long name,
// "Coordinated Universal Time", "Eastern Standard Time"; goja Go's abbreviation, "UTC",
// "EST"). goja's local time is Go's time.Local, the host's zone.

// localZone is the IANA name of time.Local's zone, read as Go reads it: TZ when set (empty:
// UTC), else where /etc/localtime links to; "" when neither names one.
var localZone = sync.OnceValue(func() string {
	if tz, ok := os.LookupEnv("TZ"); ok {
		if tz = strings.TrimPrefix(tz, ":"); tz == "" {
			return "UTC"
		}
		if _, name, ok := strings.Cut(tz, "zoneinfo/"); ok {
			return name
		}
		return tz
	}
	if target, err := os.Readlink("/etc/localtime"); err == nil {
		if _, name, ok := strings.Cut(target, "zoneinfo/"); ok {
			return name
		}
	}
	return ""
})

// longZoneName puts V8's zone name at the end of goja's toString of t, s ("… GMT-0500 (EST)").
func longZoneName(s string, t time.Time) string {
	open := strings.LastIndex(s, " (")
	if open < 0 || !strings.HasSuffix(s, ")") {
		return s
	}
	name := intl.ZoneLongName(localZone(), t)
	if name == "" && s[open:] == " (UTC)" {
		name = "Coordinated Universal Time"
	}
	if name == "" {
		return s
	}
	return s[:open] + " (" + name + ")"
}

// isoString is Date.prototype.toISOString of t.
func isoString(t time.Time) string {
	t = t.UTC()
	rest := t.Format("-01-02T15:04:05.000Z")
	switch y := t.Year(); {
	case y < 0:
		return fmt.Sprintf("-%06d", -y) + rest
	case y > 9999:
		return fmt.Sprintf("+%06d", y) + rest
	default:
		return fmt.Sprintf("%04d", y) + rest
	}
}

// installDate replaces Date.prototype.toISOString, toString and toTimeString with V8's
// renderings (toJSON and string conversion go through them).
func installDate(h platformHost) error {
	return tryJS(h, func() {
		rt := h.runtime()
		proto := rt.Get("Date").ToObject(rt).Get("prototype").(*goja.Object)
		wrap := func(name string, fn func(this *goja.Object, native goja.Callable, call goja.FunctionCall) goja.Value) {
			native, ok := goja.AssertFunction(proto.Get(name))
			if !ok {
				panic("sandbox: Date.prototype." + name + " is not a function")
			}
			must(defineMethod(h, proto, name, 0, func(call goja.FunctionCall) goja.Value {
				this, _ := call.This.(*goja.Object)
				return fn(this, native, call)
			}))
		}
		wrap("toISOString", func(this *goja.Object, native goja.Callable, call goja.FunctionCall) goja.Value {
			if this != nil && this.ClassName() == "Date" {
				if t, ok := this.Export().(time.Time); ok {
					return rt.ToValue(isoString(t))
				}
			}
			v, err := native(call.This) // an invalid date or not a date: goja's errors are V8's
			must(err)
			return v
		})
		longZone := func(this *goja.Object, native goja.Callable, call goja.FunctionCall) goja.Value {
			v, err := native(call.This)
			must(err)
			if this != nil && this.ClassName() == "Date" {
				if t, ok := this.Export().(time.Time); ok {
					return rt.ToValue(longZoneName(v.String(), t))
				}
			}
			return v
		}
		wrap("toString", longZone)
		wrap("toTimeString", longZone)
	})
}
