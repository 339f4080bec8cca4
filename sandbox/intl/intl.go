package intl

import (
	"fmt"
	"math"
	"reflect"
	"strings"
	"time"

	"github.com/dop251/goja"
)

// Options configure Install. The zero value (or nil) gives the sandbox defaults.
type Options struct {
	// Locale is the default locale, used when a program names none or none it names is
	// supported; "" means "en-US". An invalid or unsupported tag falls back to "en-US".
	Locale string
	// TimeZone is the default time zone of DateTimeFormat and the Date toLocale* methods,
	// an IANA name or an offset; "" (or an unknown name) means "UTC".
	TimeZone string
	// Now is the clock DateTimeFormat.prototype.format uses when given no date; nil uses
	// time.Now.
	Now func() time.Time
	// Builtins is the set of built-ins whose locale methods Install replaces; zero means
	// all of them (unless SkipBuiltins). Replacing them is most of what Install costs, so
	// an embedder that knows the program's source passes BuiltinsFor(source).
	Builtins Builtins
	// SkipBuiltins leaves every built-in's locale methods as goja has them.
	SkipBuiltins bool
	// MaxStringLength, when positive, bounds the string Array.prototype.toLocaleString
	// builds (in bytes) below the package's own bound: an embedder's memory budget.
	MaxStringLength int
}

// env is the per-runtime state of the installed Intl: the intrinsics it was installed
// with and the constructors it has built. It belongs to the runtime's goroutine.
type env struct {
	rt   *goja.Runtime
	opts Options

	rangeError *goja.Object // the global RangeError, read on first use

	defLocale *langTag // resolved on first use

	intl      *goja.Object
	collators map[string]*collator    // localeCompare's, by options key
	joining   map[*goja.Object]bool   // arrays in Array.prototype.toLocaleString, for cycles
	protos    map[string]*goja.Object // Intl constructor name → its prototype
	ctors     map[string]*goja.Object
}

// Install defines Intl in rt's global scope and routes the locale-sensitive built-ins
// (Number, BigInt, Date, String and Array toLocale* methods and localeCompare) through
// it. Intl itself is a lazy global: the object is built the first time a program reads
// it, and then becomes an ordinary writable, configurable property. Install must run
// before the program does, so that the built-ins it replaces are the runtime's own. The
// CLDR tables are loaded once per process, on first use, and shared read-only by every
// runtime.
func Install(rt *goja.Runtime, opts *Options) error {
	e := &env{rt: rt}
	if opts != nil {
		e.opts = *opts
	}
	global := rt.GlobalObject()
	accessor := e.fn("Intl", 0, func(call goja.FunctionCall) goja.Value {
		v := call.Argument(0)
		if len(call.Arguments) == 0 {
			v = e.intlObject()
		}
		if err := global.DefineDataProperty("Intl", v, goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE); err != nil {
			panic(err)
		}
		return v
	})
	if err := global.DefineAccessorProperty("Intl", accessor, accessor, goja.FLAG_TRUE, goja.FLAG_FALSE); err != nil {
		return fmt.Errorf("intl: define Intl: %w", err)
	}
	if e.opts.SkipBuiltins {
		return nil
	}
	set := e.opts.Builtins
	if set == 0 {
		set = AllBuiltins
	}
	return e.installBuiltins(set)
}

// Preload loads the tables every use of Intl needs (the supplemental data and the en and
// root locales) now rather than on first use. Loading keeps a few MB live for the life of
// the process, which a memory watchdog that attributes heap growth to the runs executing
// meanwhile would charge to whichever runs were executing: a process that runs programs
// with small memory budgets side by side can preload at start.
func Preload() error {
	if _, err := supplemental(); err != nil {
		return err
	}
	for _, tag := range []string{"und", "en"} {
		if _, err := loadLocale(tag); err != nil {
			return err
		}
	}
	return nil
}

