package sandbox

import (
	"errors"
	"reflect"
	"strconv"
	"strings"

	"github.com/dop251/goja"
	"github.com/dop251/goja/ast"
	gojatoken "github.com/dop251/goja/token"
	"github.com/dop251/goja/unistring"
)

// A catchable stack overflow. V8 throws RangeError "Maximum call stack size exceeded" at the
// frame that goes too deep, and a catch below it gets it. goja raises a *StackOverflowError
// instead: an uncatchable Go error (baseUncatchableException) that its vm.handleThrow turns
// into no JS exception, popping every JS try frame without running its catch or finally, up
// to the nearest point where Go called into JavaScript (a Callable's vm.try). There, and only
// there, it comes out as a Go error, and the JS frames that held the program's try are gone.
//
// So the sandbox puts such a point where a program catches: every call written inside a try
// block (not in a function nested in it) is compiled as a call of a native (tryCall,
// tryMethod) that makes the call through a Callable and, when it reports a stack overflow,
// throws V8's RangeError from there, into the frame of that try. A recursion whose calls sit
// in try blocks is caught at its deepest one, as in V8; a try around the first call of a
// plain recursion catches the overflow once the frames above it are gone. What differs from
// V8: such a call takes two frames of the depth limit, not one; an overflow reached through
// what is not a call written in a try (new, a getter, a tagged template, a callback of a
// skipCallees method) unwinds, finally blocks unrun, to the nearest such call further out;
// and an error's stack lists the natives.
//
// The natives are parameters of the program's wrapper function under names no source can
// spell, so programs cannot see or shadow them; a program whose body reads `arguments` (which
// would count them) is left as it is.

// Names of the wrapper's hidden parameters.
const (
	tryCallName   = "%tryCall"
	tryMethodName = "%tryMethod"
)

// skipCallees are the globals whose methods' calls in try blocks stay direct, for speed
// (JSON.parse in a loop, await tools.x()): they seldom call back into the program.
var skipCallees = map[unistring.String]bool{
	"JSON": true, "Math": true, "console": true, "tools": true, "Object": true, "Number": true,
	"String": true, "Date": true, "Promise": true, "Intl": true, "Symbol": true, "BigInt": true,
}

// boundTryCalls rewrites the calls inside the try blocks of the program's wrapper function fn
// (parsed from text) into calls of the hidden natives, adding them as fn's parameters. It reports
// whether it rewrote any.
func boundTryCalls(fn *ast.FunctionLiteral, text string) bool {
	if !strings.Contains(text, "try") {
		return false
	}
	w := &tryWalker{seen: make(map[*ast.CallExpression]bool)}
	w.walk(reflect.ValueOf(fn.Body), false)
	if w.arguments || len(w.calls) == 0 {
		return false
	}
	for _, c := range w.calls {
		w.rewrite(c)
	}
	for _, name := range []unistring.String{tryCallName, tryMethodName} {
		fn.ParameterList.List = append(fn.ParameterList.List, &ast.Binding{Target: &ast.Identifier{Name: name, Idx: fn.ParameterList.Opening}})
	}
	return true
}

type tryWalker struct {
	seen      map[*ast.CallExpression]bool
	calls     []*ast.CallExpression // the calls to rewrite, in try blocks
	arguments bool                  // the body reads arguments
}

var (
	astPkg     = reflect.TypeOf(ast.Identifier{}).PkgPath()
	tryType    = reflect.TypeOf(&ast.TryStatement{})
	callType   = reflect.TypeOf(&ast.CallExpression{})
	chainType  = reflect.TypeOf(&ast.OptionalChain{})
	identType  = reflect.TypeOf(&ast.Identifier{})
	funcTypes  = map[reflect.Type]bool{reflect.TypeOf(&ast.FunctionLiteral{}): true, reflect.TypeOf(&ast.ArrowFunctionLiteral{}): true, reflect.TypeOf(&ast.ClassLiteral{}): true}
	identValue = reflect.TypeOf(ast.Identifier{})
)

