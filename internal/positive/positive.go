// Package positive holds the rule every limit and timeout of codemode
// follows: zero or a negative value means "unset", and takes the default.
package positive

// Or is v when it is above zero, else def.
func Or[T ~int | ~int64](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}
