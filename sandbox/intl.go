package sandbox

import "github.com/codemode/codemode/sandbox/intl"

// installIntl is the "intl" platform feature: Intl (ECMA-402, package sandbox/intl) as a lazy
// global, built on the first read, and the locale methods of the built-ins the program names
// (toLocaleString, toLocaleDateString, toLocaleTimeString, localeCompare, toLocaleUpperCase,
// toLocaleLowerCase; see Program.locale) routed through it. The default locale is en-US and
// the default time zone UTC, whatever the host's.
func (r *run) installIntl() error {
	return intl.Install(r.rt, &intl.Options{Builtins: r.prog.locale, SkipBuiltins: r.prog.locale == 0})
}
