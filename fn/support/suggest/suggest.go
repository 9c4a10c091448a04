// Package suggest finds the name a typo was meant to be (did you mean),
// for the profile's keys and the recipe's overrides alike.
package suggest

import "strings"

// Closest returns the candidate with the smallest edit distance to got
// (case differences cost nothing extra over one edit), if it is close
// enough to be a typo: at most a third of the word, and at least one.
func Closest(got string, candidates []string) string {
	best, bestD := "", -1
	for _, c := range candidates {
		d := editDistance(strings.ToLower(got), strings.ToLower(c))
		if d == 0 {
			d = 1 // a case difference
		}
		if bestD < 0 || d < bestD {
			best, bestD = c, d
		}
	}
	limit := len(got) / 3
	if limit < 1 {
		limit = 1
	}
	if bestD < 0 || bestD > limit {
		return ""
	}
	return best
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
