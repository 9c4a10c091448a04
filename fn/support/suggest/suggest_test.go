package suggest

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestClosest: the nearest candidate when it is within a third of the
// word (at least one edit); a case difference is one edit; the first of
// equally near candidates wins.
func TestClosest(t *testing.T) {
	keys := []string{"serviceAccount", "imagePullSecrets", "image", "labels", "env"}
	for _, tc := range []struct{ name, got, want string }{
		{"one edit", "serviceAcount", "serviceAccount"},
		{"case only", "IMAGE", "image"},
		{"a third of the word", "imagPulSecrt", "imagePullSecrets"},
		{"more than a third", "imagPulScrt", ""},
		{"a short word, one edit", "en", "env"},
		{"a short word, two edits", "e", ""},
		{"nothing near", "somethingElse", ""},
	} {
		t.Run(tc.name, func(t *testing.T) { assert.Equal(t, tc.want, Closest(tc.got, keys)) })
	}
	assert.Empty(t, Closest("image", nil), "no candidates")
	assert.Equal(t, "label", Closest("Labels", []string{"label", "labels"}), "a case difference is an edit")
	assert.Equal(t, "bx", Closest("ba", []string{"bx", "xa"}), "the first of equally near candidates")
}

func TestEditDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{{"", "", 0}, {"", "abc", 3}, {"kitten", "sitting", 3}, {"flaw", "lawn", 2}, {"abc", "abc", 0}} {
		assert.Equal(t, tc.want, editDistance(tc.a, tc.b), "%s %s", tc.a, tc.b)
		assert.Equal(t, tc.want, editDistance(tc.b, tc.a), "%s %s", tc.b, tc.a)
	}
}