// fn makes a native function with the given name and length. A Go panic inside f that is
// not a JavaScript throw becomes a TypeError, so no Go value or type name reaches the
// program.
func (e *env) fn(name string, length int, f func(goja.FunctionCall) goja.Value) *goja.Object {
	o := e.rt.ToValue(func(call goja.FunctionCall) goja.Value {
		defer e.recoverInternal(name)
		return f(call)
	}).(*goja.Object)
	e.setNameLength(o, name, length)
	return o
}

func (e *env) setNameLength(o *goja.Object, name string, length int) {
	must(o.DefineDataProperty("name", e.rt.ToValue(name), goja.FLAG_FALSE, goja.FLAG_TRUE, goja.FLAG_FALSE))
	if length != 0 { // goja makes native functions with length 0
		must(o.DefineDataProperty("length", e.rt.ToValue(length), goja.FLAG_FALSE, goja.FLAG_TRUE, goja.FLAG_FALSE))
	}
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}

// recoverInternal turns a Go panic that is not one of goja's own into a TypeError.
func (e *env) recoverInternal(where string) {
	x := recover()
	if x == nil {
		return
	}
	switch x.(type) {
	case goja.Value, *goja.Exception, *goja.InterruptedError, *goja.StackOverflowError:
		panic(x)
	}
	if t := reflect.TypeOf(x); t != nil {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if t.PkgPath() == "github.com/dop251/goja" {
			panic(x)
		}
	}
	panic(e.rt.NewTypeError("internal error in " + where))
}

// throwRange throws a RangeError. The constructor is the global RangeError as it was
// the first time one was thrown (reading it at Install would make every runtime build the
// Error classes); should a program have replaced it with something that fails, the error
// is a TypeError with the same message.
func (e *env) throwRange(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if e.rangeError == nil {
		e.rangeError, _ = e.rt.GlobalObject().Get("RangeError").(*goja.Object)
	}
	if e.rangeError != nil {
		if o, err := e.rt.New(e.rangeError, e.rt.ToValue(msg)); err == nil {
			panic(o)
		}
	}
	panic(e.rt.NewTypeError(msg))
}

func (e *env) throwType(format string, args ...any) {
	panic(e.rt.NewTypeError(fmt.Sprintf(format, args...)))
}

// clip shortens a program-supplied string for an error message.
func clip(s string) string {
	const max = 64
	if len(s) <= max {
		return s
	}
	r := []rune(s)
	if len(r) <= max {
		return s
	}
	return string(r[:max]) + "…"
}

// intlObject builds the Intl namespace object.
func (e *env) intlObject() *goja.Object {
	if e.intl != nil {
		return e.intl
	}
	if _, err := supplemental(); err != nil {
		e.throwType("Intl is unavailable: %v", err)
	}
	rt := e.rt
	e.intl = rt.NewObject()
	e.protos = map[string]*goja.Object{}
	e.ctors = map[string]*goja.Object{}
	must(e.intl.DefineDataPropertySymbol(goja.SymToStringTag, rt.ToValue("Intl"), goja.FLAG_FALSE, goja.FLAG_TRUE, goja.FLAG_FALSE))
	e.method(e.intl, "supportedValuesOf", 1, e.supportedValuesOf)
	e.method(e.intl, "getCanonicalLocales", 1, func(call goja.FunctionCall) goja.Value {
		tags := e.canonicalizeLocaleList(call.Argument(0))
		vals := make([]any, len(tags))
		for i, t := range tags {
			vals[i] = t.String()
		}
		return rt.NewArray(vals...)
	})
	// Each constructor is built on its first read, like Intl itself: a program that uses
	// NumberFormat does not pay for Segmenter.
	for _, c := range []struct {
		name    string
		install func()
	}{
		{"Collator", e.installCollator}, {"DateTimeFormat", e.installDateTimeFormat},
		{"DisplayNames", e.installDisplayNames}, {"ListFormat", e.installListFormat},
		{"Locale", e.installLocale}, {"NumberFormat", e.installNumberFormat},
		{"PluralRules", e.installPluralRules}, {"RelativeTimeFormat", e.installRelativeTimeFormat},
		{"Segmenter", e.installSegmenter},
	} {
		c := c
		accessor := e.fn(c.name, 0, func(call goja.FunctionCall) goja.Value {
			if len(call.Arguments) > 0 {
				must(e.intl.DefineDataProperty(c.name, call.Argument(0), goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE))
				return goja.Undefined()
			}
			if e.ctors[c.name] == nil {
				c.install()
			}
			return e.ctors[c.name]
		})
		must(e.intl.DefineAccessorProperty(c.name, accessor, accessor, goja.FLAG_TRUE, goja.FLAG_FALSE))
	}
	return e.intl
}

