package sandbox

import (
	"context"
	"errors"
)

// Runner runs program source to completion: compile it (JavaScript, or TypeScript when it is
// not valid JavaScript; see [CompileAuto]) and run it with the limits of opts, sending every
// tool call to host. A compile error is a Result whose Err has kind "syntax". Implementations
// are safe for concurrent use, never panic because of the program, and report every failure
// in Result.Err.
//
// [InProcess] runs programs in the calling process; the worker package runs each in a
// supervised worker process, with host staying in the caller's process.
type Runner interface {
	Run(ctx context.Context, source string, host Host, opts Options) Result
}

// InProcess is the Runner that compiles and runs programs in this process with [CompileAuto]
// and [Run]. It bounds what it can (see Options), but one goja runtime shares the process with
// everything else: a hostile program can still take the process down (deeply nested eval, for
// one). Use worker processes for programs nobody vouches for.
type InProcess struct{}

var _ Runner = InProcess{}

// Run compiles source and runs it.
func (InProcess) Run(ctx context.Context, source string, host Host, opts Options) Result {
	p, err := CompileAuto(source)
	if err != nil {
		var f *Failure
		if !errors.As(err, &f) {
			f = &Failure{Kind: KindSyntax, Message: err.Error()}
		}
		return Result{Err: f}
	}
	return Run(ctx, p, host, opts)
}

// CompileAuto compiles source as JavaScript, and as TypeScript when it is not valid
// JavaScript (type annotations are advisory and stripped). A program that is neither reports
// the TypeScript reading's syntax error, which knows annotations and so points at the real
// mistake.
func CompileAuto(source string) (*Program, error) {
	key := cacheKey(source, autoLang)
	if p := programs.get(key); p != nil {
		return p, nil // whichever language it compiled as, without failing as JavaScript again
	}
	p, err := compileAuto(source)
	if err == nil {
		programs.put(key, p)
	}
	return p, err
}

// autoLang keys CompileAuto's cache entries apart from Compile's.
const autoLang Lang = 255

func compileAuto(source string) (*Program, error) {
	p, err := Compile(source, JavaScript)
	if err == nil {
		return p, nil
	}
	var f *Failure
	if !errors.As(err, &f) || f.Kind != KindSyntax {
		return nil, err
	}
	if tp, terr := Compile(source, TypeScript); terr == nil {
		return tp, nil
	} else if errors.As(terr, &f) && f.Kind == KindSyntax {
		return nil, terr
	}
	return nil, err
}
