package manifest

import (
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/vocab"
)

// Known claims of worker pods are pointed at per-cluster, per-role
// templates; unknown claims and head pods are left alone.
func TestRewriteClaims(t *testing.T) {
	claims := func(names ...string) []corev1.PodResourceClaim {
		var out []corev1.PodResourceClaim
		for _, n := range names {
			out = append(out, corev1.PodResourceClaim{Name: n, ResourceClaimName: ptr("hand-made")})
		}
		return out
	}
	for _, tc := range []struct {
		name      string
		pods      [][]corev1.PodResourceClaim
		wantKinds []draKind
		wantNames []string
		template  map[string]string // claim name -> resourceClaimTemplateName after the rewrite
	}{
		{"both claims, two workers: one object each, first-seen order",
			[][]corev1.PodResourceClaim{claims(vocab.RoCEClaim, vocab.ComputeDomainClaim), claims(vocab.ComputeDomainClaim)},
			[]draKind{roceKind, computeDomainKind},
			[]string{"roce-c-training", "compute-domain-c-training"},
			map[string]string{vocab.ComputeDomainClaim: "compute-domain-c-training", vocab.RoCEClaim: "roce-c-training"}},
		{"InfiniBand is named for what it is, not roce-*",
			[][]corev1.PodResourceClaim{claims(vocab.InfiniBandClaim)},
			[]draKind{infinibandKind},
			[]string{"infiniband-c-training"},
			map[string]string{vocab.InfiniBandClaim: "infiniband-c-training"}},
		{"an unknown claim is the user's and stays as written",
			[][]corev1.PodResourceClaim{claims("my-gpu-claim")},
			nil, nil, map[string]string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var pods []*corev1.PodSpec
			for _, c := range tc.pods {
				pods = append(pods, &corev1.PodSpec{ResourceClaims: c})
			}
			found := rewriteClaims(pods, "c", "training")
			var kinds []draKind
			var names []string
			for _, f := range found {
				kinds, names = append(kinds, f.kind), append(names, f.name)
			}
			require.Equal(t, tc.wantKinds, kinds)
			require.Equal(t, tc.wantNames, names)
			for _, p := range pods {
				for _, rc := range p.ResourceClaims {
					if want, known := tc.template[rc.Name]; known {
						require.Equal(t, want, *rc.ResourceClaimTemplateName, rc.Name)
						require.Nil(t, rc.ResourceClaimName, "a template claim names no existing claim")
					} else {
						require.Equal(t, "hand-made", *rc.ResourceClaimName, rc.Name)
					}
				}
			}
		})
	}
}

// A cluster named after its role is not given the role twice.
func TestDRANamesDoNotRepeatTheRole(t *testing.T) {
	require.Equal(t, "compute-domain-alice-ultra-pipeclean-training", computeDomainName("alice-ultra-pipeclean-training", "training"))
	require.Equal(t, "roce-alice-ultra-pipeclean-training", roceName("alice-ultra-pipeclean-training", "training"))
	require.Equal(t, "compute-domain-alice-c-training", computeDomainName("alice-c", "training"))
	require.Equal(t, "infiniband-team-training-x-training", infinibandName("team-training-x", "training"), "only a suffix counts")
}