// method defines a non-enumerable method on o.
func (e *env) method(o *goja.Object, name string, length int, f func(goja.FunctionCall) goja.Value) {
	must(o.DefineDataProperty(name, e.fn(name, length, f), goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE))
}

// getter defines a non-enumerable accessor property with only a getter on o.
func (e *env) getter(o *goja.Object, name string, f func(goja.FunctionCall) goja.Value) {
	must(o.DefineAccessorProperty(name, e.fn("get "+name, 0, f), nil, goja.FLAG_TRUE, goja.FLAG_FALSE))
}

// boundGetter defines proto[name] as ECMA-402 defines format and compare: a getter
// returning a function bound to the instance, made on first use and the same one after.
// call receives the instance's state.
func (e *env) boundGetter(proto *goja.Object, kind, name string, length int, call func(state any, c goja.FunctionCall) goja.Value) {
	e.getter(proto, name, func(get goja.FunctionCall) goja.Value {
		s := e.receiver(get, kind, name)
		if s.bound == nil {
			state := s.state
			s.bound = e.fn("", length, func(c goja.FunctionCall) goja.Value { return call(state, c) })
		}
		return s.bound
	})
}

// class defines Intl[name] as a constructor. construct receives the arguments and the
// prototype of the new instance (from new.target) and returns the instance; callable says
// whether calling it without new is allowed (NumberFormat, DateTimeFormat, Collator).
func (e *env) class(name string, length int, callable bool, construct func(args []goja.Value, proto *goja.Object) *goja.Object) (ctor, proto *goja.Object) {
	full := "Intl." + name
	ctor = e.rt.ToValue(func(call goja.ConstructorCall) *goja.Object {
		defer e.recoverInternal(full)
		// goja tells a construction from a call only by the receiver: new (and super)
		// hand over a fresh object that inherits from the prototype; a call hands over
		// its this (Intl for Intl.PluralRules()).
		p := proto
		constructed := false
		if call.This != nil {
			for q := call.This.Prototype(); q != nil; q = q.Prototype() {
				if q == proto {
					constructed = true
					p = call.This.Prototype()
					break
				}
			}
		}
		if !constructed && !callable {
			e.throwType("Constructor %s requires 'new'", full)
		}
		return construct(call.Arguments, p)
	}).(*goja.Object)
	e.setNameLength(ctor, name, length)
	proto = ctor.Get("prototype").(*goja.Object)
	must(ctor.DefineDataProperty("prototype", proto, goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_FALSE))
	must(proto.DefineDataPropertySymbol(goja.SymToStringTag, e.rt.ToValue(full), goja.FLAG_FALSE, goja.FLAG_TRUE, goja.FLAG_FALSE))
	must(e.intl.DefineDataProperty(name, ctor, goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE))
	e.protos[name] = proto
	e.ctors[name] = ctor
	return ctor, proto
}

// localeClass defines Intl[name] as class does, for a service over the locales of
// avail: construct returns a new instance's state from the constructor's arguments, and
// the constructor gets supportedLocalesOf. It returns the prototype.
func (e *env) localeClass(name string, length int, callable bool, avail availability, construct func(args []goja.Value) any) *goja.Object {
	ctor, proto := e.class(name, length, callable, func(args []goja.Value, proto *goja.Object) *goja.Object {
		return e.instance(name, construct(args), proto)
	})
	e.method(ctor, "supportedLocalesOf", 1, e.supportedLocales(avail))
	return proto
}

