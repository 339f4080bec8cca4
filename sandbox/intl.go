package sandbox

import "github.com/codemode/codemode/sandbox/intl"

// installIntl is the "intl" platform feature: Intl (ECMA-402, package sandbox/intl) as a lazy
// global, built on the first read, and the locale methods of the built-ins the program names
// (toLocaleString, toLocaleDateString, toLocaleTimeString, localeCompare, toLocaleUpperCase,
// toLocaleLowerCase; see Program.locale) routed through it. The default locale is en-US and
// the default time zone UTC, whatever the host's.
//
// Features install after the guards, so Intl's Array.prototype.toLocaleString replaces a
// guarded one: it is guarded again here, by the same receiver-length guard.
func (r *run) installIntl() error {
	err := intl.Install(r.rt, &intl.Options{
		Builtins:        r.prog.locale,
		SkipBuiltins:    r.prog.locale == 0,
		MaxStringLength: int(min(r.caps.stringLength, 1<<30)),
		Now:             r.now,
	})
	if err != nil || r.prog.locale&intl.BuiltinArray == 0 {
		return err
	}
	for i, w := range walkers {
		for _, m := range w.methods {
			if m == "toLocaleString" && r.prog.guards&(guardWalkers<<i) != 0 {
				_, arrayProto := r.intrinsics()
				return r.guards.guardMethod(arrayProto, m, 0, r.guards.guardWalk(m))
			}
		}
	}
	return nil
}