// walk visits the AST nodes under v; inTry is whether v is inside a try block of the
// function being walked.
func (w *tryWalker) walk(v reflect.Value, inTry bool) {
	switch v.Kind() {
	case reflect.Interface, reflect.Pointer:
		if v.IsNil() {
			return
		}
		t := v.Type()
		if v.Kind() == reflect.Pointer {
			switch {
			case t == tryType:
				ts := v.Interface().(*ast.TryStatement)
				w.walk(reflect.ValueOf(ts.Body), true)
				w.walk(reflect.ValueOf(ts.Catch), inTry)
				w.walk(reflect.ValueOf(ts.Finally), inTry)
				return
			case t == chainType:
				inTry = false // a call in an optional chain may be short-circuited: left direct
			case funcTypes[t]:
				inTry = false
			case t == identType:
				if v.Interface().(*ast.Identifier).Name == "arguments" {
					w.arguments = true
				}
			case t == callType:
				c := v.Interface().(*ast.CallExpression)
				if w.seen[c] {
					return
				}
				w.seen[c] = true
				if inTry && w.rewritable(c) {
					w.calls = append(w.calls, c)
				}
			}
		}
		w.walk(v.Elem(), inTry)
	case reflect.Struct:
		t := v.Type()
		if t.PkgPath() != astPkg {
			return
		}
		if t == identValue {
			if v.Interface().(ast.Identifier).Name == "arguments" {
				w.arguments = true
			}
			return
		}
		for i := 0; i < v.NumField(); i++ {
			if t.Field(i).Name == "DeclarationList" {
				continue // the same declarations again, hoisted
			}
			w.walk(v.Field(i), inTry)
		}
	case reflect.Slice:
		for i := 0; i < v.Len(); i++ {
			w.walk(v.Index(i), inTry)
		}
	}
}

// rewritable reports whether a call is one to route through a native: not eval (it would
// become an indirect eval), super, import() or a method of skipCallees.
func (w *tryWalker) rewritable(c *ast.CallExpression) bool {
	switch callee := c.Callee.(type) {
	case *ast.Identifier:
		return callee.Name != "eval"
	case *ast.DotExpression:
		if id, ok := callee.Left.(*ast.Identifier); ok && skipCallees[id.Name] {
			return false
		}
		_, super := callee.Left.(*ast.SuperExpression)
		return !super
	case *ast.BracketExpression:
		_, super := callee.Left.(*ast.SuperExpression)
		return !super
	case *ast.SuperExpression, *ast.PrivateDotExpression, *ast.Optional:
		return false
	}
	return true
}

// rewrite makes c a call of a native: f(a) → %tryCall("f", f, void 0, a); o.m(a) →
// %tryCall("o.m", o.m, o, a) when o is a name or this (reading it twice changes nothing);
// x.y.m(a) → %tryMethod("x.y.m", x.y, "m", a), which looks m up after the arguments are
// evaluated (V8 before). The first argument is the callee as written, for V8's "… is not a
// function". Positions stay the call's own.
func (w *tryWalker) rewrite(c *ast.CallExpression) {
	at := c.Callee.Idx0()
	name := &ast.StringLiteral{Idx: at, Value: unistring.NewFromString(calleeText(c.Callee))}
	var args []ast.Expression
	switch callee := c.Callee.(type) {
	case *ast.DotExpression:
		if plainReceiver(callee.Left) {
			args = []ast.Expression{name, callee, callee.Left}
			c.Callee = &ast.Identifier{Name: tryCallName, Idx: at}
			break
		}
		key := &ast.StringLiteral{Idx: callee.Identifier.Idx, Value: callee.Identifier.Name}
		args = []ast.Expression{name, callee.Left, key}
		c.Callee = &ast.Identifier{Name: tryMethodName, Idx: at}
	case *ast.BracketExpression:
		if plainReceiver(callee.Left) {
			args = []ast.Expression{name, callee, callee.Left}
			c.Callee = &ast.Identifier{Name: tryCallName, Idx: at}
			break
		}
		args = []ast.Expression{name, callee.Left, callee.Member}
		c.Callee = &ast.Identifier{Name: tryMethodName, Idx: at}
	default:
		undefined := &ast.UnaryExpression{Operator: gojatoken.VOID, Idx: at, Operand: &ast.NumberLiteral{Idx: at, Literal: "0", Value: int64(0)}}
		args = []ast.Expression{name, callee, undefined}
		c.Callee = &ast.Identifier{Name: tryCallName, Idx: at}
	}
	c.ArgumentList = append(args, c.ArgumentList...)
}