// resolveArgs reads a constructor's locales and options arguments as ListFormat and
// Segmenter do (the options through GetOptionsObject, then their localeMatcher) and
// resolves the locale among avail's, with no extension keys.
func (e *env) resolveArgs(args []goja.Value, service string, avail availability) (resolved, *goja.Object) {
	requested := e.canonicalizeLocaleList(arg(args, 0))
	o := e.getOptionsObject(arg(args, 1))
	e.localeMatcher(o, service)
	return e.resolveLocale(requested, avail, nil), o
}

// stateMethod defines proto[name] as a method of kind's instances: f receives the
// receiver's state (a TypeError for any other receiver).
func stateMethod[S any](e *env, proto *goja.Object, kind, name string, length int, f func(s S, call goja.FunctionCall) goja.Value) {
	e.method(proto, name, length, func(call goja.FunctionCall) goja.Value {
		return f(e.receiver(call, kind, name).state.(S), call)
	})
}

// formatService is an ECMA-402 format service, as NumberFormat and DateTimeFormat are:
// its instances' state S formats values V, single or as a range.
type formatService[S, V any] struct {
	name      string // Intl[name]
	construct func(locales, options goja.Value) S
	value     func(goja.Value) V // the argument of format and formatToParts, converted
	format    func(S, V) string
	parts     func(S, V) []part
	// rangeParts converts the arguments of formatRange and formatRangeToParts and lays
	// out the range.
	rangeParts      func(s S, start, end goja.Value) []rangePart
	resolvedOptions func(S) *goja.Object
}

// installFormat defines Intl[svc.name], callable without new, with supportedLocalesOf
// and, on its prototype, the format getter (bound) and the methods formatToParts,
// formatRange, formatRangeToParts and resolvedOptions.
func installFormat[S, V any](e *env, svc formatService[S, V]) {
	avail := generalAvailable(mustSupplemental())
	proto := e.localeClass(svc.name, 0, true, avail, func(args []goja.Value) any {
		return svc.construct(arg(args, 0), arg(args, 1))
	})
	e.boundGetter(proto, svc.name, "format", 1, func(state any, call goja.FunctionCall) goja.Value {
		return e.rt.ToValue(svc.format(state.(S), svc.value(call.Argument(0))))
	})
	stateMethod(e, proto, svc.name, "formatToParts", 1, func(s S, call goja.FunctionCall) goja.Value {
		return e.partsArray(svc.parts(s, svc.value(call.Argument(0))), "")
	})
	stateMethod(e, proto, svc.name, "formatRange", 2, func(s S, call goja.FunctionCall) goja.Value {
		var b strings.Builder
		for _, p := range svc.rangeParts(s, call.Argument(0), call.Argument(1)) {
			b.WriteString(p.value)
		}
		return e.rt.ToValue(b.String())
	})
	stateMethod(e, proto, svc.name, "formatRangeToParts", 2, func(s S, call goja.FunctionCall) goja.Value {
		return e.rangePartsArray(svc.rangeParts(s, call.Argument(0), call.Argument(1)))
	})
	stateMethod(e, proto, svc.name, "resolvedOptions", 0, func(s S, _ goja.FunctionCall) goja.Value {
		return svc.resolvedOptions(s)
	})
}

// slots are an Intl object's internal slots. The object is a goja dynamic object whose
// own properties live in props; the Go state (never handed to the program) is in state.
type slots struct {
	kind  string
	state any
	bound *goja.Object // the bound format or compare function, made on first use
	props map[string]goja.Value
	keys  []string
}

var slotsType = reflect.TypeOf((*slots)(nil))

