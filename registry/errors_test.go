package registry_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/codemode/codemode/registry"
)

// cyclicErr wraps itself: errors.Is would loop forever on it.
type cyclicErr struct{}

func (e *cyclicErr) Error() string { return "cyclic" }
func (e *cyclicErr) Unwrap() error { return e }

// unwrapPanics panics in Unwrap, Is and As.
type unwrapPanics struct{}

func (unwrapPanics) Error() string { return "hostile" }
func (unwrapPanics) Unwrap() error { panic("unwrap") }
func (unwrapPanics) Is(error) bool { panic("is") }
func (unwrapPanics) As(any) bool   { panic("as") }

// uncomparable cannot be compared with ==.
type uncomparable struct{ list []int }

func (uncomparable) Error() string { return "uncomparable" }

func TestErrorIsAndAsAreTotal(t *testing.T) {
	re := &registry.Error{Code: registry.CodeDenied, Message: "no"}
	wrapped := fmt.Errorf("outer: %w", errors.Join(io.EOF, re))
	if !registry.ErrorIs(wrapped, io.EOF) || registry.ErrorIs(wrapped, context.Canceled) {
		t.Error("ErrorIs disagrees with errors.Is on an ordinary chain")
	}
	if got, ok := registry.ErrorAs[*registry.Error](wrapped); !ok || got != re {
		t.Errorf("ErrorAs = %v, %v", got, ok)
	}
	for name, err := range map[string]error{
		"cycle":        &cyclicErr{},
		"panics":       unwrapPanics{},
		"uncomparable": uncomparable{list: []int{1}},
		"wrapped":      fmt.Errorf("x: %w", unwrapPanics{}),
		"nil":          nil,
	} {
		if registry.ErrorIs(err, context.Canceled) {
			t.Errorf("%s: ErrorIs matched", name)
		}
		if _, ok := registry.ErrorAs[*registry.Error](err); ok {
			t.Errorf("%s: ErrorAs matched", name)
		}
	}
	// Two uncomparable values are never "the same error" (errors.Is agrees).
	if registry.ErrorIs(uncomparable{}, uncomparable{}) {
		t.Error("uncomparable errors matched")
	}
}

func TestSafeStringOfHostileValues(t *testing.T) {
	m := map[string]any{}
	m["self"] = m
	type node struct{ next *node }
	n := &node{}
	n.next = n
	for name, v := range map[string]any{"self-map": m, "self-pointer": n} {
		if got := registry.SafeString(v); !strings.Contains(got, "unprintable") {
			t.Errorf("%s: SafeString = %q", name, got)
		}
	}
	long := registry.SafeString(errors.New(strings.Repeat("é", 1<<20)))
	if len(long) > 17<<10 || !strings.Contains(long, "more bytes") {
		t.Errorf("a 2 MiB message came back as %d bytes", len(long))
	}
}
