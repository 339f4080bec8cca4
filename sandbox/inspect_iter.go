package sandbox

import (
	"regexp"

	"github.com/dop251/goja"
)

// Map and Set iterators, shown as Node shows them: [Map Iterator] { 'a', 'b' },
// [Map Entries] { [ 'a', 1 ] }, [Set Iterator] { 1 }. V8 lets Node read what an iterator has
// left without advancing it; goja does not, and does not say whether an iterator gives entries
// or keys. So, for programs that log and make such iterators, the methods that make them
// record the kind of each iterator they return (in a WeakMap), and the console reads an
// iterator by running it (to its end, or for inspectReads values) and keeping what it gave:
// from then on, the iterator's own next (a property of that iterator only) gives those values
// back before asking the native iterator again. The differences from V8 it leaves: an iterator
// the console ran to its end does not see entries the program adds to the collection
// afterwards, and past inspectReads values the count of those not shown is short.

// iteratorPreviewUse selects the feature: a program that logs and makes an iterator by name.
var iteratorPreviewUse = regexp.MustCompile(`\bconsole\b[\s\S]*(?:\.(?:entries|keys|values)\b|Symbol\.iterator)|(?:\.(?:entries|keys|values)\b|Symbol\.iterator)[\s\S]*\bconsole\b`)

// iteratorPreview is what the console read of one iterator.
type iteratorPreview struct {
	pending  []goja.Value // the values the iterator gave the console and has yet to give the program
	keyValue bool         // an entries iterator: each value is a [key, value] pair
}

// installIteratorPreview wraps Map.prototype.entries, keys, values and @@iterator, and Set's,
// to record the kind of the iterators they make.
func (r *run) installIteratorPreview() error {
	return tryJS(r, func() {
		kinds, err := r.rt.New(r.rt.Get("WeakMap"))
		must(err)
		set, ok := goja.AssertFunction(kinds.Get("set"))
		if !ok {
			panic("sandbox: WeakMap.prototype.set is not a function")
		}
		get, _ := goja.AssertFunction(kinds.Get("get"))
		r.inspected.iteratorKinds = func(it *goja.Object) (keyValue, known bool) {
			v, err := get(kinds, it)
			if err != nil || goja.IsUndefined(v) {
				return false, false
			}
			return v.ToBoolean(), true
		}
		wrap := func(proto *goja.Object, name string, keyValue bool) goja.Value {
			orig, ok := goja.AssertFunction(proto.Get(name))
			if !ok {
				panic("sandbox: " + name + " is not a function")
			}
			kind := r.rt.ToValue(keyValue)
			f := r.function(name, func(call goja.FunctionCall) goja.Value {
				it, err := orig(call.This)
				must(err)
				_, err = set(kinds, it, kind)
				must(err)
				return it
			}).(*goja.Object)
			must(f.DefineDataProperty("length", r.rt.ToValue(0), goja.FLAG_FALSE, goja.FLAG_TRUE, goja.FLAG_FALSE))
			return f
		}
		define := func(proto *goja.Object, name string, f goja.Value) {
			must(proto.DefineDataProperty(name, f, goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE))
		}
		mapProto := r.rt.Get("Map").ToObject(r.rt).Get("prototype").(*goja.Object)
		entries := wrap(mapProto, "entries", true)
		define(mapProto, "entries", entries)
		must(mapProto.DefineDataPropertySymbol(goja.SymIterator, entries, goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE))
		define(mapProto, "keys", wrap(mapProto, "keys", false))
		define(mapProto, "values", wrap(mapProto, "values", false))

		setProto := r.rt.Get("Set").ToObject(r.rt).Get("prototype").(*goja.Object)
		values := wrap(setProto, "values", false)
		define(setProto, "values", values)
		define(setProto, "keys", values)
		must(setProto.DefineDataPropertySymbol(goja.SymIterator, values, goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE))
		define(setProto, "entries", wrap(setProto, "entries", true))
	})
}

// iteratorPreview reads what Map or Set iterator o has left, the first time the console
// shows it; nil when o is not an iterator whose kind was recorded.
func (r *run) iteratorPreview(o *goja.Object) *iteratorPreview {
	if p, ok := r.inspected.iteratorPreviews[o]; ok {
		return p
	}
	if r.inspected.iteratorKinds == nil {
		return nil
	}
	keyValue, known := r.inspected.iteratorKinds(o)
	if !known {
		return nil
	}
	n := r.inspectNatives()
	next := n.setIteratorNext
	if inherits(o, n.mapIteratorProto) {
		next = n.mapIteratorNext
	}
	// At most inspectReads values are read (the rest stay with the native iterator, which the
	// replaying next goes on to): past that, "... N more items" counts only those.
	p := &iteratorPreview{keyValue: keyValue}
	for len(p.pending) < inspectReads {
		res, err := next(o)
		must(err)
		step := res.(*goja.Object)
		if step.Get("done").ToBoolean() {
			break
		}
		p.pending = append(p.pending, step.Get("value"))
	}
	replay := r.function("next", func(call goja.FunctionCall) goja.Value {
		if this, ok := call.This.(*goja.Object); ok && this == o && len(p.pending) > 0 {
			v := p.pending[0]
			p.pending = p.pending[1:]
			step := r.rt.NewObject()
			must(step.Set("value", v))
			must(step.Set("done", false))
			return step
		}
		v, err := next(call.This)
		must(err)
		return v
	})
	must(o.DefineDataProperty("next", replay, goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE))
	if r.inspected.iteratorPreviews == nil {
		r.inspected.iteratorPreviews = make(map[*goja.Object]*iteratorPreview)
	}
	r.inspected.iteratorPreviews[o] = p
	return p
}