func (s *slots) Get(k string) goja.Value { return s.props[k] }
func (s *slots) Has(k string) bool       { _, ok := s.props[k]; return ok }
func (s *slots) Keys() []string          { return s.keys }
func (s *slots) Set(k string, v goja.Value) bool {
	if s.props == nil {
		s.props = map[string]goja.Value{}
	}
	if _, ok := s.props[k]; !ok {
		s.keys = append(s.keys, k)
	}
	s.props[k] = v
	return true
}
func (s *slots) Delete(k string) bool {
	if _, ok := s.props[k]; ok {
		delete(s.props, k)
		for i, key := range s.keys {
			if key == k {
				s.keys = append(s.keys[:i], s.keys[i+1:]...)
				break
			}
		}
	}
	return true
}

// instance makes an object of an Intl class holding state.
func (e *env) instance(kind string, state any, proto *goja.Object) *goja.Object {
	o := e.rt.NewDynamicObject(&slots{kind: kind, state: state})
	must(o.SetPrototype(proto))
	return o
}

// slotsOf returns v's slots if it is an instance of kind, or nil.
func slotsOf(v goja.Value, kind string) *slots {
	o, ok := v.(*goja.Object)
	if !ok || o.ExportType() != slotsType {
		return nil
	}
	s := o.Export().(*slots)
	if s.kind != kind {
		return nil
	}
	return s
}

// receiver returns this's slots or throws the TypeError of a method called on the wrong
// kind of object.
func (e *env) receiver(call goja.FunctionCall, kind, method string) *slots {
	if s := slotsOf(call.This, kind); s != nil {
		return s
	}
	e.throwType("Method Intl.%s.prototype.%s called on incompatible receiver %s", kind, method, e.describe(call.This))
	return nil
}

func (e *env) describe(v goja.Value) string {
	switch {
	case v == nil || goja.IsUndefined(v):
		return "undefined"
	case goja.IsNull(v):
		return "null"
	}
	if o, ok := v.(*goja.Object); ok {
		if _, ok := goja.AssertFunction(o); ok {
			return "function"
		}
		return "#<Object>"
	}
	return clip(v.String())
}

// ---- options (ECMA-402 GetOption and friends) ----

// optionsObject is ECMA-402 CoerceOptionsToObject: undefined → an empty object, anything
// else → ToObject.
func (e *env) coerceOptions(v goja.Value) *goja.Object {
	if v == nil || goja.IsUndefined(v) {
		return nil
	}
	if goja.IsNull(v) {
		e.throwType("Cannot convert undefined or null to object")
	}
	return v.ToObject(e.rt)
}

// getOptionsObject is ECMA-402 GetOptionsObject: undefined → empty, an object → itself,
// anything else → TypeError.
func (e *env) getOptionsObject(v goja.Value) *goja.Object {
	if v == nil || goja.IsUndefined(v) {
		return nil
	}
	if o, ok := v.(*goja.Object); ok {
		return o
	}
	e.throwType("Options must be an object")
	return nil
}

func getValue(o *goja.Object, name string) goja.Value {
	if o == nil {
		return goja.Undefined()
	}
	v := o.Get(name)
	if v == nil {
		return goja.Undefined()
	}
	return v
}

// stringOption reads a string option; "" and false for undefined. A value outside values
// (when given) is a RangeError naming the service.
func (e *env) stringOption(o *goja.Object, name, service string, values []string, fallback string) string {
	v := getValue(o, name)
	if goja.IsUndefined(v) {
		return fallback
	}
	s := e.toString(v)
	if values != nil {
		for _, a := range values {
			if s == a {
				return s
			}
		}
		e.throwRange("Value %s out of range for %s options property %s", clip(s), service, name)
	}
	return s
}

// toString is ECMA-262 ToString (a Symbol is a TypeError).
func (e *env) toString(v goja.Value) string {
	if _, ok := v.(*goja.Symbol); ok {
		e.throwType("Cannot convert a Symbol value to a string")
	}
	return v.String()
}

