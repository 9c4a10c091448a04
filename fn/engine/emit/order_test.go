package emit

import (
	"testing"

	"github.com/stretchr/testify/require"
	"helm.sh/helm/v3/pkg/releaseutil"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/rendered"
)

// The copy of Helm's install order is Helm's: the chart's `helm template`
// and `nrl-k8s render` sort documents the same way only while it is.
func TestKindOrderIsHelms(t *testing.T) {
	require.Equal(t, []string(releaseutil.InstallOrder), kindOrder)
}

// Known kinds by Helm's rank, unknown kinds after them by name, render
// order kept within a kind.
func TestOrder(t *testing.T) {
	docs := []rendered.Doc{
		{Kind: "ResourceClaimTemplate", Name: "a"}, {Kind: "RayJob", Name: "j"},
		{Kind: "Deployment", Name: "d"}, {Kind: "Service", Name: "s2"},
		{Kind: "ComputeDomain", Name: "c"}, {Kind: "Service", Name: "s1"},
	}
	Order(docs)
	var got []string
	for _, d := range docs {
		got = append(got, d.Kind+"/"+d.Name)
	}
	require.Equal(t, []string{"Service/s2", "Service/s1", "Deployment/d", "ComputeDomain/c", "RayJob/j", "ResourceClaimTemplate/a"}, got)
}
