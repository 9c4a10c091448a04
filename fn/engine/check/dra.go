package check

import (
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/vocab"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/profile"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/diag"
)

// draSettings: a claim whose request has no default must find its device
// class and count in the profile. An InfiniBand class is the name the
// cluster's DRA driver gives its devices; another cluster's (as nrl-k8s
// does with RoCE's roce.networking.k8s.aws) renders a claim no driver
// satisfies, and the pods stay Pending with no error anywhere.
func draSettings(ds *diag.List, f string, in *profile.Infra, rc profile.RoleCluster) {
	spec := rc.Cluster.Spec
	if spec == nil {
		return
	}
	claims := false
	for i := range spec.WorkerGroupSpecs {
		for _, c := range spec.WorkerGroupSpecs[i].Template.Spec.ResourceClaims {
			claims = claims || c.Name == vocab.InfiniBandClaim
		}
	}
	if !claims {
		return
	}
	ib := in.EffectiveDRA(rc.Cluster).InfiniBand
	if ib.Class == "" {
		ds.Errorf(f, "dra.infiniband.deviceClassName", "is unset but kuberay.%s's workers claim %s; expected the DeviceClass of the cluster's InfiniBand DRA driver (dra.infiniband or kuberay.%s.dra.infiniband): it has no default", rc.Role, vocab.InfiniBandClaim, rc.Role)
	}
	if ib.Count == 0 {
		ds.Errorf(f, "dra.infiniband.count", "is unset but kuberay.%s's workers claim %s; expected the InfiniBand devices per worker pod (dra.infiniband or kuberay.%s.dra.infiniband): it has no default", rc.Role, vocab.InfiniBandClaim, rc.Role)
	}
}