// boolOption reads a boolean option: 0 undefined, 1 false, 2 true.
func boolOption(o *goja.Object, name string) int {
	v := getValue(o, name)
	if goja.IsUndefined(v) {
		return 0
	}
	if v.ToBoolean() {
		return 2
	}
	return 1
}

// numberOption is ECMA-402 GetNumberOption: undefined gives fallback; NaN or a value outside
// [min, max] is a RangeError.
func (e *env) numberOption(o *goja.Object, name string, min, max, fallback int) int {
	return e.defaultNumber(getValue(o, name), name, min, max, fallback)
}

// defaultNumber is ECMA-402 DefaultNumberOption.
func (e *env) defaultNumber(v goja.Value, name string, min, max, fallback int) int {
	if goja.IsUndefined(v) {
		return fallback
	}
	f := v.ToFloat()
	if math.IsNaN(f) || f < float64(min) || f > float64(max) {
		e.throwRange("%s value is out of range.", name)
	}
	return int(math.Floor(f))
}

// ---- locales ----

// maxLocales bounds a requested-locales list.
const maxLocales = 1000

// localeTag is the canonical tag v names: an Intl.Locale's, an object's string or a string.
// Anything else throws a TypeError saying notALocale; a string that is no tag, a RangeError.
func (e *env) localeTag(v goja.Value, s *supplementalData, notALocale string) langTag {
	var str string
	if ls := slotsOf(v, "Locale"); ls != nil {
		str = ls.state.(*localeObject).tag.String()
	} else if o, ok := v.(*goja.Object); ok {
		str = e.toString(o)
	} else if goja.IsString(v) {
		str = v.String()
	} else {
		e.throwType("%s", notALocale)
	}
	t, ok := canonicalTag(str, s)
	if !ok {
		e.throwRange("Incorrect locale information provided")
	}
	return t
}

// canonicalizeLocaleList is ECMA-402 CanonicalizeLocaleList.
func (e *env) canonicalizeLocaleList(v goja.Value) []langTag {
	if v == nil || goja.IsUndefined(v) {
		return nil
	}
	s := mustSupplemental()
	var out []langTag
	add := func(item goja.Value) {
		t := e.localeTag(item, s, "Language ID should be string or object.")
		for _, o := range out {
			if o.String() == t.String() {
				return
			}
		}
		out = append(out, t)
	}
	if goja.IsString(v) || slotsOf(v, "Locale") != nil {
		add(v)
		return out
	}
	if goja.IsNull(v) {
		e.throwType("Cannot convert undefined or null to object")
	}
	o := v.ToObject(e.rt)
	n := toLength(o.Get("length"))
	if n > maxLocales {
		e.throwRange("Too many locales: %d (at most %d)", n, maxLocales)
	}
	for i := int64(0); i < n; i++ {
		if v := o.Get(fmt.Sprint(i)); v != nil {
			add(v)
		}
	}
	return out
}

func toLength(v goja.Value) int64 {
	if v == nil {
		return 0
	}
	f := v.ToFloat()
	if math.IsNaN(f) || f <= 0 {
		return 0
	}
	if f > 1<<53-1 {
		return 1<<53 - 1
	}
	return int64(f)
}

// defaultLocale is the runtime's default locale, canonical and available.
func (e *env) defaultLocale() langTag {
	if e.defLocale == nil {
		s := mustSupplemental()
		t, ok := canonicalTag(e.opts.Locale, s)
		if !ok || bestAvailable(generalAvailable(s), t.baseName()) == "" {
			t, _ = canonicalTag("en-US", s)
		}
		t.uKeys, t.uAttrs, t.others, t.private = nil, nil, nil, ""
		e.defLocale = &t
	}
	return *e.defLocale
}

// localesKey is the part of a formatter cache key that the requested locales decide; an
// empty request is decided by the runtime's default locale.
func (e *env) localesKey(requested []langTag) string {
	if len(requested) == 0 {
		return "default:" + e.defaultLocale().String() + "|"
	}
	var b strings.Builder
	for _, r := range requested {
		b.WriteString(r.String())
		b.WriteByte(',')
	}
	b.WriteByte('|')
	return b.String()
}

