// Package editdist measures how far apart two names are, for "did you mean"
// suggestions (the nearest tool names of an unknown tool or of a glob that
// matches none).
package editdist

import "unicode/utf8"

// Distance is the Levenshtein distance of a and b in runes, or limit+1 as
// soon as it must exceed limit (so a long, unrelated name costs little).
func Distance(a, b string, limit int) int {
	if d := utf8.RuneCountInString(a) - utf8.RuneCountInString(b); d > limit || -d > limit {
		return limit + 1 // before anything is allocated
	}
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		best := cur[0]
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			best = min(best, cur[j])
		}
		if best > limit {
			return limit + 1
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
