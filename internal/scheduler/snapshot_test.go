package scheduler

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/rest"
)

// The fleet's reads reach the server once each and are answered the same
// after; every other read reaches the server every time.
func TestFleetSnapshotAnswersTheFleetOnce(t *testing.T) {
	hits := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits[r.URL.Path]++
		_, _ = io.WriteString(w, r.URL.Path+" read")
	}))
	defer srv.Close()
	var snap FleetSnapshot
	hc, err := rest.HTTPClientFor(snap.Config(&rest.Config{Host: srv.URL}))
	require.NoError(t, err)
	for _, tc := range []struct {
		path string
		hits int
	}{
		{"/api/v1/nodes", 1},
		{"/apis/resource.k8s.io/v1/resourceslices", 1},
		{"/apis/resource.k8s.io/v1/deviceclasses", 1},
		{"/api/v1/pods", 3},
		{"/apis/resource.k8s.io/v1/resourceclaims", 3},
	} {
		for range 3 {
			resp, err := hc.Get(srv.URL + tc.path)
			require.NoError(t, err)
			body, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			require.NoError(t, resp.Body.Close())
			assert.Equal(t, tc.path+" read", string(body))
		}
		assert.Equal(t, tc.hits, hits[tc.path], tc.path)
	}
}