// resolved is the outcome of ECMA-402 ResolveLocale.
type resolved struct {
	tag    langTag           // the resolved locale, with the supported extension keywords
	data   string            // the data file locale
	values map[string]string // relevant extension key → chosen value ("" for absent)
}

// keySpec describes one relevant extension key of a service: the values it supports for
// a locale (the first is the default) and the option that may override it.
type keySpec struct {
	key      string
	option   string // the option value read from the options, "" for none given
	hasOpt   bool
	supports func(dataLocale, value string) bool
	def      func(dataLocale string) string
}

// resolveLocale negotiates the requested locales against what avail offers (lookup and
// best fit both behave as lookup, which is what V8 does for the tags it knows) and picks
// the relevant extension values.
func (e *env) resolveLocale(requested []langTag, avail availability, keys []keySpec) resolved {
	s := mustSupplemental()
	var found langTag
	var base string
	for _, r := range requested {
		if b := bestAvailable(avail, r.baseName()); b != "" {
			found = r
			base = b
			break
		}
	}
	if base == "" {
		found = e.defaultLocale()
		base = found.baseName()
		if !avail(base) {
			if b := bestAvailable(avail, base); b != "" {
				base = b
			}
		}
	}
	res := resolved{values: map[string]string{}}
	bt, _ := parseTag(base)
	bt.script, bt.region = properCase(bt.script, bt.region)
	res.tag = bt
	res.data = dataLocale(s, base)
	for _, k := range keys {
		value := k.def(res.data)
		addition := false
		if v, ok := found.keyword(k.key); ok {
			if v == "" {
				v = "true"
			}
			if k.supports(res.data, v) {
				value = v
				addition = true
			}
		}
		if k.hasOpt && k.supports(res.data, k.option) {
			if k.option != value {
				value = k.option
				addition = false
			}
		}
		if addition {
			kv := value
			if kv == "true" {
				kv = ""
			}
			res.tag.uKeys = append(res.tag.uKeys, keyword{k.key, kv})
		}
		res.values[k.key] = value
	}
	return res
}

func properCase(script, region string) (string, string) {
	if script != "" {
		script = strings.ToUpper(script[:1]) + script[1:]
	}
	return script, strings.ToUpper(region)
}

// supportedLocalesOf is ECMA-402 SupportedLocales.
func (e *env) supportedLocales(avail availability) func(goja.FunctionCall) goja.Value {
	return func(call goja.FunctionCall) goja.Value {
		requested := e.canonicalizeLocaleList(call.Argument(0))
		opts := e.coerceOptions(call.Argument(1))
		e.stringOption(opts, "localeMatcher", "Intl", []string{"lookup", "best fit"}, "best fit")
		var vals []any
		for _, r := range requested {
			if bestAvailable(avail, r.baseName()) != "" {
				vals = append(vals, r.String())
			}
		}
		return e.rt.NewArray(vals...)
	}
}

// localeMatcher reads and validates the localeMatcher option.
func (e *env) localeMatcher(o *goja.Object, service string) {
	e.stringOption(o, "localeMatcher", service, []string{"lookup", "best fit"}, "best fit")
}

// isWellFormedType reports whether s is a Unicode extension type: (3*8alphanum) *("-" (3*8alphanum)).
func isWellFormedType(s string) bool {
	if s == "" {
		return false
	}
	for _, p := range strings.Split(s, "-") {
		if len(p) < 3 || len(p) > 8 || !isAlnum(asciiLower(p)) {
			return false
		}
	}
	return true
}

// newObject makes a plain object with the given properties in order.
func (e *env) object(kv ...any) *goja.Object {
	o := e.rt.NewObject()
	for i := 0; i+1 < len(kv); i += 2 {
		must(o.Set(kv[i].(string), kv[i+1]))
	}
	return o
}
