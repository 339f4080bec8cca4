package sandbox

import (
	"fmt"
	"strings"
)

// checkNesting bounds a program's brackets before the parser sees it: at
// most MaxBrackets opening brackets in all, and at most MaxNesting open at
// once (template bodies and their ${…} holes count), found by the package's
// scanner (scan.go), which skips comments, strings and regular expressions.
// The scanner is a guard, not a parser: MaxBrackets bounds what any
// mis-scan could hide.
func checkNesting(src string) *Failure {
	if n := strings.Count(src, "(") + strings.Count(src, "[") + strings.Count(src, "{"); n > MaxBrackets {
		return &Failure{Kind: KindSyntax, Message: fmt.Sprintf("program has %d opening brackets; the limit is %d", n, MaxBrackets)}
	}
	var f *Failure
	scanCode(src, scanHooks{open: func(open, line int) bool {
		if open > MaxNesting {
			f = &Failure{Kind: KindSyntax, Message: fmt.Sprintf("brackets nest deeper than %d levels (at line %d)", MaxNesting, line)}
			return false
		}
		return true
	}})
	return f
}
