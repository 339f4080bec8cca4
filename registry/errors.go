package registry

import (
	"fmt"
	"reflect"
	"unicode/utf8"
)

// The functions here are total: whatever error or panic value a tool, hook,
// wrapper or observer produced (one whose Error, Unwrap, Is or As panics, a
// chain that cycles, a panic value that refers to itself), they return an
// answer and never panic, hang on the chain or recurse without bound.

// maxErrorText bounds the text SafeString returns.
const maxErrorText = 16 << 10

// maxChain bounds how many errors ErrorIs and ErrorAs look at in a chain.
const maxChain = 64

// SafeString renders any value (an error, a panic value, nil) as text of at
// most 16 KiB. It never panics: a value whose Error or String method panics,
// or that cannot be printed safely, gets a fallback naming its type.
func SafeString(v any) (s string) {
	defer func() {
		if recover() != nil {
			s = fmt.Sprintf("unprintable %T value", v)
		}
		s = clip(s)
	}()
	switch x := v.(type) {
	case nil:
		return "nil"
	case error:
		return x.Error()
	case fmt.Stringer:
		return x.String()
	case string:
		return x
	}
	// fmt would recurse without bound on a value that contains itself.
	if !acyclic(reflect.ValueOf(v), 0, map[uintptr]bool{}, new(int)) {
		return fmt.Sprintf("unprintable %T value (it refers to itself or is too large)", v)
	}
	return fmt.Sprint(v)
}

// acyclic reports whether fmt can print v in bounded time: no pointer,
// map or slice on a path refers back to one above it, at most 32 levels and
// 10,000 values.
func acyclic(v reflect.Value, depth int, onPath map[uintptr]bool, count *int) bool {
	if *count++; *count > 10000 || depth > 32 {
		return false
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice:
		if v.IsNil() {
			return true
		}
		p := v.Pointer()
		if onPath[p] {
			return false
		}
		onPath[p] = true
		defer delete(onPath, p)
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		return v.IsNil() || acyclic(v.Elem(), depth+1, onPath, count)
	case reflect.Slice, reflect.Array:
		for i := 0; i < v.Len(); i++ {
			if !acyclic(v.Index(i), depth+1, onPath, count) {
				return false
			}
		}
	case reflect.Map:
		for it := v.MapRange(); it.Next(); {
			if !acyclic(it.Key(), depth+1, onPath, count) || !acyclic(it.Value(), depth+1, onPath, count) {
				return false
			}
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if !acyclic(v.Field(i), depth+1, onPath, count) {
				return false
			}
		}
	}
	return true
}

func clip(s string) string {
	if len(s) <= maxErrorText {
		return s
	}
	cut := maxErrorText
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf("… (%d more bytes)", len(s)-cut)
}

// ErrorIs is errors.Is made total: it looks at no more than 64 errors of the
// chain, and an error whose Unwrap or Is panics (or that cannot be compared)
// counts as no match.
func ErrorIs(err, target error) bool {
	found := false
	walkChain(err, func(e error) bool {
		if equalError(e, target) {
			found = true
		} else if x, ok := e.(interface{ Is(error) bool }); ok && safeCall(func() bool { return x.Is(target) }) {
			found = true
		}
		return found
	})
	return found
}

// ErrorAs is errors.As made total, returning the first error of the chain
// that is a T (or claims to be, through an As method).
func ErrorAs[T any](err error) (T, bool) {
	var out T
	found := false
	walkChain(err, func(e error) bool {
		if t, ok := e.(T); ok {
			out, found = t, true
		} else if x, ok := e.(interface{ As(any) bool }); ok {
			var t T
			if safeCall(func() bool { return x.As(&t) }) {
				out, found = t, true
			}
		}
		return found
	})
	return out, found
}

// walkChain visits err and the errors it wraps, depth first as errors.Is
// does, until visit returns true or 64 errors were seen.
func walkChain(err error, visit func(error) bool) {
	stack := []error{err}
	for seen := 0; len(stack) > 0 && seen < maxChain; seen++ {
		e := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if e == nil {
			continue
		}
		if visit(e) {
			return
		}
		stack = append(stack, unwrapSafely(e)...)
	}
}

func unwrapSafely(e error) (out []error) {
	defer func() {
		if recover() != nil {
			out = nil
		}
	}()
	switch x := e.(type) {
	case interface{ Unwrap() error }:
		return []error{x.Unwrap()}
	case interface{ Unwrap() []error }:
		list := x.Unwrap()
		rev := make([]error, len(list))
		for i, e := range list { // pushed in reverse: the first is visited first
			rev[len(list)-1-i] = e
		}
		return rev
	}
	return nil
}

func equalError(a, b error) (eq bool) {
	defer func() {
		if recover() != nil {
			eq = false
		}
	}()
	return reflect.TypeOf(a).Comparable() && a == b
}

func safeCall(f func() bool) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	return f()
}
