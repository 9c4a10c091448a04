package scheduler

// CompareBool orders false before true, for the candidate orders the
// integrations model (cmp.Compare takes no bool).
func CompareBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}