// plainReceiver reports whether evaluating e twice is the same as once: a name or this.
func plainReceiver(e ast.Expression) bool {
	switch e.(type) {
	case *ast.Identifier, *ast.ThisExpression:
		return true
	}
	return false
}

// calleeText names a callee as V8's messages do ("o.a.b is not a function", "o[k]",
// "f(...)", "1", "(intermediate value)").
func calleeText(e ast.Expression) string {
	switch x := e.(type) {
	case *ast.Identifier:
		return x.Name.String()
	case *ast.ThisExpression:
		return "this"
	case *ast.DotExpression:
		return calleeText(x.Left) + "." + x.Identifier.Name.String()
	case *ast.BracketExpression:
		switch m := x.Member.(type) {
		case *ast.StringLiteral:
			return calleeText(x.Left) + "." + m.Value.String()
		case *ast.NumberLiteral:
			return calleeText(x.Left) + "[" + m.Literal + "]"
		case *ast.Identifier:
			return calleeText(x.Left) + "[" + m.Name.String() + "]"
		}
	case *ast.CallExpression:
		return calleeText(x.Callee) + "(...)"
	case *ast.NumberLiteral:
		return x.Literal
	case *ast.StringLiteral:
		return strconv.Quote(x.Value.String())
	case *ast.BooleanLiteral:
		return strconv.FormatBool(x.Value)
	case *ast.NullLiteral:
		return "null"
	}
	return "(intermediate value)"
}

// tryCallNatives are the hidden parameters' values for a run.
func (r *run) tryCallNatives() []goja.Value {
	call := r.function("call", func(call goja.FunctionCall) goja.Value {
		fn, ok := goja.AssertFunction(call.Argument(1))
		if !ok {
			panic(r.rt.NewTypeError(call.Argument(0).String() + " is not a function"))
		}
		return r.overflowCatchable(fn(call.Argument(2), call.Arguments[min(3, len(call.Arguments)):]...))
	})
	method := r.function("call", func(call goja.FunctionCall) goja.Value {
		this := call.Argument(1)
		if goja.IsUndefined(this) || goja.IsNull(this) {
			panic(r.rt.NewTypeError("Cannot read properties of " + this.String() + " (reading '" + call.Argument(2).String() + "')"))
		}
		o := this.ToObject(r.rt)
		var f goja.Value
		if sym, ok := call.Argument(2).(*goja.Symbol); ok {
			f = o.GetSymbol(sym)
		} else {
			f = o.Get(call.Argument(2).String())
		}
		fn, ok := goja.AssertFunction(f)
		if !ok {
			panic(r.rt.NewTypeError(call.Argument(0).String() + " is not a function"))
		}
		return r.overflowCatchable(fn(this, call.Arguments[min(3, len(call.Arguments)):]...))
	})
	return []goja.Value{call, method}
}

// overflowCatchable returns what a call gave, throwing what it threw; a stack overflow is
// thrown as V8's RangeError, which the program can catch.
func (r *run) overflowCatchable(v goja.Value, err error) goja.Value {
	if err == nil {
		return v
	}
	var so *goja.StackOverflowError
	if errors.As(err, &so) {
		e, nerr := r.rt.New(r.rt.Get("RangeError"), r.rt.ToValue("Maximum call stack size exceeded"))
		must(nerr)
		panic(e)
	}
	panic(err)
}
