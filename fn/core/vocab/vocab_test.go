package vocab_test

import (
	"strings"
	"testing"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	rayutils "github.com/ray-project/kuberay/ray-operator/controllers/ray/utils"
	"github.com/stretchr/testify/assert"
	resourcev1 "k8s.io/api/resource/v1"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/vocab"
)

// TestUpstreamNames ties each name that mirrors an upstream constant to
// that constant in the pinned module (KubeRay v1.5.0, k8s.io/api), so a
// bump that renames one fails here. Imported by this test alone: the
// product's binaries link nothing new. Kueue's names are not tied: its
// module requires KubeRay v1.6.0 and stays out of this module's graph
// (hack/kueue/go.mod); KAI and the ComputeDomain have no Go module here.
func TestUpstreamNames(t *testing.T) {
	for _, tc := range []struct{ ours, upstream string }{
		{vocab.RayGroup, rayv1.GroupVersion.Group},
		{vocab.RayVersion, rayv1.GroupVersion.Version},
		{vocab.RayAPIVersion, rayv1.GroupVersion.String()},
		{vocab.RayIsRayNodeLabel, rayutils.RayNodeLabelKey},
		{vocab.RayIdentifierLabel, rayutils.RayIDLabelKey},
		{vocab.RayClusterLabel, rayutils.RayClusterLabelKey},
		{vocab.RayNodeTypeLabel, rayutils.RayNodeTypeLabelKey},
		{vocab.RayGroupLabel, rayutils.RayNodeGroupLabelKey},
		{vocab.RayHeadGroup, rayutils.RayNodeHeadGroupLabelValue},
		{vocab.NameLabel, rayutils.KubernetesApplicationNameLabelKey},
		{vocab.CreatedByLabel, rayutils.KubernetesCreatedByLabelKey},
		{vocab.RayOriginatedFromCRDLabel, rayutils.RayOriginatedFromCRDLabelKey},
		{vocab.RayOriginatedFromCRNameLabel, rayutils.RayOriginatedFromCRNameLabelKey},
		{vocab.RayFTEnabledAnnotation, rayutils.RayFTEnabledAnnotationKey},
		{vocab.RayExternalStorageNamespaceAnnotation, rayutils.RayExternalStorageNSAnnotationKey},
		{vocab.DRAGroup, resourcev1.GroupName},
		{vocab.DRAVersion, resourcev1.SchemeGroupVersion.Version},
		{vocab.DRAAPIVersion, resourcev1.SchemeGroupVersion.String()},
	} {
		assert.Equal(t, tc.upstream, tc.ours)
	}
}

// TestOurNames: our labels and annotations are under our API group.
func TestOurNames(t *testing.T) {
	for _, k := range []string{vocab.RunIDLabel, vocab.JobLabel, vocab.StateAnnotation, vocab.FilesDirAnnotation, vocab.FileAnnotation, vocab.RunFilesAnnotation} {
		assert.True(t, strings.HasPrefix(k, vocab.Group+"/"), k)
	}
}
